"""One run of the command, once the options are resolved: files, stdin or --add-noqa.

``run_files`` checks or fixes files and hands each report to the reporter of
``--output-format``; ``run_stdin`` does the same for source read from stdin
(with ``--fix`` the fixed source is the only thing on stdout);
``run_add_noqa`` appends ``# noqa`` comments. Each returns the exit status.
"""

from __future__ import annotations

import gc
import io
import multiprocessing
import os
import signal
import stat
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import (
    TYPE_CHECKING,
    Dict,
    Iterator,
    List,
    MutableSequence,
    Optional,
    Sequence,
    TextIO,
    Tuple,
)

from torchlint.core.dependencies import content_digest
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
from torchlint.core.source import SourceError, decode, no_cycle_collection
from torchlint.run.fileio import (
    CheckedTree,
    OutsideTree,
    current_digest,
    encode,
    read_source,
    refuse_long_lines,
    remove_stale_temporaries,
    write_atomically,
)
from torchlint.run.notebook import is_notebook, process_notebook
from torchlint.run.report import FileReport
from torchlint.run.reporters.style import Style, use_color
from torchlint.run.runner import process_file


class Linter:
    """The engines of one run: one per set of rules (per-file-ignores differ)."""

    def __init__(self, options: Options, keep_summaries: bool = True) -> None:
        self.options = options
        self.settings = Settings(torch_version=options.torch_version,
                                 target_torch_version=options.target_torch_version,
                                 least_torch_version=options.least_torch_version,
                                 floor_from_code=options.floor_from_code)
        self._engines: Dict[Tuple[str, ...], "Engine"] = {}
        self._project = None
        # The project model's module summaries go to the cache directory
        # (``run/summaries.py``) when checking files; not when fixing them
        # (the files change under it), nor for a language server's buffers.
        self._keep_summaries = keep_summaries and not (options.fix or options.diff)

    @property
    def project(self):
        """The project model of this run: every engine shares it (``analysis/project.py``)."""
        if self._project is None:
            from torchlint.analysis.project import Project
            from torchlint.analysis.summaries import SummaryStore
            from torchlint.run.project_files import FileFinder, project_roots
            from torchlint.run.summaries import DiskSummaries

            root = self.options.project_root or os.getcwd()
            finder = FileFinder(project_roots(root, self.options.paths))
            cache = self.options.cache_dir
            store = DiskSummaries(cache, self.settings) if cache and self._keep_summaries else SummaryStore()
            self._project = Project(finder, self.settings, store)
        return self._project

    def engine_for(self, path: str) -> "Engine":
        rules = self.options.rules_for(path)
        key = tuple(rule.code for rule in rules)
        if key not in self._engines:
            from torchlint.engine.linter import Engine  # libcst: only once a file needs checking

            self._engines[key] = Engine([_loaded(rule) for rule in rules], self.settings,
                                        honour_noqa=not self.options.ignore_noqa,
                                        report_unused_noqa=self.options.report_unused_noqa,
                                        project=self.project, fix_policy=self.options.fix_policy)
        return self._engines[key]

    def digest_of(self, path: str) -> Optional[str]:
        """The digest of ``path``'s bytes now (asked once per run), None if unreadable."""
        digests = self.__dict__.setdefault("_digests", {})
        if path not in digests:
            digests[path] = current_digest(path)
        return digests[path]

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
    if options.fix and not options.diff:
        _remove_leftovers(files)
    produced = _process_all(files, options, linter, reporter.wants_previews)
    for path, error in found:
        if error:
            print(f"torchlint: error: {path}: {error}", file=stderr)
            reports.append(FileReport(path, errors=[error]))
            status = 2
            continue
        report = next(produced)
        status = max(status, _print_problems(report, stderr))
        if options.diff:
            stdout.write(report.diff)
        else:
            reporter.report_file(report)
        reports.append(reported(report))
    for _ in produced:  # none left: runs it to its end, where it saves the result cache
        pass
    if options.diff:
        changed = any(report.diff for report in reports)
        _diff_summary(reports, options, stderr)
        return status or (1 if changed else 0)
    reporter.finish(reports)
    return status or _exit_status(options, reports)


def reported(report: FileReport) -> FileReport:
    """What the run keeps of a report once the reporter has had it: what its
    summary, statistics and structured formats still read (codes, positions,
    messages, how safe each fix is, counts, errors), not the checked text, the
    fix previews nor the live fixes, which hold the file's parse tree. So
    a run's memory is bounded by its largest file, not by all its findings."""
    report.source = None
    report.previews = []
    report.cell_sources = {}
    return portable(report)


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


