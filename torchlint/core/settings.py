"""Settings that change what rules report, shared by the CLI and flake8.

``torch_version`` is the oldest torch the checked code must run on. Unset
(the default) means "no constraint": every rule applies and every fix is
offered. Set, it turns off advice that does not apply to that version: a
replacement that does not exist yet is not suggested, and a warning that no
longer exists there is not reported.

``target_torch_version`` is the torch the code moves to (runs on next).
Unset means the newest release torchlint knows. It decides what a
deprecation is for the code: removed there (TL108), still deprecated (TL109),
or not deprecated yet / any more (not reported). It is never older than
``torch_version``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

Version = Tuple[int, ...]

_VERSION = re.compile(r"^\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$")


class SettingsError(ValueError):
    pass


def parse_version(text: str) -> Version:
    """'1.8' -> (1, 8, 0); raises SettingsError for anything else."""
    match = _VERSION.match(text or "")
    if not match:
        raise SettingsError(f"invalid torch version {text!r} (expected e.g. 1.13 or 2.1)")
    return tuple(int(part or 0) for part in match.groups())


# The minor releases of each closed line of torch (0.1-0.4, 1.0-1.13); the
# 2.x line is open: a 2.x newer than torchlint's tables is a torch released
# after it, and must not make an older torchlint refuse to run.
_CLOSED_LINES = {0: range(1, 5), 1: range(0, 14)}
_OPEN_LINE = 2


def parse_release(text: str) -> Version:
    """``parse_version`` for a version the user gives (``--torch-version``,
    ``torch-version = "..."``): it must be one torch has released, so that a
    typo (``3``, ``1.31`` for ``1.13``) is an error, not a silent constraint."""
    version = parse_version(text)
    major, minor = version[0], version[1]
    if major == _OPEN_LINE or minor in _CLOSED_LINES.get(major, ()):
        return version
    raise SettingsError(
        f"no torch release has version {text.strip()!r} (torch releases are 0.1 to 0.4, 1.0 to 1.13 "
        f"and 2.0 on; expected e.g. 1.13 or 2.1)")


def format_version(version: Version) -> str:
    return ".".join(str(part) for part in version[:2])


@dataclass(frozen=True)
class VersionRange:
    """Torch versions where a rule's advice holds.

    ``since``: the replacement exists from this version on (advice needs the
    oldest supported torch >= since). ``until``: the problem exists only
    before this version (advice needs the oldest supported torch < until).
    """

    since: Optional[Version] = None
    until: Optional[Version] = None

    def applies_to(self, oldest: Optional[Version]) -> bool:
        if oldest is None:
            return True
        if self.since is not None and oldest < self.since:
            return False
        if self.until is not None and oldest >= self.until:
            return False
        return True

    def describe(self) -> str:
        """A phrase completing "Applies to ..." in the docs."""
        if self.since is None and self.until is None:
            return "code for any torch version"
        parts = []
        if self.since is not None:
            parts.append(f"whose oldest supported torch is {format_version(self.since)} or newer (the replacement needs it)")
        if self.until is not None:
            parts.append(
                f"that still supports torch older than {format_version(self.until)} "
                f"(the problem is gone from {format_version(self.until)} on)"
            )
        return "code " + " and ".join(parts)


ALWAYS = VersionRange()


def versions(since: Optional[str] = None, until: Optional[str] = None) -> VersionRange:
    return VersionRange(
        parse_version(since) if since else None,
        parse_version(until) if until else None,
    )


@dataclass(frozen=True)
class Settings:
    torch_version: Optional[Version] = None
    target_torch_version: Optional[Version] = None
    # A distribution that declares no torch floor but a Python one: the first torch
    # release for that Python. Not a floor by itself: the engine takes the newest of it,
    # what the code needs and what its version tests tell apart (``Engine._shown_floor``).
    least_torch_version: Optional[Version] = None
    # A distribution that declares no torch floor: its floor is what its code needs
    # (``Engine._shown_floor``). A folder of scripts is advised for the torch it moves to.
    floor_from_code: bool = False

    def __post_init__(self) -> None:
        if self.torch_version and self.target_torch_version and self.target_torch_version < self.torch_version:
            raise SettingsError(
                f"the target torch version {format_version(self.target_torch_version)} is older than the "
                f"oldest supported one {format_version(self.torch_version)}")
