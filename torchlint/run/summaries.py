"""The project model's module summaries on disk (``analysis/summaries.py``).

One small JSON file per module in ``modules-v1/`` of the cache directory,
named by a hash of the module's path and of what decides the answers
(torchlint's version and files, the settings), holding the digest of the
bytes it describes. A run, or each flake8 worker, reads the summaries of
the modules it asks about and writes the ones that learnt something at the
end of each check, atomically: concurrent writers leave one complete file,
a file whose module changed since is simply not used, and a damaged,
forged or oversized one is a miss (the module is analysed again). A module
keeps one file however often it changes; the folder is safe to delete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from typing import Any, Dict

from torchlint import __version__
from torchlint.analysis.summaries import SummaryStore
from torchlint.core.settings import Settings
from torchlint.run.cache import checksum, installation, mark_directory, read_bounded

FOLDER = "modules-v1"


class DiskSummaries(SummaryStore):
    def __init__(self, directory: str, settings: Settings) -> None:
        self.directory = directory
        self.folder = os.path.join(directory, FOLDER)
        self._context = f"{__version__}|{installation()}|{settings!r}"

    def _path(self, key: str) -> str:
        name = hashlib.blake2b(f"{self._context}\0{key}".encode("utf-8", "surrogatepass"), digest_size=16)
        return os.path.join(self.folder, name.hexdigest() + ".json")

    def load(self, key: str, digest: str) -> Dict[str, Any]:
        data = read_bounded(self._path(key))
        if data is None:
            return {}
        try:
            entry = json.loads(data)
        except (ValueError, RecursionError, MemoryError):
            return {}
        if not (isinstance(entry, dict) and entry.get("key") == key and entry.get("digest") == digest
                and entry.get("context") == self._context):
            return {}
        summary = entry.get("summary")
        if not isinstance(summary, dict) or entry.get("check") != checksum(key, digest, summary):
            return {}
        return summary

    def save(self, key: str, digest: str, summary: Dict[str, Any]) -> None:
        entry = {"key": key, "digest": digest, "context": self._context, "summary": summary,
                 "check": checksum(key, digest, summary)}
        try:
            os.makedirs(self.folder, exist_ok=True)
            mark_directory(self.directory)
            fd, temp = tempfile.mkstemp(prefix=".summary-", dir=self.folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(entry, handle, separators=(",", ":"))
                os.replace(temp, self._path(key))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)  # never leave a half-written file behind
                raise
        except (OSError, ValueError, TypeError, RecursionError):
            pass  # a summary that cannot be kept only costs speed
