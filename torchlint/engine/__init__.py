"""Checking and fixing one text: choosing the rules that can match
(screens), cutting what no rule can flag (``narrowing``), parsing, running
the rules over the single traversal, positions of findings, ``# noqa``, and
the fix loop with its validation (``linter``, ``fixer``, ``textedits``).

May import: ``core``, ``knowledge``, ``analysis``, ``rules``.
"""
