"""The ``torchlint`` command.

Exit status: 0 when nothing is left to report (with ``--fix-only``, whatever
remains), 1 when findings remain (or
``--diff`` has changes to show, or ``--exit-non-zero-on-fix`` and something
was fixed), 2 on usage and configuration errors and on files that could not
be read, decoded, parsed or written; other files are still checked.
``--exit-zero`` turns 1 into 0.

The options come from the command line over the configuration file
(``torchlint.run.config``); ``torchlint.run.session`` runs them, and output goes
through one reporter per ``--output-format`` (``torchlint.run.reporters``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional, Sequence, TextIO

from torchlint import __version__
from torchlint.core.noqa import check_noqa_reason
from torchlint.core.settings import SettingsError
from torchlint.knowledge.deprecations import NEWEST_RELEASE
from torchlint.rules import rule_specs
from torchlint.run.config import ConfigError, resolve
from torchlint.run.reporters import REPORTERS
from torchlint.run.reporters.escaping import never_fails
from torchlint.run.selection import SelectionError
from torchlint.run.session import Linter, run_add_noqa, run_files, run_stdin
from torchlint.run.show import show_files, show_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchlint",
        description="Find and fix deprecated and risky PyTorch code.",
        epilog=(
            "`torchlint check [PATH ...]` is the same as `torchlint [PATH ...]`. "
            "`torchlint rule CODE` prints a rule's documentation; `torchlint rule --all` lists the rules. "
            "`torchlint server` runs the language server for editors. "
            "To check a file or folder named `rule`, `check` or `server`, run `torchlint ./rule`."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to check (default: .); - reads stdin")
    fixing = parser.add_argument_group("fixing")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    fixing.add_argument("--fix-only", action="store_const", const=True, default=None,
                        help="apply fixes like --fix, but report nothing that remains and exit 0 for it (errors "
                             "still exit 2; --exit-non-zero-on-fix exits 1 when something was fixed); "
                             "also the fix-only setting")
    fixing.add_argument("--no-fix-only", dest="fix_only", action="store_const", const=False,
                        help="report what remains even when the configuration sets fix-only (overrides it)")
    fixing.add_argument(
        "--unsafe-fixes", action="store_const", const=True, default=None,
        help="with --fix or --diff, also apply fixes that change behaviour",
    )
    fixing.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_const", const=False,
                        help="do not apply unsafe fixes (overrides the configuration)")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixing.add_argument("--show-fixes", action="store_true", help="after --fix, list the fixes applied to each file")
    fixing.add_argument("--ignore-noqa", action="store_true", help="report findings even on lines with `# noqa`")
    fixing.add_argument("--report-unused-noqa", action="store_true",
                        help="report `# noqa: TL...` codes that suppress nothing (as TL001)")
    fixing.add_argument("--add-noqa", action="store_true",
                        help="append `# noqa: CODE` to the line of every finding instead of reporting it; "
                             "--add-noqa=REASON writes `# noqa: CODE REASON`")
    fixing.add_argument("--add-noqa-reason", default="", help=argparse.SUPPRESS)  # from --add-noqa=REASON

    rules = parser.add_argument_group("rule selection")
    rules.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to check (e.g. TL1,TL201); opt-in rules run only when named by full code")
    rules.add_argument("--extend-select", metavar="CODES", help="codes or prefixes to check on top of --select")
    rules.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes to skip")
    rules.add_argument("--fixable", metavar="CODES",
                       help="codes or prefixes whose fixes may be applied (default: all); replaces the configuration's")
    rules.add_argument("--unfixable", metavar="CODES",
                       help="codes or prefixes reported without their fix, never fixed")
    rules.add_argument("--extend-fixable", metavar="CODES", help="codes or prefixes to consider fixable on top of --fixable")
    rules.add_argument("--per-file-ignores", metavar="PATTERN:CODES",
                       help="codes to skip in matching files, flake8 style: 'tests/*:TL2 legacy.py:TL101'")
    rules.add_argument(
        "--torch-version", metavar="X.Y",
        help="oldest torch the code must run on; advice that does not apply to it is skipped (default: the "
             "torch-version setting, else the lowest torch the project's metadata requires: pyproject.toml, "
             "setup.cfg, setup.py, requirements*.txt; else no constraint). --show-settings says which applied",
    )
    rules.add_argument(
        "--target-torch-version", metavar="X.Y",
        help="torch the code moves to: what is removed, deprecated or no longer deprecated there decides "
             f"TL108/TL109 (default: the newest release torchlint knows, {NEWEST_RELEASE})",
    )

    files = parser.add_argument_group("files")
    files.add_argument("--exclude", metavar="PATTERNS", help="comma-separated globs to skip, replacing the defaults")
    files.add_argument("--extend-exclude", metavar="PATTERNS", help="globs to skip on top of --exclude")
    files.add_argument("--force-exclude", action="store_const", const=True, default=None,
                       help="apply the exclusions to paths named on the command line too (for pre-commit)")
    files.add_argument("--no-force-exclude", dest="force_exclude", action="store_const", const=False,
                       help=argparse.SUPPRESS)
    files.add_argument("--respect-gitignore", action="store_const", const=True, default=None,
                       help=argparse.SUPPRESS)
    files.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_const", const=False,
                       help="also search folders and files git ignores (default: skip them; files named on the "
                            "command line are always checked)")
    files.add_argument("--stdin-filename", metavar="PATH",
                       help="read the source from stdin and report it as PATH (config and per-file-ignores apply "
                            "to PATH); with --fix, the fixed source is written to stdout")

    config = parser.add_argument_group("configuration")
    config.add_argument("--config", metavar="PATH",
                        help="read options from this pyproject.toml / setup.cfg / *.toml instead of searching")
    config.add_argument("--isolated", action="store_true", help="ignore all configuration files")

    output = parser.add_argument_group("output")
    output.add_argument("--output-format", choices=sorted(REPORTERS), default="concise",
                        help="concise (default: path:line:col: CODE message), full (with source and fix), "
                             "json, sarif, github (workflow annotations), gitlab (Code Quality), junit, rdjson (reviewdog) "
                             "or pylint")
    output.add_argument("--statistics", action="store_true", help="show the number of findings per code instead")
    output.add_argument("--output-file", "-o", metavar="PATH", help="write the report to PATH instead of stdout")
    output.add_argument("-q", "--quiet", action="count", default=0,
                        help="print the findings only, no summary; -qq (or --silent): print nothing, "
                             "only the exit status tells (errors still go to stderr)")
    output.add_argument("--silent", dest="quiet", action="store_const", const=2, help=argparse.SUPPRESS)
    output.add_argument("--show-settings", action="store_true",
                        help="print the resolved settings (configuration file, rules, paths, ...) and exit")
    output.add_argument("--show-files", action="store_true", help="print the files that would be checked and exit")
    output.add_argument("-w", "--watch", action="store_true",
                        help="check again whenever a checked file or the configuration changes (until interrupted)")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    output.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="exit 1 when a fix was applied, even if no findings remain")
    speed = parser.add_argument_group("speed")
    speed.add_argument("-j", "--jobs", type=int, metavar="N",
                       help="worker processes (default: one per core, started only for at least 1 MB of source to analyse); output order does not depend on it")
    speed.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    speed.add_argument("--cache-dir", metavar="DIR",
                       help="where check results are cached (default: $TORCHLINT_CACHE_DIR, else .torchlint_cache at the "
                            "project root: the configuration file's folder, else the git work tree, else .)")
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    return parser


def _split_add_noqa(argv: List[str]) -> List[str]:
    """``--add-noqa=REASON`` (ruff's spelling: the reason only with ``=``, so
    that ``--add-noqa src`` still checks ``src``) as two options."""
    result = []
    for index, arg in enumerate(argv):
        if arg == "--":
            return result + argv[index:]
        if arg.startswith("--add-noqa="):
            result += ["--add-noqa", f"--add-noqa-reason={arg[len('--add-noqa='):]}"]
        else:
            result.append(arg)
    return result


def _usage_problems(args: argparse.Namespace) -> Optional[str]:
    if (args.show_settings or args.show_files) and (args.fix or args.fix_only or args.diff or args.add_noqa):
        return "--show-settings and --show-files cannot be combined with --fix, --fix-only, --diff or --add-noqa"
    if args.fix_only and args.statistics:
        return "--fix-only reports no findings: it cannot be combined with --statistics"
    if args.output_file and args.stdin_filename is not None and (args.fix or args.fix_only):
        return "--output-file cannot be combined with --fix on stdin (the fixed source goes to stdout)"
    if args.add_noqa and (args.fix or args.fix_only or args.diff):
        return "--add-noqa cannot be combined with --fix, --fix-only or --diff"
    reading_stdin = args.stdin_filename is not None or args.paths == ["-"]
    if reading_stdin and args.paths not in ([], ["-"]):
        return "with --stdin-filename, give no paths (or just -)"
    if "-" in args.paths and args.paths != ["-"]:
        return "- (stdin) cannot be combined with other paths"
    if reading_stdin and args.add_noqa:
        return "--add-noqa works on files, not on stdin"
    if args.add_noqa_reason:
        try:
            check_noqa_reason(args.add_noqa_reason)
        except ValueError as exc:
            return f"--add-noqa: {exc}"
    if args.watch and (reading_stdin or args.add_noqa or args.show_settings or args.show_files or args.statistics):
        return "--watch cannot be combined with stdin, --add-noqa, --show-settings, --show-files or --statistics"
    if args.statistics and args.output_format not in ("concise", "full", "json"):
        return f"--statistics works with --output-format concise, full or json, not {args.output_format}"
    return None


def main(argv: Optional[Sequence[str]] = None, stdout: TextIO = None, stderr: TextIO = None, stdin=None) -> int:
    # libcst's visitors recurse once or twice per nesting level; long
    # operator chains in generated code need more than CPython's 1000.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 8000))
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    for stream in (stdout, stderr):
        never_fails(stream)  # undecodable file names, strict encodings: escaped, never a crash
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["rule"]:  # only as the first argument: `torchlint ./rule` checks a path
        from torchlint.frontends import rule_command

        return rule_command.main(argv[1:], stdout, stderr)
    if argv[:1] == ["server"]:  # likewise: `torchlint ./server` checks a path
        from torchlint.frontends import server

        return server.main(argv[1:], stderr, build_parser().parse_args([]))
    if argv[:1] == ["check"]:  # ruff's spelling; checking is also what no subcommand does
        argv = argv[1:]
    parser = build_parser()
    args = parser.parse_args(_split_add_noqa(argv))
    problem = _usage_problems(args)
    if problem:
        parser.error(problem)
    if args.watch:
        return _watch(args, stdout, stderr)
    try:
        options = resolve(args, rule_specs())
    except (ConfigError, SelectionError, SettingsError) as exc:
        print(f"torchlint: error: {exc}", file=stderr)
        return 2
    if args.show_settings:
        show_settings(options, stdout)
        return 0
    if args.show_files:
        return show_files(options, stdout, stderr)
    linter = Linter(options)
    if args.output_file:
        try:
            report_stream = open(args.output_file, "w", encoding="utf-8")
        except OSError as exc:
            print(f"torchlint: error: --output-file {args.output_file}: {exc.strerror or exc}", file=stderr)
            return 2
    else:
        report_stream = stdout
    try:
        if args.stdin_filename is not None or args.paths == ["-"]:
            return run_stdin(options, linter, stdin or sys.stdin, report_stream, stderr)
        if options.add_noqa:
            return run_add_noqa(options, linter, report_stream, stderr)
        return run_files(options, linter, report_stream, stderr)
    finally:
        if report_stream is not stdout:
            report_stream.close()


def _watch(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from torchlint.run.watch import watch

    def run(options) -> int:
        # A new linter each time: what it learnt about the project may be stale.
        try:
            if not args.output_file:
                return run_files(options, Linter(options), stdout, stderr)
            with open(args.output_file, "w", encoding="utf-8") as report_stream:
                return run_files(options, Linter(options), report_stream, stderr)
        except OSError as exc:
            print(f"torchlint: error: --output-file {args.output_file}: {exc.strerror or exc}", file=stderr)
            return 2
        finally:
            stdout.flush()
            stderr.flush()

    return watch(lambda: resolve(args, rule_specs()), run, stdout, stderr)


def entry_point() -> None:
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``torchlint src | head``): not our error to
        # report, and Python must not complain again while flushing at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 1
    except KeyboardInterrupt:
        print("torchlint: interrupted", file=sys.stderr)
        status = 130
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    entry_point()
