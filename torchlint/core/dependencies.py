"""How a check names what its findings depend on, for the result cache.

A dependency is a module of the project the check read (its path, with the
digest of the bytes read), or a place where an import was looked for and
nothing was found (``ABSENT`` + the path, with ``ABSENT_DIGEST``): a module
added there later would change the findings. Kept here, below the analysis
that records them and the run that checks them, so that a warm run, which
only checks them, never loads the analysis.
"""

import hashlib

ABSENT = "absent:"
ABSENT_DIGEST = ""


def content_digest(data: bytes) -> str:
    """The hash of a file's bytes: results and module summaries are keyed by what was read."""
    return hashlib.blake2b(data, digest_size=20).hexdigest()