# Workers start only for at least this much source to analyse. Measured on
# a 2-core machine: one process checks about 1.6 MB of source per CPU second
# (pyro-ppl-0.3.0, allennlp-0.8.0), starting and stopping a pool of forked
# workers costs 0.04-0.07 s, and each report travels back pickled; below
# about 0.25 MB two workers cannot win, and on a busy machine they often
# lose up to several times that. 1 MB (about 0.6 s of work) keeps the pool's
# cost under a fifth of what it can save.
PARALLEL_MIN_BYTES = 1_000_000


# What the workers use, set before they are forked so they inherit it: the
# run's options, linter and previews, its files, and a byte per file in
# shared memory (NOT_STARTED, WORKING, DONE) that tells, when a worker dies,
# which file it was working on.
_WORKER_STATE: Optional[Tuple[Options, Linter, bool]] = None
_WORKER_FILES: Sequence[str] = ()
_WORKER_PROGRESS: Optional[MutableSequence[int]] = None
NOT_STARTED, WORKING, DONE = 0, 1, 2


def _process_all(files: Sequence[str], options: Options, linter: Linter, previews: bool) -> Iterator[FileReport]:
    """Reports for ``files`` in their order: from the cache, or computed (in
    worker processes when there are enough files)."""
    cache = _cache_for(options, previews)
    cached: Dict[str, FileReport] = {}
    if cache is not None:
        for path in files:
            found = _cache_lookup(cache, path, linter)
            if found is not None:
                cached[path] = found
    missing = [path for path in files if path not in cached]
    computed = _compute(missing, options, linter, previews)  # in the order of ``missing``
    # Handed out as each is computed, not all at the end: the caller reports a
    # file and keeps only a small record of it (``reported``).
    for path in files:
        report = cached.pop(path, None)
        if report is None:
            report = next(computed)
            # Only clean results are cached: errors, warnings and skipped files
            # must be reported again on every run. The key hashes the bytes the
            # findings came from (the file may have changed since the lookup).
            if (cache is not None and report.content_digest is not None
                    and not (report.errors or report.warnings or report.skipped)):
                cache.put(path, content_key(report.content_digest, _context(linter, path)), report.diagnostics,
                          report.dependencies)
        yield report
    if cache is not None:
        cache.save()


def _compute(files: Sequence[str], options: Options, linter: Linter, previews: bool) -> Iterator[FileReport]:
    global _WORKER_STATE
    if not files:
        return iter(())
    # Load libcst and the rules once, here: forked workers share them
    # instead of each paying the import.
    linter.engine_for(files[0])
    _settle_collector()
    if options.jobs <= 1 or len(files) < 2 or not _can_fork() or not _worth_workers(files):
        return (_checked(path, options, linter, previews) for path in files)
    _WORKER_STATE = (options, linter, previews)
    return _in_workers(files, options.jobs)


# Collect cyclic garbage after 20,000 new container objects, not CPython's
# 700, and the older generations less often too: checking a file allocates
# tens of thousands (trees, scopes, bindings), and the defaults made the
# collector walk them again and again. The figures: bench/RESULTS.md.
COLLECTION_THRESHOLDS = (20_000, 50, 50)


def _settle_collector() -> None:
    """Keep the garbage collector from re-walking what lives all run long.

    What is loaded by now (libcst, the rules, the torch tables) stays until
    the run ends: ``gc.freeze`` takes it out of every later collection (and
    forked workers then never write to its pages), and a higher threshold
    collects the short-lived cycles of the analyses less often.
    """
    gc.freeze()
    gc.set_threshold(*COLLECTION_THRESHOLDS)


