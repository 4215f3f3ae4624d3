"""What a rule is: one self-describing unit.

A rule states its code, name, message and rationale, the examples it flags
(with their fixed form) and accepts, and how safe its fix is. The test suite
and the pages in ``docs/rules/`` are generated from these same attributes, so
the documentation cannot drift from the behaviour.
"""

from __future__ import annotations

import enum
import textwrap
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Callable,
    ClassVar,
    Iterable,
    Iterator,
    Optional,
    Sequence,
    Tuple,
    Type,
)

from torchlint.analysis.screens import Pattern, occurs
from torchlint.core.diagnostic import Fix
from torchlint.core.settings import ALWAYS, VersionRange

if TYPE_CHECKING:  # pragma: no cover
    import ast

    import libcst as cst

    from torchlint.analysis.context import NodeContext
    from torchlint.analysis.outline import Outline


class FixSafety(enum.Enum):
    """How much a rule's fix can be trusted."""

    NONE = "none"  # the rule never offers a fix
    SAFE = "safe"  # applied by --fix; keeps behaviour
    UNSAFE = "unsafe"  # needs --unsafe-fixes; changes behaviour (usually the point)
    SOMETIMES = "sometimes"  # safe where the rewrite is exact, otherwise flag only
    MIXED = "safe/unsafe"  # safe where exact, unsafe where it changes behaviour (as intended), else flag only


@dataclass(frozen=True)
class Example:
    """A snippet a rule flags, and what ``--fix`` turns it into.

    ``fixed`` is None when no fix applies to this snippet. ``runnable``
    snippets are executed under real torch by the test suite: the original and
    the fixed code must compute the same values, the fixed code warning-free.
    ``count`` is how many findings the snippet produces. ``raises`` names the
    exception the original raises under today's torch (the pitfall itself);
    then only the fixed code's clean run is compared. ``silent`` says the
    original runs without any warning under today's torch (a deprecation
    torch documents but does not report, e.g. ``torch.ger``). ``differs``:
    the original completes under today's torch but computes what the pitfall
    makes (counts keyed by tensor identity), and the fix restores what it
    computed on the torch it was written for; only the fixed code's clean run
    can be checked. ``python3`` False: the original does not even compile
    under Python 3 (see TL115).
    """

    code: str
    fixed: Optional[str] = None
    count: int = 1
    runnable: bool = False
    raises: Optional[str] = None
    silent: bool = False
    differs: bool = False
    # False: the original is torch-era syntax Python 3 rejects (``async=``),
    # which the rule repairs; it cannot be compiled, only the fixed form can.
    python3: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", dedent(self.code))
        if self.fixed is not None:
            object.__setattr__(self, "fixed", dedent(self.fixed))


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@dataclass(frozen=True)
class RepairSite:
    """One place a syntax repair rewrote, with what to report there."""

    line: int  # 1-based, in the original text
    column: int  # 0-based, in the original text
    message: str
    safe: bool
    old: str  # the text at the site (``async``)
    new: str  # what the repair wrote there (``non_blocking``)


@dataclass(frozen=True)
class SyntaxRepair:
    """Torch-era syntax Python 3 rejects, rewritten at the token level.

    ``text`` is the source with every site rewritten; ``original_column``
    maps a column of ``text`` on a given line back to the source.
    """

    text: str
    sites: Sequence[RepairSite]
    original_column: Callable[[int, int], int]


@dataclass
class Finding:
    """What a rule reports: a node to point at, a message and maybe a fix."""

    node: cst.CSTNode
    message: str  # at most MAX_MESSAGE characters: one line of concise output
    fix: Optional[Fix] = None
    detail: str = ""  # the longer explanation, shown by ``--output-format full``


# The longest concise message: a finding is one short line; the why goes in
# ``detail`` and on the rule's page.
MAX_MESSAGE = 90


def fitting(*variants: str) -> str:
    """The first of ``variants`` (most informative first) that fits in
    ``MAX_MESSAGE`` characters; the last one otherwise. For messages that
    quote the user's code, whose length torchlint does not choose."""
    for variant in variants:
        if len(variant) <= MAX_MESSAGE:
            return variant
    return variants[-1]


