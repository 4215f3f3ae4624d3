"""``python -m torchlint``: the ``torchlint`` command.

``-m`` puts the current directory first on ``sys.path``, so a checked
project's ``argparse.py``, ``libcst.py`` or ``torch.py`` would be imported
(executed) instead of the real module as torchlint imports its own
dependencies. torchlint never runs the code it checks: drop that entry
first, as ``python -m pip`` does. (torchlint itself is already imported.)
"""

import os
import sys

if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from torchlint.frontends.cli import entry_point  # noqa: E402

entry_point()
