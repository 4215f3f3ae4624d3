"""Colour for people at a terminal, and never for anything else.

Colour is used when the stream is a terminal, ``NO_COLOR`` is unset or empty
and ``TERM`` is not ``dumb``; ``FORCE_COLOR`` (set, not empty and not ``0``)
turns it on for pipes too, for CI logs that render colour. ``NO_COLOR`` wins
over ``FORCE_COLOR``. Machine-readable formats (json, sarif, github) are never
coloured.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, TextIO

_CODES = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36", "dim": "2"}


def use_color(stream: TextIO, environ: Optional[Mapping[str, str]] = None) -> bool:
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Style:
    """``style.red("x")`` is "x" in red when colour is on, plain "x" otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def paint(self, text: str, *styles: str) -> str:
        if not self.enabled or not text:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def bold(self, text: str) -> str:
        return self.paint(text, "bold")

    def red(self, text: str) -> str:
        return self.paint(text, "red")

    def green(self, text: str) -> str:
        return self.paint(text, "green")

    def cyan(self, text: str) -> str:
        return self.paint(text, "cyan")

    def code(self, text: str) -> str:
        return self.paint(text, "bold", "red")


PLAIN = Style(False)
