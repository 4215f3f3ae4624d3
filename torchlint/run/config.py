"""Configuration files, and the options a run resolves from them and the CLI.

torchlint reads ``[tool.torchlint]`` in ``pyproject.toml`` or ``[torchlint]``
in ``setup.cfg``. The file used is the closest one to the current directory:
each directory from there up to the filesystem root is searched, and in a
directory ``pyproject.toml`` comes before ``setup.cfg``; a file without a
torchlint section is skipped. One configuration applies to the whole run, as
in flake8 (ruff instead picks the closest configuration per file): run
torchlint from the project root, as pre-commit, CI and editors do.
``--config PATH`` names the file instead; ``--isolated`` ignores every file.

Paths in a file (``exclude``, ``extend-exclude``, ``per-file-ignores``) are
relative to the file's directory; paths given on the command line are
relative to the current directory. A command-line option replaces the file's
value of the same key; ``extend-select`` and ``extend-exclude`` add to it.

Every key and value is checked: a mistake is a ``ConfigError`` naming the
file and the key, and the CLI exits with status 2.
"""

from __future__ import annotations

import configparser
import difflib
import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from torchlint.core.fix_policy import DEFAULT_FIX_POLICY, FixPolicy
from torchlint.core.links import check_docs_base_url
from torchlint.core.settings import Settings, SettingsError, Version, parse_release
from torchlint.rules.rule import Rule
from torchlint.run.cache import DEFAULT_DIRECTORY as DEFAULT_CACHE_DIRECTORY
from torchlint.run.files import DEFAULT_EXCLUDE, GitIgnored
from torchlint.run.project_metadata import declared_torch_floor, declares_no_torch_floor, least_torch_release
from torchlint.run.project_metadata import project_root as metadata_root
from torchlint.run.selection import (
    SelectionError,
    check_selectors,
    parse_codes,
    select_rules,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.9 and 3.10
    import tomli as tomllib

PYPROJECT = "pyproject.toml"
SETUP_CFG = "setup.cfg"
CONFIG_FILES = (PYPROJECT, SETUP_CFG)


class ConfigError(ValueError):
    """A configuration file or value torchlint cannot use; the message names it."""


# --------------------------------------------------------------------------
# path patterns
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PathPattern:
    """A shell-style glob, relative to ``base`` (an absolute directory).

    A pattern without ``/`` matches a file or directory name anywhere below
    ``base`` (``build``, ``*_pb2.py``). A pattern with ``/`` matches the path
    relative to ``base`` (``src/generated``, ``tests/*``); a pattern that
    matches a directory matches everything in it. ``*`` also matches ``/``,
    as in flake8.
    """

    pattern: str
    base: str

    @classmethod
    def make(cls, pattern: str, base: str) -> "PathPattern":
        pattern = pattern.strip().replace("\\", "/")
        if os.path.isabs(pattern):
            base, pattern = os.path.abspath(os.sep), pattern.lstrip("/")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = pattern.rstrip("/") or "."
        return cls(pattern, os.path.abspath(base))

    def matches(self, path: str, parents: bool = False) -> bool:
        """Does the pattern match ``path`` (or, with ``parents``, a folder holding it below ``base``)?"""
        absolute = os.path.abspath(path)
        candidates = [absolute]
        if parents:
            while True:
                parent = os.path.dirname(candidates[-1])
                if parent == candidates[-1] or not _is_below(parent, self.base):
                    break
                candidates.append(parent)
        return any(self._matches_one(candidate) for candidate in candidates)

    def _matches_one(self, absolute: str) -> bool:
        if "/" not in self.pattern:
            return fnmatch.fnmatchcase(os.path.basename(absolute), self.pattern)
        if not _is_below(absolute, self.base):
            return False
        relative = os.path.relpath(absolute, self.base).replace(os.sep, "/")
        return fnmatch.fnmatchcase(relative, self.pattern)


class IgnoreIndex:
    """per-file-ignores, indexed: a file is tested against the patterns that
    can match it, not against every one (100,000 patterns took 47 s for one
    file, each tried several times). A pattern without glob characters is
    looked up by the name (or, with ``/``, by the first folder) it names;
    only the others are tried one by one. Each answer is kept per path."""

    def __init__(self, entries: Sequence[Tuple[PathPattern, List[str]]]) -> None:
        self.entries = entries
        # base -> (literal name -> entries, glob names, first folder -> entries with ``/``, the other ``/`` ones)
        self._bases: Dict[str, Tuple[Dict[str, list], list, Dict[str, list], list]] = {}
        for position, (pattern, codes) in enumerate(entries):
            names, name_globs, by_first, paths = self._bases.setdefault(pattern.base, ({}, [], {}, []))
            entry = [pattern.pattern, None, position, codes]  # the compiled regex comes when first needed
            if "/" not in pattern.pattern:
                if _has_magic(pattern.pattern):
                    name_globs.append(entry)
                else:
                    names.setdefault(pattern.pattern, []).append(entry)
                continue
            first = pattern.pattern.split("/", 1)[0]
            if _has_magic(first):
                paths.append(entry)
            else:
                by_first.setdefault(first, []).append(entry)
        self._answers: Dict[str, Tuple[str, ...]] = {}

    def codes(self, path: str) -> Tuple[str, ...]:
        absolute = os.path.abspath(path)
        if absolute not in self._answers:
            matched: Dict[int, List[str]] = {}
            for base, (names, name_globs, by_first, paths) in self._bases.items():
                for candidate in _candidates(absolute, base):
                    name = os.path.basename(candidate)
                    self._match(name, names.get(name, ()), matched)
                    self._match(name, name_globs, matched)
                    if not _is_below(candidate, base):
                        continue
                    relative = os.path.relpath(candidate, base).replace(os.sep, "/")
                    self._match(relative, by_first.get(relative.split("/", 1)[0], ()), matched)
                    self._match(relative, paths, matched)
            self._answers[absolute] = tuple(sorted({code for codes in matched.values() for code in codes}))
        return self._answers[absolute]

    @staticmethod
    def _match(text: str, entries: Iterable[list], matched: Dict[int, List[str]]) -> None:
        for entry in entries:
            if entry[2] in matched:
                continue
            if entry[1] is None:
                entry[1] = re.compile(fnmatch.translate(entry[0]))
            if entry[1].match(text):
                matched[entry[2]] = entry[3]


def _has_magic(pattern: str) -> bool:
    return any(character in pattern for character in "*?[")


def _candidates(absolute: str, base: str) -> List[str]:
    """``absolute`` and the folders holding it below ``base`` (what ``PathPattern.matches`` tries with ``parents``)."""
    candidates = [absolute]
    while True:
        parent = os.path.dirname(candidates[-1])
        if parent == candidates[-1] or not _is_below(parent, base):
            return candidates
        candidates.append(parent)


def _is_below(path: str, directory: str) -> bool:
    """Is ``path`` strictly inside ``directory`` (both absolute)?"""
    relative = os.path.relpath(path, directory)
    return relative != os.curdir and relative != os.pardir and not relative.startswith(os.pardir + os.sep)


def parse_per_file_ignores(text: str) -> List[Tuple[str, List[str]]]:
    """flake8's ``per-file-ignores`` syntax: ``PATTERN[ PATTERN...]: CODE[, CODE...]`` entries.

    Entries are separated by newlines or whitespace: ``a.py:TL101 tests/*: TL2``.
    """
    tokens = re.findall(r":|,|[^\s:,]+", text)
    entries: List[Tuple[str, List[str]]] = []
    patterns: List[str] = []
    codes: List[str] = []
    after_colon = False
    for token in tokens:
        if token == ",":
            continue
        if token == ":":
            if not patterns or after_colon:
                raise ValueError(f"expected `PATTERN: CODES` entries, got {text.strip()!r}")
            after_colon = True
            continue
        if after_colon and re.fullmatch(r"[A-Z]+[0-9]*", token):  # flake8's rule: codes are upper case
            codes.append(token)
            continue
        if after_colon:
            if not codes:
                raise ValueError(f"no codes after {' '.join(patterns)!r}: in {text.strip()!r}")
            entries.extend((pattern, codes) for pattern in patterns)
            patterns, codes, after_colon = [], [], False
        patterns.append(token)
    if patterns and not after_colon:
        raise ValueError(f"{' '.join(patterns)!r} has no `: CODES` part")
    if after_colon:
        if not codes:
            raise ValueError(f"no codes after {' '.join(patterns)!r}:")
        entries.extend((pattern, codes) for pattern in patterns)
    return entries


# --------------------------------------------------------------------------
# reading files
# --------------------------------------------------------------------------


@dataclass
class FileConfig:
    """The validated torchlint settings of one configuration file (with
    what it ``extend``s merged in)."""

    path: str
    section: str  # "[tool.torchlint]" or "[torchlint]", for messages
    values: Dict[str, Any] = field(default_factory=dict)
    # Keys that came from an extended file: key -> that file (for messages).
    origin: Dict[str, str] = field(default_factory=dict)
    # Path keys: the folder each entry is relative to, where it is not this
    # file's (an extended file's entries are relative to that file).
    bases: Dict[str, List[str]] = field(default_factory=dict)
    extends: List[str] = field(default_factory=list)  # the files extended, nearest first

    @property
    def directory(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def entries_with_bases(self, key: str) -> List[Tuple[Any, str]]:
        """The entries of a path key, each with the folder it is relative to."""
        entries = self.values.get(key, [])
        return list(zip(entries, self.bases.get(key) or [self.directory] * len(entries)))

    def origin_of(self, key: str) -> str:
        return self.origin.get(key, self.path)


def _list_of_strings(value: Any, kind: str) -> List[str]:
    if isinstance(value, str):  # setup.cfg: comma, space or newline separated
        return [part for part in re.split(r"[,\s]+", value) if part]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise ValueError(f"expected a list of {kind}, e.g. {_EXAMPLES[kind]}, got {value!r}")


def _codes_value(value: Any) -> List[str]:
    return [code.upper() for code in _list_of_strings(value, "codes")]


def _bool_value(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        state = configparser.RawConfigParser.BOOLEAN_STATES.get(value.strip().lower())
        if state is not None:
            return state
    raise ValueError(f"expected true or false, got {value!r}")


def _version_value(value: Any) -> Version:
    if isinstance(value, float):
        # 1.10 would silently read as 1.1.
        raise ValueError(f"write the version as a string, e.g. \"1.10\", not the number {value!r}")
    if not isinstance(value, str):
        raise ValueError(f"expected a version string such as \"1.13\", got {value!r}")
    try:
        return parse_release(value)
    except SettingsError as exc:
        raise ValueError(str(exc)) from None


def _path_value(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected the path of a configuration file, e.g. \"../pyproject.toml\", got {value!r}")
    return value.strip()


def _docs_base_url_value(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a URL such as \"https://example.org/torchlint/rules\", got {value!r}")
    return check_docs_base_url(value)


def _per_file_ignores_value(value: Any) -> List[Tuple[str, List[str]]]:
    if isinstance(value, str):
        return parse_per_file_ignores(value)
    if isinstance(value, dict):
        entries = []
        for pattern, codes in value.items():
            if isinstance(codes, str):
                codes = [codes]
            entries.append((pattern, _codes_value(codes)))
        return entries
    raise ValueError(f"expected a table of patterns to lists of codes, e.g. {_EXAMPLES['per-file-ignores']}, got {value!r}")


_EXAMPLES = {
    "codes": '["TL1", "TL201"]',
    "patterns": '["build", "src/generated/*"]',
    "per-file-ignores": '{"tests/*" = ["TL2"]}',
}

# key -> converter from the raw TOML / setup.cfg value
KEYS: Dict[str, Callable[[Any], Any]] = {
    "select": _codes_value,
    "extend-select": _codes_value,
    "ignore": _codes_value,
    "exclude": lambda v: _list_of_strings(v, "patterns"),
    "extend-exclude": lambda v: _list_of_strings(v, "patterns"),
    "force-exclude": _bool_value,
    "respect-gitignore": _bool_value,
    "per-file-ignores": _per_file_ignores_value,
    "unsafe-fixes": _bool_value,
    "fix-only": _bool_value,
    "fixable": _codes_value,
    "unfixable": _codes_value,
    "extend-fixable": _codes_value,
    "extend-safe-fixes": _codes_value,
    "extend-unsafe-fixes": _codes_value,
    "torch-version": _version_value,
    "target-torch-version": _version_value,
    "extend": lambda v: _path_value(v),
    "docs-base-url": _docs_base_url_value,
}


# The TOML type of each key (setup.cfg values are all strings).
TOML_TYPES: Dict[str, type] = {
    "select": list, "extend-select": list, "ignore": list, "exclude": list, "extend-exclude": list,
    "force-exclude": bool, "respect-gitignore": bool, "per-file-ignores": dict, "unsafe-fixes": bool, "fix-only": bool,
    "torch-version": str,
    "fixable": list, "unfixable": list, "extend-fixable": list, "extend-safe-fixes": list, "extend-unsafe-fixes": list,
    "extend": str,
    "target-torch-version": str,
    "docs-base-url": str,
}
# Keys whose values are rule codes or prefixes.
CODE_LIST_KEYS = ("select", "extend-select", "ignore", "fixable", "unfixable", "extend-fixable", "extend-safe-fixes",
                  "extend-unsafe-fixes")
_TYPE_NAMES = {list: "a list", bool: "true or false", dict: "a table", str: "a string"}


def _validate(path: str, section: str, raw: Dict[str, Any], rules: Sequence[Rule], toml: bool) -> FileConfig:
    config = FileConfig(path, section)
    for raw_key, value in raw.items():
        key = raw_key.replace("_", "-")
        where = f"{path}: {section} {raw_key}"
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(KEYS)}"
            raise ConfigError(f"{path}: {section}: unknown key {raw_key!r}{hint}")
        expected = TOML_TYPES[key]
        if toml and not isinstance(value, expected) and not isinstance(value, float):
            raise ConfigError(f"{where}: expected {_TYPE_NAMES[expected]}, got {value!r}")
        try:
            converted = KEYS[key](value)
            if key in CODE_LIST_KEYS:
                check_selectors(converted, rules)
            elif key == "per-file-ignores":
                for _, codes in converted:
                    check_selectors(codes, rules)
        except (ValueError, SelectionError) as exc:
            raise ConfigError(f"{where}: {exc}") from None
        config.values[key] = converted
    return config


def _read_pyproject(path: str, required: bool) -> Optional[Dict[str, Any]]:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise ConfigError(f"{path}: cannot read: nested too deeply") from None
    table = data.get("tool", {})
    table = table.get("torchlint") if isinstance(table, dict) else None
    if table is None and required and os.path.basename(path) != PYPROJECT:
        table = data  # a standalone torchlint.toml: the options at the top level
    if table is None:
        if required:
            raise ConfigError(f"{path}: no [tool.torchlint] table")
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.torchlint must be a table")
    return table


def _read_setup_cfg(path: str, required: bool) -> Optional[Dict[str, Any]]:
    parser = configparser.RawConfigParser()
    try:
        with open(path, encoding="utf-8") as handle:
            parser.read_file(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid configuration file: {exc}".replace("\n", " ")) from None
    if not parser.has_section("torchlint"):
        if required:
            raise ConfigError(f"{path}: no [torchlint] section")
        return None
    return dict(parser.items("torchlint"))


def load_file(path: str, rules: Sequence[Rule], required: bool = False,
              chain: Tuple[str, ...] = ()) -> Optional[FileConfig]:
    """The torchlint settings in ``path``, or None when it has none (and may
    have none); with ``extend``, merged over the settings of the file it
    names. ``chain``: the files that extend this one, for cycles."""
    if path.endswith(".toml"):
        raw, section, toml = _read_pyproject(path, required), "[tool.torchlint]", True
        if raw is not None and os.path.basename(path) != PYPROJECT and "tool" not in raw:
            section = "(top level)"
    else:
        raw, section, toml = _read_setup_cfg(path, required), "[torchlint]", False
    if raw is None:
        return None
    config = _validate(path, section, raw, rules, toml)
    if "extend" in config.values:
        config = _extended(config, rules, (*chain, os.path.realpath(path)))
    return config


# Keys whose values add up along ``extend`` (the parent's entries, then the child's).
ACCUMULATED_KEYS = ("extend-select", "extend-exclude", "extend-fixable", "extend-safe-fixes", "extend-unsafe-fixes")
PATH_KEYS = ("exclude", "extend-exclude", "per-file-ignores")


def _extended(config: FileConfig, rules: Sequence[Rule], chain: Tuple[str, ...]) -> FileConfig:
    """``config`` over the file its ``extend`` names, as ruff merges them:
    the path is relative to the file that says it; a key the child sets
    replaces the parent's, the ``extend-*`` lists add up, and ``ignore``
    adds up too unless the child sets ``select`` (a new baseline)."""
    written = config.values.pop("extend")
    target = os.path.normpath(os.path.join(config.directory, os.path.expandvars(os.path.expanduser(written))))
    where = f"{config.path}: {config.section} extend"
    if os.path.realpath(target) in chain:
        cycle = " -> ".join(_display(path) for path in (*chain, os.path.realpath(target)))
        raise ConfigError(f"{where}: {written!r} makes a cycle: {cycle}")
    if not os.path.isfile(target):
        raise ConfigError(f"{where}: {written!r}: no such file ({_display(target)})")
    parent = load_file(_display(target), rules, required=True, chain=chain)
    assert parent is not None  # required
    merged = FileConfig(config.path, config.section, dict(parent.values),
                        origin={key: parent.origin_of(key) for key in parent.values},
                        bases={key: [b for _, b in parent.entries_with_bases(key)] for key in PATH_KEYS
                               if key in parent.values},
                        extends=[parent.path, *parent.extends])
    for key, value in config.values.items():
        own_bases = [b for _, b in config.entries_with_bases(key)] if key in PATH_KEYS else []
        if key in ACCUMULATED_KEYS or (key == "ignore" and "select" not in config.values):
            merged.values[key] = [*parent.values.get(key, []), *value]
            if key in PATH_KEYS:
                merged.bases[key] = [*merged.bases.get(key, []), *own_bases]
        else:
            merged.values[key] = value
            if key in PATH_KEYS:
                merged.bases[key] = own_bases
        merged.origin[key] = config.path
    if "select" in config.values and "ignore" not in config.values:
        merged.values.pop("ignore", None)  # the child's select is a new baseline
    return merged


def find_config(start: str, rules: Sequence[Rule]) -> Optional[FileConfig]:
    """The closest configuration at or above ``start``."""
    directory = os.path.abspath(start)
    while True:
        for name in CONFIG_FILES:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                config = load_file(_display(candidate), rules)
                if config is not None:
                    return config
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def git_root(start: str) -> Optional[str]:
    """The work tree holding ``start`` (the closest folder with a ``.git``), or None."""
    directory = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def project_root(cwd: str, config: Optional[FileConfig]) -> str:
    """Where the project's shared state (the result cache) lives: the
    configuration file's folder, else the git work tree, else ``cwd``; so a
    run from a subfolder finds the same cache as one from the top."""
    if config is not None:
        return config.directory
    return git_root(cwd) or cwd


def cache_directory(root: str, given: Optional[str] = None) -> str:
    """Where the cache lives: ``given`` (``--cache-dir``), else
    ``$TORCHLINT_CACHE_DIR``, else ``.torchlint_cache`` at the project ``root``."""
    return given or os.environ.get("TORCHLINT_CACHE_DIR") or os.path.join(root, DEFAULT_CACHE_DIRECTORY)


def _display(path: str) -> str:
    relative = os.path.relpath(path)
    return relative if not relative.startswith(os.pardir) else path


# --------------------------------------------------------------------------
# the resolved options of one run
# --------------------------------------------------------------------------


@dataclass
class Options:
    """Everything a run needs, from the command line over the configuration file."""

    paths: List[str]
    rules: List[Rule]
    fix: bool = False
    diff: bool = False
    unsafe_fixes: bool = False
    fix_policy: FixPolicy = DEFAULT_FIX_POLICY  # fixable / unfixable / extend-safe-fixes / extend-unsafe-fixes
    fix_only: bool = False  # apply fixes; report nothing that remains
    torch_version: Optional[Version] = None
    torch_version_source: Optional[str] = None  # where the floor was said, for --show-settings
    # The torch the code moves to; None: the newest release torchlint knows.
    target_torch_version: Optional[Version] = None
    target_torch_version_source: Optional[str] = None  # likewise; None: the default
    # No floor declared: the first torch for the Python the package declares (``least_torch_release``).
    least_torch_version: Optional[Version] = None
    least_torch_version_source: Optional[str] = None
    floor_from_code: bool = False  # a distribution that declares no torch floor (``declares_no_torch_floor``)
    exclude: List[PathPattern] = field(default_factory=list)
    force_exclude: bool = False
    respect_gitignore: bool = True  # directory searches skip what git ignores
    per_file_ignores: List[Tuple[PathPattern, List[str]]] = field(default_factory=list)
    config_path: Optional[str] = None
    config_extends: List[str] = field(default_factory=list)  # what the configuration file extends, nearest first
    output_format: str = "concise"
    statistics: bool = False
    show_fixes: bool = False
    exit_zero: bool = False
    exit_non_zero_on_fix: bool = False
    stdin_filename: Optional[str] = None
    add_noqa: bool = False
    add_noqa_reason: str = ""  # --add-noqa=REASON: written after the codes
    ignore_noqa: bool = False  # report findings on `# noqa` lines too
    report_unused_noqa: bool = False  # report `# noqa: TL...` codes that suppress nothing (TL001)
    quiet: int = 0  # 1: findings only, no summary; 2: nothing on stdout
    jobs: int = 1  # worker processes
    cache_dir: Optional[str] = None  # None: no result cache
    project_root: Optional[str] = None  # the configuration file's folder, else the git work tree, else cwd
    docs_base_url: Optional[str] = None  # where rule links point (``core/links.py``); None: the declared pages

    def is_excluded(self, path: str) -> bool:
        """Is the file or folder ``path`` excluded (its own name or path; searches prune parents)?"""
        by_name, by_path = self._exclude_split()
        if by_name is not None and by_name.match(os.path.basename(os.path.abspath(path))):
            return True
        if any(pattern.matches(path) for pattern in by_path):
            return True
        return self.respect_gitignore and self._git_ignored(path)

    def _git_ignored(self, path: str) -> bool:
        ignored = self.__dict__.get("_git_ignored_cache")
        if ignored is None:
            ignored = self.__dict__["_git_ignored_cache"] = GitIgnored()
        return ignored(path)

    def _exclude_split(self) -> Tuple[Optional["re.Pattern[str]"], List[PathPattern]]:
        """The name-only patterns as one regex (every path of a run is tested
        against them), and the patterns with a ``/``."""
        key = tuple(self.exclude)
        cached = self.__dict__.get("_exclude_cache")
        if cached is None or cached[0] != key:
            names = [p.pattern for p in self.exclude if "/" not in p.pattern]
            regex = re.compile("|".join(f"(?:{fnmatch.translate(n)})" for n in names)) if names else None
            cached = (key, regex, [p for p in self.exclude if "/" in p.pattern])
            self.__dict__["_exclude_cache"] = cached
        return cached[1], cached[2]

    def is_excluded_with_parents(self, path: str) -> bool:
        """Is ``path`` or a folder holding it excluded (for --force-exclude and stdin)?"""
        return any(pattern.matches(path, parents=True) for pattern in self.exclude)

    def ignored_codes(self, path: str) -> Tuple[str, ...]:
        """Codes (prefixes) switched off for ``path`` by per-file-ignores."""
        if not self.per_file_ignores:
            return ()
        index = self.__dict__.get("_ignore_index")
        if index is None or index.entries is not self.per_file_ignores:
            index = self.__dict__["_ignore_index"] = IgnoreIndex(self.per_file_ignores)
        return index.codes(path)

    def rules_for(self, path: str) -> List[Rule]:
        ignored = self.ignored_codes(path)
        if not ignored:
            return self.rules
        return [rule for rule in self.rules if not rule.code.startswith(ignored)]


def _fix_only(args: Any, values: Dict[str, Any]) -> bool:
    """``--fix-only`` / ``--no-fix-only``, else the ``fix-only`` setting (ruff's).
    The setting gives way to a command line that asks for another mode
    (``--diff``, ``--add-noqa``, ``--statistics``): those name what the run is
    for, where the same flags given together are a usage error."""
    given = getattr(args, "fix_only", None)
    if given is not None:
        return bool(given)
    if getattr(args, "diff", False) or getattr(args, "add_noqa", False) or getattr(args, "statistics", False):
        return False
    return bool(values.get("fix-only", False))


def resolve(args: Any, all_rules: Sequence[Rule], cwd: Optional[str] = None) -> Options:
    """Merge the parsed command line ``args`` with the configuration file.

    Raises ConfigError for a bad file or value, SelectionError / SettingsError
    for a bad command-line value.
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    if args.isolated and args.config:
        raise ConfigError("--config and --isolated cannot be used together")
    if args.isolated:
        config = None
    elif args.config:
        if not os.path.isfile(args.config):
            raise ConfigError(f"{args.config}: no such configuration file")
        config = load_file(args.config, all_rules, required=True)
    else:
        config = find_config(cwd, all_rules)
    values = config.values if config else {}
    base = config.directory if config else cwd

    def cli_codes(name: str) -> Optional[List[str]]:
        value = getattr(args, name)
        return parse_codes(value) if value is not None else None

    select = cli_codes("select")
    if select is None:
        select = values.get("select")
    ignore = cli_codes("ignore")
    if ignore is None:
        ignore = values.get("ignore")
    extend_select = [*values.get("extend-select", []), *(cli_codes("extend_select") or [])]
    rules = select_rules(all_rules, select, ignore, extend_select)

    if args.exclude is not None:
        exclude = [PathPattern.make(p, cwd) for p in _split(args.exclude)]
    elif "exclude" in values:
        exclude = [PathPattern.make(p, b) for p, b in config.entries_with_bases("exclude")]
    else:
        exclude = [PathPattern.make(p, cwd) for p in DEFAULT_EXCLUDE]
    if config is not None:
        exclude += [PathPattern.make(p, b) for p, b in config.entries_with_bases("extend-exclude")]
    exclude += [PathPattern.make(p, cwd) for p in _split(args.extend_exclude or "")]

    if args.per_file_ignores is not None:
        try:
            entries = parse_per_file_ignores(args.per_file_ignores)
            for _, codes in entries:
                check_selectors(codes, all_rules)
        except ValueError as exc:
            raise SelectionError(f"--per-file-ignores: {exc}") from None
        per_file = [(PathPattern.make(p, cwd), codes) for p, codes in entries]
    else:
        per_file = [(PathPattern.make(p, b), codes) for (p, codes), b in
                    (config.entries_with_bases("per-file-ignores") if config else [])]

    fix_policy = _fix_policy(args, values, cli_codes, all_rules)
    torch_version, torch_version_source = _torch_floor(args, values, config, base)
    least = least_torch_release(base) if torch_version is None and not args.isolated else None
    floor_from_code = torch_version is None and not args.isolated and declares_no_torch_floor(base)
    target = getattr(args, "target_torch_version", None)
    if target:
        target_torch_version, target_source = _cli_version(target, "--target-torch-version"), \
            "command line: --target-torch-version"
    elif "target-torch-version" in values:
        target_torch_version = values["target-torch-version"]
        target_source = f"configuration file: {_display(config.origin_of('target-torch-version'))} target-torch-version"
    else:
        target_torch_version = target_source = None
    Settings(torch_version, target_torch_version)  # raises SettingsError for a target older than the floor
    unsafe = args.unsafe_fixes if args.unsafe_fixes is not None else values.get("unsafe-fixes", False)
    fix_only = _fix_only(args, values)
    force_exclude = args.force_exclude if args.force_exclude is not None else values.get("force-exclude", False)
    respect = getattr(args, "respect_gitignore", None)
    respect_gitignore = respect if respect is not None else values.get("respect-gitignore", True)

    return Options(
        paths=list(args.paths),
        rules=rules,
        fix=args.fix or fix_only,
        diff=args.diff,
        unsafe_fixes=unsafe,
        fix_policy=fix_policy,
        fix_only=fix_only,
        torch_version=torch_version,
        torch_version_source=torch_version_source,
        target_torch_version=target_torch_version,
        target_torch_version_source=target_source,
        least_torch_version=least.version if least is not None else None,
        least_torch_version_source=f"project metadata: {least.where}" if least is not None else None,
        floor_from_code=floor_from_code,
        docs_base_url=values.get("docs-base-url"),
        exclude=exclude,
        force_exclude=force_exclude,
        respect_gitignore=respect_gitignore,
        per_file_ignores=per_file,
        config_path=config.path if config else None,
        config_extends=list(config.extends) if config else [],
        output_format=args.output_format,
        statistics=args.statistics,
        show_fixes=args.show_fixes,
        exit_zero=args.exit_zero,
        exit_non_zero_on_fix=args.exit_non_zero_on_fix,
        stdin_filename=args.stdin_filename,
        add_noqa=args.add_noqa,
        add_noqa_reason=getattr(args, "add_noqa_reason", "") or "",
        ignore_noqa=getattr(args, "ignore_noqa", False),
        report_unused_noqa=getattr(args, "report_unused_noqa", False),
        quiet=getattr(args, "quiet", 0) or 0,
        jobs=_jobs(getattr(args, "jobs", None)),
        project_root=project_root(cwd, config),
        cache_dir=None if getattr(args, "no_cache", False) else cache_directory(
            project_root(cwd, config), getattr(args, "cache_dir", None)),
    )


def _fix_policy(args: Any, values: Dict[str, Any], cli_codes: Callable[[str], Optional[List[str]]],
                all_rules: Sequence[Rule]) -> FixPolicy:
    """ruff's rules: ``--fixable`` / ``--unfixable`` replace the file's
    values, ``extend-fixable`` adds to ``fixable`` (the file's, then the
    command line's); the safety overrides come from the file only."""
    def given(name: str) -> Optional[List[str]]:
        codes = cli_codes(name) if hasattr(args, name) else None
        try:
            check_selectors(codes or [], all_rules)
        except SelectionError as exc:
            raise SelectionError(f"--{name.replace('_', '-')}: {exc}") from None
        return codes

    fixable = given("fixable")
    if fixable is None:
        fixable = values.get("fixable", ["TL"])
    unfixable = given("unfixable")
    if unfixable is None:
        unfixable = values.get("unfixable", [])
    extend_fixable = [*values.get("extend-fixable", []), *(given("extend_fixable") or [])]
    return FixPolicy(fixable=tuple(fixable) + tuple(extend_fixable), unfixable=tuple(unfixable),
                     extend_safe_fixes=tuple(values.get("extend-safe-fixes", ())),
                     extend_unsafe_fixes=tuple(values.get("extend-unsafe-fixes", ())))


def _torch_floor(args: Any, values: Dict[str, Any], config: Optional[FileConfig], base: str
                 ) -> Tuple[Optional[Version], Optional[str]]:
    """The oldest torch the code must run on, and where that was said: the
    command line, the configuration, else the project's own metadata (not
    with ``--isolated``, which reads no file)."""
    if args.torch_version:
        return _cli_version(args.torch_version, "--torch-version"), "command line: --torch-version"
    if "torch-version" in values:
        return values["torch-version"], f"configuration file: {_display(config.origin_of('torch-version'))} torch-version"
    if args.isolated:
        return None, None
    declared = declared_torch_floor(base)
    if declared is None:
        return None, None
    root = metadata_root(base) or base
    folder = _display(root)
    where = declared.where if folder == os.curdir else f"{os.path.join(folder, '')}{declared.where}"
    return declared.version, f"project metadata: {where}"


def _cli_version(text: str, option: str) -> Version:
    try:
        return parse_release(text)
    except SettingsError as exc:
        raise SettingsError(f"{option}: {exc}") from None


def _jobs(requested: Optional[int]) -> int:
    """Worker processes: as asked, or one per core; never fewer than one."""
    if requested is not None and requested > 0:
        return requested
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _split(text: str) -> List[str]:
    return [part for part in re.split(r"[,\s]+", text) if part]
