"""``torchlint rule``: a rule's documentation in the terminal.

``torchlint rule TL101`` prints the rule's page, the text of
``docs/rules/TL101.md`` (rendered by :func:`torchlint.rules.docs.render_rule`)
without the generator's HTML comment; ``torchlint rule --all`` lists every
rule with its name, fix availability and whether it runs by default.

``rule`` is a subcommand only as the first argument: ``torchlint rule ...``.
A file or folder literally named ``rule`` is checked with ``torchlint ./rule``
(or ``torchlint -- rule``, or any option before it: ``torchlint --fix rule``).
"""

from __future__ import annotations

import argparse
from typing import List, Optional, Sequence, TextIO

from torchlint.rules import all_rules, docs
from torchlint.rules.rule import Rule

NAME = "rule"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchlint rule",
        description="Show a rule's documentation, or list every rule.",
        epilog="To check a file or folder named `rule`, run `torchlint ./rule`.",
    )
    parser.add_argument("codes", nargs="*", metavar="CODE", help="rule code (TL101) or name (data-index-scalar)")
    parser.add_argument("--all", action="store_true", help="list every rule: code, name, fix, enabled by default")
    return parser


def main(argv: Sequence[str], stdout: TextIO, stderr: TextIO) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv))
    rules = all_rules()
    if args.all and args.codes:
        parser.error("give rule codes or --all, not both")
    if args.all:
        stdout.write(render_listing(rules))
        return 0
    if not args.codes:
        parser.error("give a rule code (e.g. `torchlint rule TL101`) or --all")
    chosen: List[Rule] = []
    for code in args.codes:
        rule = find_rule(rules, code)
        if rule is None:
            print(f"torchlint: error: unknown rule {code!r} (see `torchlint rule --all`)", file=stderr)
            return 2
        chosen.append(rule)
    stdout.write("\n".join(render_page(rule) for rule in chosen))
    return 0


def find_rule(rules: Sequence[Rule], text: str) -> Optional[Rule]:
    """The rule whose code (any case) or name is ``text``."""
    wanted = text.strip()
    for rule in rules:
        if rule.code == wanted.upper() or rule.name == wanted.lower():
            return rule
    return None


def render_page(rule: Rule) -> str:
    """The rule's docs page, minus the generator's HTML comment."""
    note = docs.generated_note(rule)
    return docs.render_rule(rule).replace(note + "\n\n", "", 1)


def render_listing(rules: Sequence[Rule]) -> str:
    header = ("Code", "Name", "Fix", "Default", "What it flags")
    rows = [
        (rule.code, rule.name, docs.fix_label(rule), "yes" if rule.enabled_by_default else "no", " ".join(rule.summary.split()))
        for rule in rules
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    lines = []
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[4])
    lines.append("")
    lines.append(
        "Fix: safe = applied by --fix; unsafe = needs --fix --unsafe-fixes; "
        "sometimes = safe where the rewrite is exact, otherwise reported only; none = reported only."
    )
    lines.append("Default: no = runs only when selected (--select CODE). Details: torchlint rule CODE.")
    return "\n".join(lines) + "\n"
