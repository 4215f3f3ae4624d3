"""How a check names what its findings depend on, for the result cache.

A dependency is a module of the project the check read (its path, with the
digest of the bytes read), or a place where an import was looked for and
nothing was found (``ABSENT`` + the path, with ``ABSENT_DIGEST``): a module
added there later would change the findings. Kept here, below the analysis
that records them and the run that checks them, so that a warm run, which
only checks them, never loads the analysis.
"""

ABSENT = "absent:"
ABSENT_DIGEST = ""
