"""A run over many files: configuration, which files and rules, reading and
writing files safely, notebooks, the result cache, worker processes, one
file end to end (``runner``), and the reporters of every output format.

May import: every layer below: ``core``, ``knowledge``, ``analysis``,
``rules``, ``engine``.
"""
