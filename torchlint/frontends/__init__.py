"""The ways users reach torchlint: the ``torchlint`` command (``cli``, which
the pre-commit hooks run), the flake8 plugin and ``torchlint rule``.

May import: every other layer; nothing imports a front end except
``python -m torchlint``.
"""
