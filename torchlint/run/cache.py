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

The cache is only ever a hint: an entry whose shape, rule codes, positions
or checksum do not hold up is a miss (the file is checked again and the
entry rewritten), and only a regular file of bounded size is read, so a
damaged, truncated or hostile cache never gives an error, a hang or a wrong
finding.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from typing import Callable, Collection, Dict, List, Optional, Sequence

from torchlint import __version__
from torchlint.core.diagnostic import Diagnostic, Fix

DEFAULT_DIRECTORY = ".torchlint_cache"
_FILE = "results-v2.json"  # v2: entries carry a checksum
# A cache file larger than this is not read (a run over a very large tree
# writes a few hundred bytes per file and per finding).
MAX_CACHE_BYTES = 512 * 1024 * 1024
_APPLICABILITIES = (None, "safe", "unsafe")


def content_key(digest: str, context: str) -> str:
    """The key of a result: ``digest`` is the hash of the bytes that were
    checked (``core.dependencies.content_digest``), ``context`` what else decides it."""
    return hashlib.blake2b(f"{digest}\0{context}".encode(), digest_size=20).hexdigest()


def context_key(rule_codes: Sequence[str], settings: object) -> str:
    """What besides the bytes decides a file's findings."""
    return f"{__version__}|{installation()}|{','.join(rule_codes)}|{settings!r}"


_INSTALLATION: Optional[str] = None


def installation() -> str:
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
        data = read_bounded(os.path.join(directory, _FILE))
        if data is None:
            return  # no cache yet, or not one we can read: start afresh
        try:
            loaded = json.loads(data)
        except (ValueError, RecursionError, MemoryError):
            return  # damaged (or nested too deep to load): start afresh
        if isinstance(loaded, dict) and loaded.get("version") == __version__:
            entries = loaded.get("entries")
            self._entries = entries if isinstance(entries, dict) else {}

    def get(self, path: str, key: str, codes: Collection[str], size: int,
            digest_of: Callable[[str], Optional[str]] = lambda path: None) -> Optional[List[Diagnostic]]:
        """The cached findings of ``path`` for ``key``, or None (a miss).

        ``codes``: the rules that run on ``path``; ``size``: the length of the
        checked bytes; ``digest_of``: the digest of another file's bytes now
        (the entry holds only while the project modules its check consulted
        are unchanged). An entry must be well-formed, name only those codes,
        have positions inside the file and carry its own checksum, else it
        is damaged and a miss.
        """
        absolute = os.path.abspath(path)
        entry = self._entries.get(absolute)
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        records = entry.get("diagnostics")
        dependencies = entry.get("dependencies", {})
        if entry.get("check") != checksum(absolute, key, [records, dependencies]):
            return None
        if not isinstance(dependencies, dict) or any(
                digest_of(dependency) != digest for dependency, digest in dependencies.items()):
            return None
        if not isinstance(records, list) or not all(_valid_record(item, codes, size) for item in records):
            return None
        return [_diagnostic(item) for item in records]

    def put(self, path: str, key: str, diagnostics: Sequence[Diagnostic],
            dependencies: Optional[Dict[str, str]] = None) -> None:
        absolute = os.path.abspath(path)
        records = [_record(d) for d in diagnostics]
        dependencies = dict(dependencies or {})
        self._entries[absolute] = {"key": key, "diagnostics": records, "dependencies": dependencies,
                                   "check": checksum(absolute, key, [records, dependencies])}
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            mark_directory(self.directory)
            fd, temp = tempfile.mkstemp(prefix=".results-", dir=self.directory)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": __version__, "entries": self._entries}, handle)
            os.replace(temp, os.path.join(self.directory, _FILE))
        except OSError:
            pass  # a cache that cannot be written only costs speed


def read_bounded(path: str) -> Optional[bytes]:
    """The bytes of ``path`` if it is a regular file of at most ``MAX_CACHE_BYTES``.

    Opened without blocking, so a FIFO in its place cannot hang the run; a
    device (``/dev/zero``) or an oversized file is never read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_CACHE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_CACHE_BYTES + 1)
        return data if len(data) <= MAX_CACHE_BYTES else None
    except (OSError, MemoryError):
        return None
    finally:
        os.close(fd)


def checksum(path: str, key: str, records: object) -> str:
    """Integrity of one entry: a flipped bit anywhere in it (even one that keeps
    the JSON valid) or an entry moved to another path no longer matches."""
    try:
        text = json.dumps([path, key, records], separators=(",", ":"), ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):
        return ""
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _valid_record(item: object, codes: Collection[str], size: int) -> bool:
    """A cached finding as ``_record`` writes it: known code, sane position."""
    if not isinstance(item, list) or len(item) != 8:
        return False
    code, message, line, column, applicability, cell, end_line, end_column = item
    return (
        isinstance(code, str) and code in codes
        and isinstance(message, str)
        and _is_count(line, 1, size + 1)
        and _is_count(column, 0, size)
        and applicability in _APPLICABILITIES
        and (cell is None or _is_count(cell, 1, size))
        and ((end_line is None and end_column is None)
             or (_is_count(end_line, line, size + 1) and _is_count(end_column, 0, size)))
    )


def _is_count(value: object, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _record(d: Diagnostic) -> list:
    applicability = None if d.fix is None else ("safe" if d.fix.safe else "unsafe")
    return [d.code, d.message, d.line, d.column, applicability, d.cell, d.end_line, d.end_column]


def _diagnostic(item: list) -> Diagnostic:
    code, message, line, column, applicability, cell, end_line, end_column = item
    # The fix itself is not cached (check mode never applies it); what is kept
    # is whether one exists and how safe it is, for the summary. The end of
    # the flagged node is kept for the formats that show spans (github).
    fix = None if applicability is None else Fix((), safe=applicability == "safe")
    return Diagnostic(code, message, line, column, fix, cell=cell, end_line=end_line, end_column=end_column)


def mark_directory(directory: str) -> None:
    tag = os.path.join(directory, "CACHEDIR.TAG")
    if not os.path.exists(tag):
        with open(tag, "w", encoding="ascii") as handle:
            handle.write("Signature: 8a477f597d28d172789f06886806bc55\n# torchlint's cache; safe to delete.\n")
        with open(os.path.join(directory, ".gitignore"), "w", encoding="ascii") as handle:
            handle.write("*\n")
