#!/usr/bin/env python
"""The deprecation table's fixes, executed under another torch release (issue 35).

    python bench/run_fixes_under.py --python /work/venv214/bin/python [--json OUT] [--markdown]

CI has only the installed torch (2.13), where ``tests/test_deprecation_rewrites_run.py`` runs
every exact fix. This script runs the same witnesses under the torch of another Python (made
with ``python3 -m venv /work/venv214 && /work/venv214/bin/pip install torch==2.14.1``): torchlint
runs here, in this checkout's environment; only the snippets run there, through
``tests/witness_exec.py`` (which needs nothing but torch).

For each table entry with a rewrite and a witness (the test's ``WITNESSES`` and
``LATER_WITNESSES``), in each import spelling, the witness is fixed for a project whose floor and
target are the other torch's release (an entry reported only from a later release: that one), and
the original and the fixed code run there. A case passes when

* the fix is complete: no finding of TL108/TL109/TL117 is left;
* the fixed code runs with every warning an error;
* the original warned or raised there (where torch warns about the entry);
* the fixed code computes what the original computed there; where the original raises there (an
  API the release removed), what it computed under the installed torch, before the removal; where
  it raises in both, the witness's ``expected`` values.

A case whose original and fixed code raise the same error there (``gather_single`` has no gloo
implementation in torch 2.14.1) is counted apart: the fix changes nothing, but nothing ran.
Groups: entries new in the release (deprecated or removed there), entries of a later release whose
fix the release can already run, and the older entries.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

import test_deprecation_rewrites_run as rewrites  # noqa: E402
from torchlint.core.settings import Settings, Version, format_version, parse_version  # noqa: E402
from torchlint.engine.linter import Engine  # noqa: E402
from torchlint.knowledge.deprecations import Deprecation  # noqa: E402
from torchlint.rules import rule_by_code  # noqa: E402
from witness_exec import same  # noqa: E402

EXEC = REPO / "tests" / "witness_exec.py"
GROUPS = ("new in the release", "later entries, runnable there", "older entries")


@dataclass
class Case:
    entry: Deprecation
    spelling: str
    group: str
    original: str
    fixed: str = ""
    problem: str = ""  # why the case failed
    same_error: str = ""  # the error the original and the fixed code both raise
    original_did: str = ""  # what the original did there: warned (the first warning), raised, ran silently
    compared_with: str = ""  # whose values the fixed code's were compared with

    @property
    def id(self) -> str:
        return f"{self.entry.key} [{self.spelling}]"


@dataclass
class Outcome:
    release: str
    cases: List[Case] = field(default_factory=list)
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # (entry key, why)


def torch_version(python: str) -> str:
    found = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                           text=True, timeout=300)
    if found.returncode != 0:
        raise SystemExit(f"{python} cannot import torch:\n{found.stderr.strip()[-2000:]}")
    return found.stdout.strip()


def group_of(entry: Deprecation, release: Version) -> str:
    changed = [parse_version(v)[:2] for v in (entry.deprecated, entry.removed) if v]
    if release[:2] in changed:
        return GROUPS[0]
    if any(v > release[:2] for v in changed):
        return GROUPS[1]
    return GROUPS[2]


def target_of(entry: Deprecation, release: Version) -> Optional[Version]:
    """The release a project moves to for the entry to be reported: the other torch's own, or the
    first later one that reports it (its API must already be there to run)."""
    if entry.status_for(release) is not None:
        return release
    later = entry.first_target()
    return later if later > release else None


def build_cases(release: Version, only: str = "") -> Outcome:
    outcome = Outcome(format_version(release))
    for entry in rewrites._exact_entries():
        if only not in entry.key:
            continue
        if entry.key not in rewrites.WITNESSES and entry.key not in rewrites.LATER_WITNESSES:
            outcome.skipped.append((entry.key, rewrites.NOT_RUNNABLE.get(entry.key, "no witness")))
            continue
        target = target_of(entry, release)
        if target is None:
            outcome.skipped.append((entry.key, f"not reported for torch {format_version(release)} or later"))
            continue
        if not entry.fix_versions.applies_to(release):
            outcome.skipped.append((entry.key, f"the fix needs a newer torch than {format_version(release)}"))
            continue
        engine = Engine([rule_by_code(code) for code in rewrites.ENGINE_RULES],
                        Settings(torch_version=release, target_torch_version=target))
        for spelling in rewrites._spellings(entry):
            case = Case(entry, spelling, group_of(entry, release), rewrites.snippet(entry, spelling))
            unsafe = not entry.exact_fix
            case.fixed = engine.fix(case.original, unsafe=unsafe).source
            left = engine.check(case.fixed).diagnostics
            if case.fixed == case.original:
                case.problem = "not fixed for a floor of " + format_version(release)
            elif left:
                case.problem = "findings left after the fix: " + "; ".join(d.message for d in left)
            outcome.cases.append(case)
    return outcome


def run_batch(python: str, runs: Dict[str, Tuple[str, bool]]) -> Dict[str, Dict[str, Any]]:
    """id -> {values, warnings, error}: each code run under ``python`` (warnings as errors or not)."""
    with tempfile.TemporaryDirectory() as folder:
        cases_file, results_file = Path(folder) / "cases.json", Path(folder) / "results.pt"
        cases_file.write_text(json.dumps([{"id": key, "code": code, "warnings_as_errors": strict}
                                          for key, (code, strict) in runs.items()]), encoding="utf-8")
        done = subprocess.run([python, str(EXEC), str(cases_file), str(results_file)], capture_output=True,
                              text=True, timeout=1800, cwd=folder)
        if done.returncode != 0:
            raise SystemExit(f"{python} {EXEC.name} failed:\n{done.stderr.strip()[-3000:]}")
        return torch.load(results_file, weights_only=False)["results"]


def judge(outcome: Outcome, python: str) -> None:
    runnable = [c for c in outcome.cases if not c.problem]
    runs: Dict[str, Tuple[str, bool]] = {}
    for case in runnable:
        runs[f"original {case.id}"] = (case.original, False)
        runs[f"fixed {case.id}"] = (case.fixed, True)
        witness = rewrites.witness_of(case.entry)
        if witness.expected:
            runs[f"expected {case.id}"] = ("import torch\n" + witness.setup + "\n" + witness.expected, True)
    there = run_batch(python, runs)
    # where the original raises under the other torch: what it computed under the installed one
    raised = {f"original {c.id}": (c.original, False) for c in runnable if there[f"original {c.id}"]["error"]}
    here = run_batch(sys.executable, raised) if raised else {}
    for case in runnable:
        before = there[f"original {case.id}"]
        case.original_did = (f"raised {before['error']}" if before["error"] else
                             f"warned {before['warnings'][0]}" if before["warnings"] else "ran silently")[:200]
        case.problem, case.same_error, case.compared_with = _verdict(case, there, here)


def _verdict(case: Case, there: Dict[str, Dict[str, Any]],
             here: Dict[str, Dict[str, Any]]) -> Tuple[str, str, str]:
    """(problem, same error, what the values were compared with)."""
    before, after = there[f"original {case.id}"], there[f"fixed {case.id}"]
    entry = case.entry
    if after["error"] is not None:
        if after["error"] == before["error"]:
            return "", after["error"], ""
        return f"the fixed code failed: {after['error']}", "", ""
    if entry.warns and not (before["warnings"] or before["error"]):
        return "the original neither warned nor raised", "", ""
    reference, compared_with = before, "the original there"
    if before["error"] is not None:
        reference, compared_with = here.get(f"original {case.id}", {"error": "not run"}), "the original here"
        if reference["error"] is not None:
            reference = there.get(f"expected {case.id}", {"error": "the witness has no expected values"})
            compared_with = "the witness's expected values"
            if reference["error"] is not None:
                return f"no reference values: {reference['error']}", "", ""
    imported = {"m", "nm", entry.old.rsplit(".", 1)[1]}
    expected = {name: value for name, value in reference["values"].items() if name not in imported}
    if not expected:
        return "the witness computes nothing to compare", "", ""
    for name, value in expected.items():
        if name not in after["values"]:
            return f"`{name}` is not computed by the fixed code", "", ""
        if not same(value, after["values"][name]):
            return f"`{name}` differs: {value!r} != {after['values'][name]!r}", "", ""
    return "", "", compared_with


def summary(outcome: Outcome) -> Dict[str, Dict[str, int]]:
    """Per group: entries and cases, those that passed, raised the same error, failed."""
    rows: Dict[str, Dict[str, int]] = {}
    for group in GROUPS:
        cases = [c for c in outcome.cases if c.group == group]
        entries = {c.entry.key for c in cases}
        failed = {c.entry.key for c in cases if c.problem}
        same_error = {c.entry.key for c in cases if c.same_error and not c.problem}
        rows[group] = {
            "entries": len(entries),
            "entries passed": len(entries - failed - same_error),
            "entries same error": len(same_error - failed),
            "entries failed": len(failed),
            "cases": len(cases),
            "cases passed": sum(not c.problem and not c.same_error for c in cases),
            "cases same error": sum(bool(c.same_error) and not c.problem for c in cases),
            "cases failed": sum(bool(c.problem) for c in cases),
        }
    return rows


def markdown(outcome: Outcome, full_version: str) -> str:
    rows = summary(outcome)
    lines = [f"torch {full_version} (CPU), floor and target {outcome.release}; the installed torch "
             f"{torch.__version__} gives the values of an original the release no longer runs.", "",
             "| entries | with a fix and a witness | all spellings pass | same error (nothing ran) | failed "
             "| cases (spellings) | cases passed |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for group, row in rows.items():
        lines.append(f"| {group} | {row['entries']} | {row['entries passed']} | {row['entries same error']} | "
                     f"{row['entries failed']} | {row['cases']} | {row['cases passed']} |")
    for group in GROUPS:
        keys = sorted({c.entry.key for c in outcome.cases if c.group == group})
        if keys:
            lines += ["", f"{group}: " + ", ".join(f"`{k}`" for k in keys)]
    odd = [c for c in outcome.cases if c.problem or c.same_error]
    if odd:
        lines += ["", "Not passed:"]
        lines += [f"- `{c.id}`: " + (c.problem or f"original and fixed raise `{c.same_error[:160]}`") for c in odd]
    if outcome.skipped:
        lines += ["", "Not run: " + "; ".join(f"`{key}` ({why})" for key, why in outcome.skipped)]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="the Python whose torch runs the snippets")
    parser.add_argument("--json", type=Path, help="write every case (code, fix, verdict) here")
    parser.add_argument("--markdown", action="store_true", help="print the summary as markdown")
    parser.add_argument("--only", default="", help="only the entries whose key contains this text")
    args = parser.parse_args()
    full_version = torch_version(args.python)
    release = parse_version(".".join(full_version.split("+")[0].split(".")[:2]))  # 2.14.1 -> 2.14
    outcome = build_cases(release, args.only)
    judge(outcome, args.python)
    if args.json:
        args.json.write_text(json.dumps({
            "torch": full_version, "summary": summary(outcome), "skipped": outcome.skipped,
            "cases": [{"id": c.id, "group": c.group, "original": c.original, "fixed": c.fixed,
                       "original did": c.original_did, "compared with": c.compared_with,
                       "problem": c.problem, "same_error": c.same_error} for c in outcome.cases],
        }, indent=1), encoding="utf-8")
    if args.markdown:
        sys.stdout.write(markdown(outcome, full_version))
    else:
        for group, row in summary(outcome).items():
            sys.stdout.write(f"{group}: " + ", ".join(f"{k} {v}" for k, v in row.items()) + "\n")
        for case in outcome.cases:
            if case.problem or case.same_error:
                sys.stdout.write(f"  {case.id}: {case.problem or 'same error: ' + case.same_error[:200]}\n")
    return 1 if any(c.problem for c in outcome.cases) else 0


if __name__ == "__main__":
    sys.exit(main())
