"""torchaudio's APIs removed in 2.9, as table entries (read by TL119, opt-in).

torchaudio 2.8 deprecated its I/O and backend functions (moved to TorchCodec),
its sox effects, Kaldi I/O, ``torchaudio.io`` streaming and the prototype
namespace; 2.9 removed them. ``scripts/mine_torchaudio_deprecations.py`` reads
the 2.7.1, 2.8.0 and 2.9.1 wheels (never installed) and commits
``data/torchaudio_deprecations_mined.json``; the entries here are the public
names that data says 2.8 warns about and 2.9 no longer has, each with the
replacement of its group. torchaudio is not installed with torchlint's tests,
so ``tests/test_torchaudio_removals.py`` holds the entries to the committed data.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Tuple

from torchlint.knowledge.deprecations import Deprecation, Kind, Status

MINED_FILE = Path(__file__).resolve().parent / "data" / "torchaudio_deprecations_mined.json"
REMOVED_IN = "2.9"  # the torchaudio release that removed them

TORCHCODEC = ("TorchCodec (`torchcodec.decoders.AudioDecoder`, `torchcodec.encoders.AudioEncoder`; "
              "`torchaudio.load`/`save` remain, on TorchCodec)")
# (prefix of the removed name, its replacement), the first match wins
REPLACEMENTS: Tuple[Tuple[str, str], ...] = (
    ("torchaudio.prototype.", "nothing (torchaudio's prototype APIs were dropped; copy the code you need)"),
    ("torchaudio.sox_effects.", "nothing in torchaudio (sox support was dropped; `torchaudio.functional` or "
                                "TorchCodec for I/O)"),
    ("torchaudio.utils.sox_utils.", "nothing (sox support was dropped)"),
    ("torchaudio.kaldi_io.", "the `kaldi_io` package (torchaudio's wrapper of it was dropped)"),
    ("torchaudio.utils.download_asset", "nothing (download the file yourself)"),
    ("torchaudio.", TORCHCODEC),
)


def _replacement(name: str) -> str:
    return next(text for prefix, text in REPLACEMENTS if name.startswith(prefix))


def _public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


@lru_cache(maxsize=1)
def removed_entries() -> Tuple[Deprecation, ...]:
    """One REMOVED entry per public name the mined data says torchaudio 2.9 removed."""
    data = json.loads(MINED_FILE.read_text(encoding="utf-8"))
    entries = []
    for item in data["items"]:
        names = [n for n in item["names"] if _public(n)]
        if not names or not item["removed"] or item["keyword"] or not item["removed"].startswith(REMOVED_IN):
            continue
        kind = Kind.CLASS if item["kind"] == "class" or names[0].rsplit(".", 1)[1][:1].isupper() else Kind.FUNCTION
        entries.append(Deprecation(names[0], kind, Status.REMOVED, _replacement(names[0]),
                                   deprecated=item["deprecated"].rsplit(".", 1)[0] if item["deprecated"] else None,
                                   aliases=tuple(names[1:])))
    return tuple(sorted(entries, key=lambda e: e.old))