def _in_workers(files: Sequence[str], jobs: int) -> Iterator[FileReport]:
    """Reports for ``files`` in their order, computed by worker processes.

    A worker that dies (a segfault in a native parser, the OOM killer)
    breaks the pool: the files it was working on are then checked again one
    by one, each in a process of its own, where a second death is reported
    as an error for that file; the pool restarts for the files left. So a
    dead worker costs a few processes, never the run (a plain
    ``multiprocessing.Pool`` waits forever for the dead worker's result).
    """
    global _WORKER_FILES, _WORKER_PROGRESS
    context = multiprocessing.get_context("fork")
    reports: Dict[int, FileReport] = {}  # computed, not yet handed out
    handed = 0  # files[:handed] are handed out
    while handed < len(files):
        todo = [index for index in range(handed, len(files)) if index not in reports]
        _WORKER_FILES, _WORKER_PROGRESS = files, context.RawArray("b", len(files))
        progress = _WORKER_PROGRESS
        chunk = max(1, min(16, len(todo) // (jobs * 8)))
        executor = ProcessPoolExecutor(min(jobs, len(todo)), mp_context=context, initializer=_quiet_worker,
                                       initargs=(os.getpid(),))
        try:
            for index, report in zip(todo, executor.map(_work, todo, chunksize=chunk)):  # map keeps the order
                reports[index] = report
                while handed in reports:
                    yield reports.pop(handed)
                    handed += 1
        except BrokenProcessPool:
            suspects = [index for index in todo if progress[index] == WORKING and index not in reports]
            if not suspects:
                suspects = [handed]  # killed between files: check the next one alone, so the run moves on
            for index in suspects:
                reports[index] = _alone(files[index])
        finally:
            _stop(executor)
        while handed in reports:
            yield reports.pop(handed)
            handed += 1


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


def _stop(executor: ProcessPoolExecutor) -> None:
    """Shut the pool down now: on an interrupt or a closed output, workers
    must not go on checking (or fixing) files nobody waits for."""
    # Taken before ``shutdown``, which drops the executor's references to both.
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    # The pool's manager thread closes its wake-up pipe once it sees the
    # workers gone; left running, it can close the pipe while the
    # interpreter's exit writes to it (a CPython 3.11 race) and Python
    # prints "OSError: Bad file descriptor" after the report.
    if manager is not None:
        manager.join(timeout=10)


def _alone(path: str) -> FileReport:
    """``path``'s report from a process of its own; an error report if that process dies too."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_work_and_send, args=(path, sender))
    process.start()
    sender.close()
    try:
        report = receiver.recv()
    except EOFError:
        report = None
    finally:
        receiver.close()
        process.join()
    if report is None:
        return FileReport(path, errors=[f"{path}: not checked: the process checking it {_death(process.exitcode)}"])
    return report


def _work_and_send(path: str, sender) -> None:
    _quiet_worker(os.getppid())
    assert _WORKER_STATE is not None
    options, linter, previews = _WORKER_STATE
    sender.send(portable(_checked(path, options, linter, previews)))
    sender.close()


def _death(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by {name}"
    return f"ended with exit status {exitcode} without a result"


def _quiet_worker(parent: int) -> None:
    """Workers leave interrupts to the parent, which stops them, and print
    nothing: when the parent is killed (SIGTERM) mid-run, a worker's failing
    attempt to send a result back must not end in a traceback on the user's
    terminal. Problems with files travel in the reports, not on stderr.

    A worker whose parent is gone ends too (with SIGTERM, which waits while
    it replaces a file): it would wait for work forever, holding the
    parent's stdout open."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stderr = open(os.devnull, "w")
    threading.Thread(target=_end_with, args=(parent,), daemon=True).start()


def _end_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.2)
    os.kill(os.getpid(), signal.SIGTERM)


def _work(index: int) -> FileReport:
    assert _WORKER_STATE is not None and _WORKER_PROGRESS is not None
    options, linter, previews = _WORKER_STATE
    path = _WORKER_FILES[index]
    _WORKER_PROGRESS[index] = WORKING
    report = portable(_checked(path, options, linter, previews))
    _WORKER_PROGRESS[index] = DONE
    return report


def _checked(path: str, options: Options, linter: Linter, previews: bool) -> FileReport:
    """``path``'s lean report, with no cyclic collection while it is checked.

    Most of what checking a file allocates (its trees, scopes, bindings)
    dies when the check ends; a collection in the middle would walk all of
    it and free nothing. Afterwards the first collection walks only what
    is left: the check's cyclic garbage and what the run keeps."""
    with no_cycle_collection():
        return lean(process_file(path, linter.engine_for(path), options, previews=previews))


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


def _remove_leftovers(files: Sequence[str]) -> None:
    """Temporary files a killed ``--fix`` left beside the files about to be fixed."""
    remove_stale_temporaries({os.path.dirname(os.path.realpath(path)) for path in files})


def _cache_for(options: Options, previews: bool) -> Optional[ResultCache]:
    # Only plain checking is cached: fixing works from the file, and previews
    # need the fixes themselves.
    if options.cache_dir is None or options.fix or options.diff or previews or options.ignore_noqa \
            or options.report_unused_noqa:
        return None
    return ResultCache(options.cache_dir)


def _context(linter: Linter, path: str) -> str:
    # The fix policy decides which cached findings carry a fix, and how safe.
    policy = linter.options.fix_policy
    return context_key(linter.codes_for(path), linter.settings) + ("" if policy.is_default else repr(policy))


def _cache_lookup(cache: ResultCache, path: str, linter: Linter) -> Optional[FileReport]:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a FIFO or device can be read only once: by the processing
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None  # processing will report it
    digest = content_digest(data)
    diagnostics = cache.get(path, content_key(digest, _context(linter, path)), linter.codes_for(path), len(data),
                            linter.digest_of)
    if diagnostics is None:
        return None
    return FileReport(path, diagnostics=diagnostics, content_digest=digest)


def _reporter(options: Options, stream: TextIO) -> Reporter:
    cls = REPORTERS[options.output_format]
    if options.quiet >= 2 or (options.fix_only and cls.name not in ("concise", "full")):
        # --silent: the exit status tells; --fix-only reports no findings, and a
        # structured format has nothing else to say.
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
    if options.fix_only:  # what remains is not reported, and does not fail the run
        return 1 if options.exit_non_zero_on_fix and any(report.fixed for report in reports) else 0
    if any(report.diagnostics for report in reports):
        return 1
    if options.exit_non_zero_on_fix and any(report.fixed for report in reports):
        return 1
    return 0


def run_stdin(options: Options, linter: Linter, stdin, stdout: TextIO, stderr: TextIO) -> int:
    """Lint or fix stdin, reported as --stdin-filename (or "-")."""
    path = options.stdin_filename or "-"
    data = _read_stdin(stdin)
    if data is None:
        print("torchlint: error: cannot read stdin: it is closed", file=stderr)
        return 2
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
    if is_notebook(path):
        report = process_notebook(path, linter.engine_for(path), options, data=data)
        fixed = None if report.fixed_source is None else report.fixed_source.encode("utf-8")
    else:
        try:
            source = decode(data)
            refuse_long_lines(source)
        except SourceError as exc:
            print(f"torchlint: error: {path}: {exc}", file=stderr)
            if fixing:
                echo(data)
            return 2
        report = process_file(path, linter.engine_for(path), options, text=source,
                              previews=REPORTERS[options.output_format].wants_previews)
        fixed = None
    status = _print_problems(report, stderr)
    if fixing:
        try:
            if fixed is None and report.fixed_source is not None:
                fixed = encode(source, report.fixed_source)
            echo(fixed if fixed is not None else data)
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


def _read_stdin(stdin) -> Optional[bytes]:
    """All of stdin; None when there is none to read (``torchlint - <&-``:
    Python then has no ``sys.stdin`` at all)."""
    if stdin is None:
        return None
    try:
        return stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode("utf-8")
    except (OSError, ValueError):  # a closed descriptor or file object
        return None


def run_add_noqa(options: Options, linter: Linter, stdout: TextIO, stderr: TextIO) -> int:
    status = 0
    added = files = 0
    force = options.is_excluded_with_parents if options.force_exclude else None
    found = list(discover(options.paths or ["."], options.is_excluded, force))
    _remove_leftovers([path for path, error in found if not error])
    tree = CheckedTree(options.paths or ["."])
    for path, error in found:
        if error:
            print(f"torchlint: error: {path}: {error}", file=stderr)
            status = 2
            continue
        try:
            source = read_source(path)
            diagnostics = linter.engine_for(path).check(source).diagnostics
            if not diagnostics:
                continue
            text, changed, failures = add_noqa(source, [(d.line, d.code) for d in diagnostics],
                                               options.add_noqa_reason)
            for failure in failures:
                print(f"torchlint: warning: {path}:{failure}", file=stderr)
            if changed:
                write_atomically(path, encode(source, text), expected=source.data, identity=source.identity,
                                 tree=tree)
                added += changed
                files += 1
        except Unsupported as exc:
            print(f"torchlint: warning: {path}:{exc.line}:{exc.column + 1}: skipped: {exc.message}", file=stderr)
        except ParseError as exc:
            print(f"torchlint: error: {path}:{exc.line}:{exc.column + 1}: cannot parse: {exc.message}", file=stderr)
            status = 2
        except OutsideTree as exc:
            print(f"torchlint: warning: {path}: {exc}", file=stderr)
        except SourceError as exc:
            print(f"torchlint: error: {path}: {exc}", file=stderr)
            status = 2
    lines = f"{added} line{'' if added == 1 else 's'}"
    print(f"Added noqa comments to {lines} in {files} file{'' if files == 1 else 's'}.", file=stdout)
    return status
