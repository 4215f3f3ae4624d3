"""One run of the command, once the options are resolved: files, stdin or --add-noqa.

``run_files`` checks or fixes files and hands each report to the reporter of
``--output-format``; ``run_stdin`` does the same for source read from stdin
(with ``--fix`` the fixed source is the only thing on stdout);
``run_add_noqa`` appends ``# noqa`` comments. Each returns the exit status.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, TextIO, Tuple

from torchlint.config import Options
from torchlint.engine import Engine, ParseError, Unsupported
from torchlint.files import discover
from torchlint.noqa import add_noqa
from torchlint.reporters import REPORTERS, Reporter
from torchlint.reporters.style import Style, use_color
from torchlint.runner import FileReport, process_file
from torchlint.settings import Settings
from torchlint.source import SourceError, decode, encode, read_source, write_atomically


class Linter:
    """The engines of one run: one per set of rules (per-file-ignores differ)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.settings = Settings(torch_version=options.torch_version)
        self._engines: Dict[Tuple[str, ...], Engine] = {}

    def engine_for(self, path: str) -> Engine:
        rules = self.options.rules_for(path)
        key = tuple(rule.code for rule in rules)
        if key not in self._engines:
            self._engines[key] = Engine(rules, self.settings)
        return self._engines[key]


def run_files(options: Options, linter: Linter, stdout: TextIO, stderr: TextIO) -> int:
    reporter = _reporter(options, stdout)
    status = 0
    reports: List[FileReport] = []
    force = options.is_excluded_with_parents if options.force_exclude else None
    for path, error in discover(options.paths or ["."], options.is_excluded, force):
        if error:
            print(f"torchlint: error: {path}: {error}", file=stderr)
            reports.append(FileReport(path, errors=[error]))
            status = 2
            continue
        report = process_file(path, linter.engine_for(path), options, previews=reporter.wants_previews)
        reports.append(report)
        status = max(status, _print_problems(report, stderr))
        if options.diff:
            stdout.write(report.diff)
        else:
            reporter.report_file(report)
    if options.diff:
        changed = any(report.diff for report in reports)
        return status or (1 if changed else 0)
    reporter.finish(reports)
    return status or _exit_status(options, reports)


def _reporter(options: Options, stream: TextIO) -> Reporter:
    cls = REPORTERS[options.output_format]
    coloured = cls.name in ("concise", "full") and use_color(stream)
    return cls(stream, options, Style(coloured))


def _print_problems(report: FileReport, stderr: TextIO) -> int:
    for message in report.warnings:
        print(f"torchlint: warning: {message}", file=stderr)
    for message in report.errors:
        print(f"torchlint: error: {message}", file=stderr)
    return 2 if report.errors else 0


def _exit_status(options: Options, reports: Sequence[FileReport]) -> int:
    if options.exit_zero:
        return 0
    if any(report.diagnostics for report in reports):
        return 1
    if options.exit_non_zero_on_fix and any(report.fixed for report in reports):
        return 1
    return 0


def run_stdin(options: Options, linter: Linter, stdin, stdout: TextIO, stderr: TextIO) -> int:
    """Lint or fix stdin, reported as --stdin-filename (or "-")."""
    path = options.stdin_filename or "-"
    data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode("utf-8")
    fixing = options.fix and not options.diff  # --diff wins, as for files
    out_bytes = getattr(stdout, "buffer", None)

    def echo(text_bytes: bytes) -> None:
        # With --fix, stdout carries the (fixed) source and nothing else.
        stdout.flush()
        if out_bytes is not None:
            out_bytes.write(text_bytes)
            out_bytes.flush()
        else:
            stdout.write(text_bytes.decode("utf-8", "replace"))

    if options.force_exclude and options.stdin_filename and options.is_excluded_with_parents(path):
        if fixing:
            echo(data)
        return 0
    try:
        source = decode(data)
    except SourceError as exc:
        print(f"torchlint: error: {path}: {exc}", file=stderr)
        if fixing:
            echo(data)
        return 2
    report = process_file(path, linter.engine_for(path), options, text=source,
                          previews=REPORTERS[options.output_format].wants_previews)
    status = _print_problems(report, stderr)
    if fixing:
        try:
            echo(encode(source, report.fixed_source) if report.fixed_source is not None else data)
        except SourceError as exc:
            print(f"torchlint: error: {path}: {exc}", file=stderr)
            echo(data)
            return 2
        reporter = _reporter(options, stderr)
    elif options.diff:
        stdout.write(report.diff)
        return status or (1 if report.diff else 0)
    else:
        reporter = _reporter(options, stdout)
    reporter.report_file(report)
    reporter.finish([report])
    return status or _exit_status(options, [report])


def run_add_noqa(options: Options, linter: Linter, stdout: TextIO, stderr: TextIO) -> int:
    status = 0
    added = files = 0
    force = options.is_excluded_with_parents if options.force_exclude else None
    for path, error in discover(options.paths or ["."], options.is_excluded, force):
        if error:
            print(f"torchlint: error: {path}: {error}", file=stderr)
            status = 2
            continue
        try:
            source = read_source(path)
            diagnostics = linter.engine_for(path).check(source.text).diagnostics
            if not diagnostics:
                continue
            text, changed, failures = add_noqa(source.text, [(d.line, d.code) for d in diagnostics])
            for failure in failures:
                print(f"torchlint: warning: {path}:{failure}", file=stderr)
            if changed:
                write_atomically(path, encode(source, text))
                added += changed
                files += 1
        except Unsupported as exc:
            print(f"torchlint: warning: {path}:{exc.line}:{exc.column + 1}: skipped: {exc.message}", file=stderr)
        except ParseError as exc:
            print(f"torchlint: error: {path}:{exc.line}:{exc.column + 1}: cannot parse: {exc.message}", file=stderr)
            status = 2
        except SourceError as exc:
            print(f"torchlint: error: {path}: {exc}", file=stderr)
            status = 2
    lines = f"{added} line{'' if added == 1 else 's'}"
    print(f"Added noqa comments to {lines} in {files} file{'' if files == 1 else 's'}.", file=stdout)
    return status
