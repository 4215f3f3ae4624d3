"""Understanding one file's code, shared by every rule: textual screens,
the outline of Python's tree that decides which files and rules reach libcst,
scopes and bindings, qualified-name resolution, and inference of what a value
is (tensor, module, device).

May import: ``core``, ``knowledge``.
"""
