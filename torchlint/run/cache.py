"""A content-hash cache of check results, so an unchanged tree re-checks in
well under a second.

An entry is keyed by the file's path and holds the hash of its bytes and of
everything else that decides its findings: torchlint's version, the rules
that run on that path and the settings. Any change to the file, the
configuration or torchlint itself misses the cache; nothing is ever stale.
Only check mode reads and writes it (fixing always works from the file).

The cache lives in one JSON file inside the cache directory (default
``.torchlint_cache`` at the project root: the configuration file's folder, else
the git work tree, else the current directory; ``--cache-dir``,
``TORCHLINT_CACHE_DIR``), written atomically at the end of a run. The
directory is safe to delete at any time and tells git and backup tools to
ignore it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Dict, List, Optional, Sequence

from torchlint import __version__
from torchlint.core.diagnostic import Diagnostic, Fix

DEFAULT_DIRECTORY = ".torchlint_cache"
_FILE = "results-v1.json"


def content_key(data: bytes, context: str) -> str:
    return hashlib.blake2b(data + b"\0" + context.encode(), digest_size=20).hexdigest()


def context_key(rule_codes: Sequence[str], settings: object) -> str:
    """What besides the bytes decides a file's findings."""
    return f"{__version__}|{_installation()}|{','.join(rule_codes)}|{settings!r}"


_INSTALLATION: Optional[str] = None


def _installation() -> str:
    """A fingerprint of torchlint's own files (names, sizes, modification
    times): an edited checkout (``pip install -e``) or a reinstall of the
    same version number never reuses results of other code."""
    global _INSTALLATION
    if _INSTALLATION is None:
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # all of torchlint
        digest = hashlib.blake2b(digest_size=12)
        for directory, subdirectories, names in os.walk(package):
            subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
            for name in sorted(names):
                if name.endswith((".py", ".json")):
                    status = os.stat(os.path.join(directory, name))
                    digest.update(f"{os.path.relpath(directory, package)}/{name}:{status.st_size}:{status.st_mtime_ns};".encode())
        _INSTALLATION = digest.hexdigest()
    return _INSTALLATION


class ResultCache:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._entries: Dict[str, dict] = {}
        self._dirty = False
        try:
            with open(os.path.join(directory, _FILE), encoding="utf-8") as handle:
                loaded = json.load(handle)
            if isinstance(loaded, dict) and loaded.get("version") == __version__:
                entries = loaded.get("entries")
                self._entries = entries if isinstance(entries, dict) else {}
        except (OSError, ValueError):
            pass  # no cache yet, or an unreadable one: start afresh

    def get(self, path: str, key: str) -> Optional[List[Diagnostic]]:
        entry = self._entries.get(os.path.abspath(path))
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        try:
            return [_diagnostic(item) for item in entry["diagnostics"]]
        except (KeyError, TypeError, ValueError):
            return None  # a damaged entry: check the file again

    def put(self, path: str, key: str, diagnostics: Sequence[Diagnostic]) -> None:
        self._entries[os.path.abspath(path)] = {"key": key, "diagnostics": [_record(d) for d in diagnostics]}
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            _mark_directory(self.directory)
            fd, temp = tempfile.mkstemp(prefix=".results-", dir=self.directory)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": __version__, "entries": self._entries}, handle)
            os.replace(temp, os.path.join(self.directory, _FILE))
        except OSError:
            pass  # a cache that cannot be written only costs speed


def _record(d: Diagnostic) -> list:
    applicability = None if d.fix is None else ("safe" if d.fix.safe else "unsafe")
    return [d.code, d.message, d.line, d.column, applicability, d.cell]


def _diagnostic(item: list) -> Diagnostic:
    code, message, line, column, applicability, cell = item
    # The fix itself is not cached (check mode never applies it); what is kept
    # is whether one exists and how safe it is, for the summary.
    fix = None if applicability is None else Fix((), safe=applicability == "safe")
    return Diagnostic(code, message, line, column, fix, cell=cell)


def _mark_directory(directory: str) -> None:
    tag = os.path.join(directory, "CACHEDIR.TAG")
    if not os.path.exists(tag):
        with open(tag, "w", encoding="ascii") as handle:
            handle.write("Signature: 8a477f597d28d172789f06886806bc55\n# torchlint's cache; safe to delete.\n")
        with open(os.path.join(directory, ".gitignore"), "w", encoding="ascii") as handle:
            handle.write("*\n")
