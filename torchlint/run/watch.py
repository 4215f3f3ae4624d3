"""``--watch``: check again whenever a checked file or the configuration changes.

As ruff's ``--watch``: a first run at once, then one run per change, each
announced with a timestamp (the screen is cleared first on a terminal).
Changes are found by polling: every ``interval`` seconds the files the run
would check are listed again (so new files count) and their size and
modification time compared with the last run's, along with the
configuration file and the files it extends. On a tree so large that a
poll costs more than a tenth of a core at that pace, the wait grows to keep
it there. Polling needs no dependency
and works on every filesystem (network mounts and containers, where file
events often do not arrive); with the result cache, a run after a change
re-checks only what changed. A configuration that becomes invalid is
reported and watching goes on; the next change is tried again.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Dict, Optional, TextIO, Tuple

from torchlint.run.config import CONFIG_FILES, Options
from torchlint.run.files import discover

Stamp = Tuple[int, int]  # (modification time in ns, size)
CLEAR_SCREEN = "\x1b[2J\x1b[H"
INTERVAL = 0.5  # seconds between polls: about ruff's latency, without events
# A poll may take at most this share of one core: on a large tree (10,000
# files: 0.38 s a poll, bench/watch_poll.py) the wait grows instead.
MAX_POLL_SHARE = 0.1


def snapshot(options: Optional[Options]) -> Dict[str, Optional[Stamp]]:
    """What a change would alter: each file to check and each configuration
    file (``None`` options: the run could not start; only configuration files)."""
    paths = []
    if options is not None:
        force = options.is_excluded_with_parents if options.force_exclude else None
        paths = [path for path, error in discover(options.paths or ["."], options.is_excluded, force) if not error]
    return {**{path: _stamp(path) for path in paths}, **_config_files(options)}


def _stamp(path: str) -> Optional[Stamp]:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def watch(resolve: Callable[[], Options], run: Callable[[Options], int], stdout: TextIO, stderr: TextIO,
          interval: float = INTERVAL) -> int:
    """Run, then run again after each change; returns only on an interrupt
    (which ``entry_point`` turns into exit status 130)."""
    announce(stdout, "Starting linter in watch mode...")
    options, last = _run(resolve, run, stderr)
    cost = 0.0  # CPU seconds of the last poll
    while True:
        time.sleep(max(interval, cost / MAX_POLL_SHARE - cost))
        start = time.process_time()
        current = snapshot(options)
        cost = time.process_time() - start
        if current == last:
            continue
        announce(stdout, "File change detected...")
        options, last = _run(resolve, run, stderr)


def _run(resolve: Callable[[], Options], run: Callable[[Options], int], stderr: TextIO
         ) -> Tuple[Optional[Options], Dict[str, Optional[Stamp]]]:
    """Resolve the options and run once; with what the files were before the
    run, so that a change made while it ran (or by ``--fix``) runs it again."""
    from torchlint.core.settings import SettingsError
    from torchlint.run.config import ConfigError
    from torchlint.run.selection import SelectionError

    config_files = snapshot(None)  # before reading them: an edit while they are read is a change
    try:
        options = resolve()
    except (ConfigError, SelectionError, SettingsError) as exc:
        print(f"torchlint: error: {exc}", file=stderr)
        stderr.flush()
        return None, config_files
    before = snapshot(options)
    run(options)
    return options, before


def _config_files(options: Optional[Options]) -> Dict[str, Optional[Stamp]]:
    """The configuration files to watch: those the run read; when it could
    read none (a broken one), every place one could be from here up."""
    if options is not None and options.config_path:
        paths = [options.config_path, *options.config_extends]
    else:
        paths = []
        directory = os.path.abspath(os.curdir)
        while True:
            paths += [os.path.join(directory, name) for name in CONFIG_FILES]
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return {path: _stamp(path) for path in paths}


def announce(stdout: TextIO, message: str) -> None:
    if getattr(stdout, "isatty", lambda: False)():
        stdout.write(CLEAR_SCREEN)
    stdout.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    stdout.flush()
