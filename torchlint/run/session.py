"""One run of the command, once the options are resolved: files, stdin or --add-noqa.

``run_files`` checks or fixes files and hands each report to the reporter of
``--output-format``; ``run_stdin`` does the same for source read from stdin
(with ``--fix`` the fixed source is the only thing on stdout);
``run_add_noqa`` appends ``# noqa`` comments. Each returns the exit status.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import signal
import stat
import sys
from dataclasses import replace
from typing import (
    TYPE_CHECKING,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    TextIO,
    Tuple,
)

from torchlint.core.diagnostic import Fix, ParseError, Unsupported
from torchlint.core.noqa import add_noqa
from torchlint.rules.rule import Rule
from torchlint.run.cache import ResultCache, content_key, context_key
from torchlint.run.config import Options
from torchlint.run.files import discover
from torchlint.run.reporters import REPORTERS, Reporter

if TYPE_CHECKING:  # pragma: no cover
    from torchlint.engine.linter import Engine
from torchlint.core.settings import Settings
from torchlint.core.source import SourceError, decode
from torchlint.run.fileio import encode, read_source, write_atomically
from torchlint.run.report import FileReport
from torchlint.run.reporters.style import Style, use_color
from torchlint.run.runner import process_file


class Linter:
    """The engines of one run: one per set of rules (per-file-ignores differ)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.settings = Settings(torch_version=options.torch_version)
        self._engines: Dict[Tuple[str, ...], "Engine"] = {}

    def engine_for(self, path: str) -> "Engine":
        rules = self.options.rules_for(path)
        key = tuple(rule.code for rule in rules)
        if key not in self._engines:
            from torchlint.engine.linter import Engine  # libcst: only once a file needs checking

            self._engines[key] = Engine([_loaded(rule) for rule in rules], self.settings,
                                        honour_noqa=not self.options.ignore_noqa,
                                        report_unused_noqa=self.options.report_unused_noqa)
        return self._engines[key]

    def codes_for(self, path: str) -> List[str]:
        """The codes of the rules that run on ``path`` (what its engine would
        run), known without loading any rule: the result cache's key."""
        version = self.settings.torch_version
        return [rule.code for rule in self.options.rules_for(path) if rule.torch_versions.applies_to(version)]


def _loaded(rule) -> Rule:
    """Options hold the catalog's light ``RuleSpec``s (or, from tests, rules)."""
    return rule if isinstance(rule, Rule) else rule.load()


def run_files(options: Options, linter: Linter, stdout: TextIO, stderr: TextIO) -> int:
    reporter = _reporter(options, stdout)
    status = 0
    reports: List[FileReport] = []
    force = options.is_excluded_with_parents if options.force_exclude else None
    found = list(discover(options.paths or ["."], options.is_excluded, force))
    files = [path for path, error in found if not error]
    produced = _process_all(files, options, linter, reporter.wants_previews)
    for path, error in found:
        if error:
            print(f"torchlint: error: {path}: {error}", file=stderr)
            reports.append(FileReport(path, errors=[error]))
            status = 2
            continue
        report = next(produced)
        reports.append(report)
        status = max(status, _print_problems(report, stderr))
        if options.diff:
            stdout.write(report.diff)
        else:
            reporter.report_file(report)
    if options.diff:
        changed = any(report.diff for report in reports)
        _diff_summary(reports, options, stderr)
        return status or (1 if changed else 0)
    reporter.finish(reports)
    return status or _exit_status(options, reports)


def _diff_summary(reports: Sequence[FileReport], options: Options, stderr: TextIO) -> None:
    """What --diff would fix, on stderr: stdout stays a clean patch."""
    if options.quiet:
        return
    fixes = sum(report.fixed for report in reports if report.diff)
    files = sum(1 for report in reports if report.diff)
    if fixes:
        print(f"Would fix {fixes} problem{'' if fixes == 1 else 's'} in {files} file{'' if files == 1 else 's'}.",
              file=stderr)
    else:
        print("No fixes to apply.", file=stderr)


# The linter workers use, set before the pool forks so they inherit it.
_WORKER_STATE: Optional[Tuple[Options, Linter, bool]] = None
# Workers start only for at least this much source to analyse. Measured on
# a 2-core machine: one process checks about 1.6 MB of source per CPU second
# (pyro-ppl-0.3.0, allennlp-0.8.0), starting and stopping a pool of forked
# workers costs 0.04-0.07 s, and each report travels back pickled; below
# about 0.25 MB two workers cannot win, and on a busy machine they often
# lose up to several times that. 1 MB (about 0.6 s of work) keeps the pool's
# cost under a fifth of what it can save.
PARALLEL_MIN_BYTES = 1_000_000


