"""Which findings torch version gates remove (``analysis/version_gates.py``).

Checks every ``.py`` file under the folders given, with every rule, and
lists the findings dropped because a version gate protects their line, so
each can be judged by reading the code around it:

    python bench/version_gates.py CORPUS_DIR [CORPUS_DIR ...]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Sequence, Tuple

from torchlint.core.diagnostic import ParseError
from torchlint.core.source import SourceError, decode
from torchlint.engine import linter
from torchlint.rules import all_rules


def main(folders: Sequence[str]) -> int:
    dropped: List[Tuple[str, int]] = []
    current = [""]
    real = linter.is_gated

    def recording(ranges, line: int) -> bool:
        gated = real(ranges, line)
        if gated:
            dropped.append((current[0], line))
        return gated

    linter.is_gated = recording  # the engine's own decision, observed
    engine = linter.Engine(all_rules())
    kept = 0
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.py")):
            current[0] = str(path)
            try:
                kept += len(engine.check(decode(path.read_bytes())).diagnostics)
            except (ParseError, SourceError, OSError):
                continue
    print(f"findings kept {kept}, dropped inside version gates {len(dropped)}")
    for path, line in dropped:
        print(f"{path}:{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
