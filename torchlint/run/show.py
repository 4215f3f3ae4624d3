"""``--show-settings`` and ``--show-files``: what a run would use, without running it."""

from __future__ import annotations

import os
from typing import List, TextIO

from torchlint import __version__
from torchlint.knowledge.deprecations import NEWEST_RELEASE
from torchlint.run.config import Options
from torchlint.run.files import discover


def show_settings(options: Options, stdout: TextIO) -> None:
    """The resolved options, one ``name: value`` per line."""
    rows: List[tuple] = [
        ("torchlint", __version__),
        ("configuration file", (options.config_path or "(none)") + "".join(
            f" (extends {path})" for path in options.config_extends[:1]) + "".join(
            f" (which extends {path})" for path in options.config_extends[1:])),
        ("paths", " ".join(options.paths or ["."])),
        ("rules", ", ".join(rule.code for rule in options.rules) or "(none)"),
        ("torch-version", _torch_version(options)),
        ("target-torch-version", _target_torch_version(options)),
        ("exclude", ", ".join(_pattern(p) for p in options.exclude) or "(none)"),
        ("force-exclude", _flag(options.force_exclude)),
        ("respect-gitignore", _flag(options.respect_gitignore)),
        ("per-file-ignores", "; ".join(f"{_pattern(p)}: {', '.join(codes)}" for p, codes in options.per_file_ignores)
         or "(none)"),
        ("unsafe-fixes", _flag(options.unsafe_fixes)),
        ("fix-only", _flag(options.fix_only)),
        ("output-format", options.output_format),
        ("jobs", str(options.jobs)),
        ("cache", options.cache_dir or "(off)"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name + ':':<{width + 1}} {value}", file=stdout)


def _torch_version(options: Options) -> str:
    """The floor and where it came from: the command line, a configuration
    file, the project's metadata, or nowhere (the default)."""
    if options.torch_version is None:
        least = (f"; at least {'.'.join(map(str, options.least_torch_version))} "
                 f"({options.least_torch_version_source})" if options.least_torch_version is not None else "")
        return ("(no constraint) (default: no --torch-version, torch-version setting or torch requirement in "
                "the project's metadata; a file is checked against the oldest torch release its code shows it "
                f"runs on: the newest its project's version tests tell apart or its code needs{least})")
    return f"{'.'.join(map(str, options.torch_version))} ({options.torch_version_source})"


def _target_torch_version(options: Options) -> str:
    if options.target_torch_version is None:
        return f"{NEWEST_RELEASE} (default: the newest release torchlint knows)"
    return f"{'.'.join(map(str, options.target_torch_version))} ({options.target_torch_version_source})"


def show_files(options: Options, stdout: TextIO, stderr: TextIO) -> int:
    """The files a run would check, one a line, in the order it checks them."""
    force = options.is_excluded_with_parents if options.force_exclude else None
    status = 0
    for path, error in discover(options.paths or ["."], options.is_excluded, force):
        if error:
            print(f"torchlint: error: {path}: {error}", file=stderr)
            status = 2
        else:
            print(path, file=stdout)
    return status


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _pattern(pattern) -> str:
    """A path pattern as written, prefixed with its folder when it has a ``/``."""
    if "/" not in pattern.pattern:
        return pattern.pattern
    base = os.path.relpath(pattern.base)
    return pattern.pattern if base == os.curdir else f"{base}/{pattern.pattern}"