def _process_all(files: Sequence[str], options: Options, linter: Linter, previews: bool) -> Iterator[FileReport]:
    """Reports for ``files`` in their order: from the cache, or computed (in
    worker processes when there are enough files)."""
    cache = _cache_for(options, previews)
    keys: Dict[str, str] = {}
    reports: Dict[str, FileReport] = {}
    if cache is not None:
        for path in files:
            key, cached = _cache_lookup(cache, path, options, linter)
            if key is not None:
                keys[path] = key
            if cached is not None:
                reports[path] = cached
    missing = [path for path in files if path not in reports]
    for path, report in zip(missing, _compute(missing, options, linter, previews)):
        # Only clean results are cached: errors, warnings and skipped files
        # must be reported again on every run.
        if cache is not None and path in keys and not (report.errors or report.warnings or report.skipped):
            cache.put(path, keys[path], report.diagnostics)
        reports[path] = report
    if cache is not None:
        cache.save()
    return iter(reports[path] for path in files)


def _compute(files: Sequence[str], options: Options, linter: Linter, previews: bool) -> Iterator[FileReport]:
    global _WORKER_STATE
    if options.jobs <= 1 or len(files) < 2 or not _can_fork() or not _worth_workers(files):
        return (lean(process_file(path, linter.engine_for(path), options, previews=previews)) for path in files)
    # Load libcst and the rules once, here: the forked workers share them
    # instead of each paying the import.
    linter.engine_for(files[0])
    _WORKER_STATE = (options, linter, previews)
    pool = multiprocessing.get_context("fork").Pool(min(options.jobs, len(files)), initializer=_quiet_worker)
    chunk = max(1, min(16, len(files) // (options.jobs * 8)))

    def ordered() -> Iterator[FileReport]:
        try:
            yield from pool.imap(_work, files, chunksize=chunk)  # imap keeps the input order
        finally:
            pool.terminate()

    return ordered()


def _worth_workers(files: Sequence[str]) -> bool:
    """Is there enough source to analyse for worker processes to pay?"""
    total = 0
    for path in files:
        try:
            total += os.stat(path).st_size
        except OSError:
            continue  # processing will report it
        if total >= PARALLEL_MIN_BYTES:
            return True
    return False


def _quiet_worker() -> None:
    """Workers leave interrupts to the parent, which stops them, and print
    nothing: when the parent is killed (SIGTERM) mid-run, a worker's failing
    attempt to send a result back must not end in a traceback on the user's
    terminal. Problems with files travel in the reports, not on stderr."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stderr = open(os.devnull, "w")


def _work(path: str) -> FileReport:
    assert _WORKER_STATE is not None
    options, linter, previews = _WORKER_STATE
    return portable(lean(process_file(path, linter.engine_for(path), options, previews=previews)))


def lean(report: FileReport) -> FileReport:
    """The report without the checked text when nothing will be shown from
    it (no finding): reports are kept until the run ends, and a run over a
    large tree must not hold every file's text (nor send it back from workers)."""
    if not report.diagnostics:
        report.source = None
    return report


def portable(report: FileReport) -> FileReport:
    """The report without live fix objects (they hold parse trees and
    closures), keeping whether each finding has a fix and how safe it is."""
    report.diagnostics = [
        replace(d, fix=None if d.fix is None else Fix((), safe=d.fix.safe)) for d in report.diagnostics
    ]
    return report


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _cache_for(options: Options, previews: bool) -> Optional[ResultCache]:
    # Only plain checking is cached: fixing works from the file, and previews
    # need the fixes themselves.
    if options.cache_dir is None or options.fix or options.diff or previews or options.ignore_noqa \
            or options.report_unused_noqa:
        return None
    return ResultCache(options.cache_dir)


def _cache_lookup(
    cache: ResultCache, path: str, options: Options, linter: Linter
) -> Tuple[Optional[str], Optional[FileReport]]:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None, None  # a FIFO or device can be read only once: by the processing
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None, None  # processing will report it
    key = content_key(data, context_key(linter.codes_for(path), linter.settings))
    diagnostics = cache.get(path, key)
    if diagnostics is None:
        return key, None
    report = FileReport(path, diagnostics=diagnostics)
    return key, report


def _reporter(options: Options, stream: TextIO) -> Reporter:
    cls = REPORTERS[options.output_format]
    if options.quiet >= 2:  # --silent: the exit status tells
        stream = io.StringIO()
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
        _diff_summary([report], options, stderr)
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
            diagnostics = linter.engine_for(path).check(source).diagnostics
            if not diagnostics:
                continue
            text, changed, failures = add_noqa(source, [(d.line, d.code) for d in diagnostics])
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
