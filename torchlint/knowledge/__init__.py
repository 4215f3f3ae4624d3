"""What torchlint knows about torch and torchvision, read without importing
either: the tables rules and inference consult (``torch_api``), the
deprecation table (``deprecations``), the API snapshot and its data file
(``api_snapshot``, ``data/``), torchvision's model builders.

May import: ``core``.
"""