class Rule:
    """Base class of every rule; subclasses fill in the class attributes.

    A rule declares which node types it wants (``check_<NodeType>`` methods)
    and which source words must be present for it to possibly match
    (``triggers``), so files that cannot match are never analysed for it.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, shown in rule listings
    why: ClassVar[str]  # why the pattern is bad (docs)
    fix_safety: ClassVar[FixSafety] = FixSafety.NONE
    fix_description: ClassVar[str] = ""
    flagged: ClassVar[Sequence[Example]] = ()
    accepted: ClassVar[Sequence[str]] = ()
    # The textual screen: a file is analysed for this rule only if one of
    # ``triggers`` and all of ``requires`` occur in it (substrings or compiled
    # regexes). Both must be necessary conditions of a finding: they decide
    # which files are parsed at all, so they are what makes torchlint fast.
    triggers: ClassVar[Tuple[Pattern, ...]] = ()
    requires: ClassVar[Tuple[Pattern, ...]] = ()
    # Public sources only: torch docs, release notes, GitHub issues.
    references: ClassVar[Tuple[str, ...]] = ()
    enabled_by_default: ClassVar[bool] = True
    # Torch versions where the advice holds, checked against the oldest torch
    # the project supports (``--torch-version``). Table-driven rules also
    # check each entry's own range.
    torch_versions: ClassVar[VersionRange] = ALWAYS
    # True when a finding inside one top-level statement can depend on the
    # body of another top-level def or class, or a finding in a method on
    # another method's body (file-wide facts, e.g. "is this name
    # differentiated anywhere"). Otherwise the rule is statement-local and
    # checking may leave out the defs, classes and methods it cannot flag
    # (see ``narrowing.py``).
    whole_file: ClassVar[bool] = False
    # Findings inside code that a torch version gate protects (``if`` on
    # ``torch.__version__``, a ``try``/``except ImportError`` fallback: see
    # ``analysis/version_gates.py``) are dropped: the old spelling there is
    # what the gate handles. None means: the deprecation family (TL1xx) does,
    # the others (bugs and performance hints hold on every version) do not.
    version_gated: ClassVar[Optional[bool]] = None
    # libcst node types (by class name, e.g. "Decorator") of which the rule
    # reads every node of the analysed module through ``ctx.file.nodes(...)``:
    # the single traversal gathers them, no rule walks the tree again.
    gathers: ClassVar[Tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.accepted = tuple(dedent(a) for a in cls.accepted)

    @classmethod
    def may_match(cls, source: str) -> bool:
        """Cheap textual screen: can this rule possibly flag ``source``?"""
        if cls.triggers and not any(occurs(p, source) for p in cls.triggers):
            return False
        return all(occurs(p, source) for p in cls.requires)

    @classmethod
    def may_match_tree(cls, outline: "Outline") -> bool:
        """The second screen, on Python's own parse tree (see
        ``analysis/outline.py``), for files that passed the textual one.
        Rules override it with the shapes every finding must have; like
        ``triggers`` it must never say no to a file the rule would flag."""
        return True

    @classmethod
    def screen_candidates(cls, outline: "Outline") -> Optional[Iterable["ast.AST"]]:
        """Where the outline screen finds its evidence, for rules that can say:
        nodes of ``outline`` such that each finding inside a def, class or
        method lies in one that also spans the line of one of them. None (the
        default): the screen cannot say. When such a rule's screen accepts a
        file's module-level code, narrowing keeps the defs, classes and
        methods holding candidates instead of analysing the whole file
        (``engine/narrowing.py``). A rule that defines this defines its
        ``may_match_tree`` as "some candidate exists", so the two agree."""
        return None

    @classmethod
    def repair_syntax(cls, source: str) -> Optional[SyntaxRepair]:
        """For a ``source`` Python 3 cannot parse: the rule's token-level
        rewrite of the torch-era syntax in it, or None (most rules)."""
        return None

    @classmethod
    def respects_version_gates(cls) -> bool:
        return cls.code.startswith("TL1") if cls.version_gated is None else cls.version_gated

    @classmethod
    def moot_ranges(cls, outline: "Outline", lines: Sequence[int]) -> Sequence[Tuple[int, int]]:
        """First and last line of the parts of ``outline``'s file where this
        rule's findings cannot happen: code that runs only under a condition
        ruling the problem out (TL203: only where CUDA is available). The
        engine drops the findings there. ``lines``: the lines of the rule's
        findings in the file. Most rules have none."""
        return ()

    @classmethod
    def has_moot_ranges(cls) -> bool:
        return getattr(cls.moot_ranges, "__func__", None) is not Rule.moot_ranges.__func__

    @classmethod
    def has_outline_screen(cls) -> bool:
        return getattr(cls.may_match_tree, "__func__", None) is not Rule.may_match_tree.__func__

    @classmethod
    def node_handlers(cls) -> Iterator[Tuple[Type[cst.CSTNode], str]]:
        """Yield (node type, method name) for each ``check_<Type>`` method."""
        import libcst as cst  # only engines need it: rule metadata stays cheap to load

        for attr in dir(cls):
            if attr.startswith("check_"):
                node_type = getattr(cst, attr[len("check_"):], None)
                if isinstance(node_type, type) and issubclass(node_type, cst.CSTNode):
                    yield node_type, attr

    @classmethod
    def gathered_types(cls) -> Iterator[Type[cst.CSTNode]]:
        """The libcst node types named by ``gathers``."""
        import libcst as cst

        for name in cls.gathers:
            node_type = getattr(cst, name)
            assert isinstance(node_type, type) and issubclass(node_type, cst.CSTNode), name
            yield node_type

    def __repr__(self) -> str:
        return f"<{self.code} {self.name}>"


CheckResult = Iterable[Finding]
CheckFn = Callable[["cst.CSTNode", "NodeContext"], CheckResult]
