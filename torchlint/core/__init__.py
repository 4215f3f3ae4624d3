"""The vocabulary every layer shares, free of torch knowledge and of libcst
at import time: settings (torch versions), what a check produces
(``Diagnostic``, ``Fix``, ``Edit``, parse errors), one checked text and what
is derived from it (``SourceFile``: lines, offsets, Python's tree and its census, tokens,
libcst's module, computed once), and ``# noqa`` comments.

May import: the standard library (libcst lazily, inside ``SourceFile``);
nothing else of torchlint's but ``torchlint.__version__``.
"""
