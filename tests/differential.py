"""The differential fix campaign: fixes never change what working code computes.

Each program of ``torch_code.differential_program(seed, index)`` (a rule's
example, mutated without changing what it computes) is fixed by the real
engine twice, safe fixes only and with ``unsafe=True``. Both outputs must
compile, fixing them again must change nothing, and a fresh check of each
must not report a fixable finding of a rule the fix claims to have fixed.
Where the safe fixes changed the text, the original and the fixed program run
under torch in a worker process (seeded, warnings ignored, a time limit): if
the original completes, the fixed one must complete too, print the same text
and leave the same module-level values (tensors compared with
``torch.equal`` / ``allclose``). Programs whose original raises are kept for
the other checks only.

Used by tests/test_differential_fixes.py (a bounded CI run) and
bench/differential_fixes.py (a long campaign).
"""

from __future__ import annotations

import io
import multiprocessing
import os
import signal
import tempfile
import traceback
import warnings
from collections import Counter
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set

from torch_code import Program, compiles, computed_values, differential_program, imported_names, same_value

from torchlint.engine.linter import Engine, FixResult
from torchlint.rules import all_rules

RUN_SECONDS = 10  # one program's run in the worker
WAIT_SECONDS = 40  # the worker's answer, import and all, before it is replaced


@dataclass
class Outcome:
    """One run of a program: what it printed, the values it left, or the error it raised."""

    printed: str = ""
    values: Dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None


@dataclass
class Failure:
    kind: str
    program: Program
    detail: str
    fixed: str = ""

    def describe(self) -> str:
        return (f"[{self.kind}] program {self.program.index} ({self.program.origin}; "
                f"{', '.join(self.program.mutations) or 'unmutated'}): {self.detail}\n"
                f"--- original\n{self.program.source}--- fixed\n{self.fixed}")

    def as_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "index": self.program.index, "origin": self.program.origin,
                "mutations": self.program.mutations, "detail": self.detail,
                "source": self.program.source, "fixed": self.fixed}


@dataclass
class Report:
    seed: int
    count: int = 0
    safe_fixed: int = 0  # programs the safe fixes changed
    unsafe_fixed: int = 0
    compared: int = 0  # of those, programs whose original ran: the values were compared
    original_raised: int = 0  # ... and those whose original raised (fix checked to compile only)
    original_differs: int = 0  # ... and those whose original computes what the pitfall makes (the same)
    fixes: Counter = field(default_factory=Counter)  # rule code -> fixes applied (safe run)
    failures: List[Failure] = field(default_factory=list)

    def as_json(self) -> Dict[str, Any]:
        return {"seed": self.seed, "count": self.count, "safe_fixed": self.safe_fixed,
                "unsafe_fixed": self.unsafe_fixed, "compared": self.compared,
                "original_raised": self.original_raised, "original_differs": self.original_differs, "fixes": dict(sorted(self.fixes.items())),
                "failures": [failure.as_json() for failure in self.failures]}


# --------------------------------------------------------------------------
# running programs in a worker process
# --------------------------------------------------------------------------


def _reset_torch(torch) -> None:
    """The global state the examples touch, as a fresh process has it (so that runs do not leak)."""
    import random

    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    # torch.empty's memory is whatever was there: filled (with NaN) it prints and compares the same
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    torch.manual_seed(0)
    random.seed(0)
    try:
        import numpy

        numpy.random.seed(0)
    except ImportError:
        pass


def _on_alarm(signum, frame):
    raise TimeoutError(f"ran over {RUN_SECONDS} s")


def _run_here(source: str) -> Outcome:
    import torch

    _reset_torch(torch)
    namespace: Dict[str, Any] = {"__name__": "__main__"}
    printed = io.StringIO()
    outcome = Outcome()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(RUN_SECONDS)
    try:
        with warnings.catch_warnings(), redirect_stdout(printed):
            warnings.simplefilter("ignore")
            exec(compile(source, "<program>", "exec"), namespace)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt of the program are its errors too
        outcome.error = f"{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
    outcome.printed = printed.getvalue()
    outcome.values = {name: value.detach().clone() if isinstance(value, torch.Tensor) else value
                      for name, value in computed_values(namespace).items()}
    return outcome


def _serve(connection) -> None:
    """The worker: runs each source it receives in a fresh namespace, in a scratch folder."""
    import torch

    torch.set_num_threads(1)  # the same reductions in every run, and a fair share of a small machine
    os.chdir(tempfile.mkdtemp(prefix="torchlint-differential-"))
    while True:
        source = connection.recv()
        if source is None:
            return
        try:
            outcome = _run_here(source)
            connection.send(outcome)
        except Exception:  # a value that does not pickle: say so rather than hang the caller
            connection.send(Outcome(error="the worker failed:\n" + traceback.format_exc()))


class Runner:
    """A worker process that runs programs, replaced when one hangs or kills it."""

    def __init__(self) -> None:
        self._process = None
        self._connection = None

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        ours, theirs = context.Pipe()
        self._process = context.Process(target=_serve, args=(theirs,), daemon=True)
        self._process.start()
        self._connection = ours

    def run(self, source: str) -> Outcome:
        if self._process is None or not self._process.is_alive():
            self._start()
        self._connection.send(source)
        if self._connection.poll(WAIT_SECONDS):
            try:
                return self._connection.recv()
            except EOFError:
                pass
        self.close()
        return Outcome(error="the run did not finish (hung or killed its process)")

    def close(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                try:
                    self._connection.send(None)
                except OSError:
                    pass
                self._process.join(2)
                if self._process.is_alive():
                    self._process.kill()
                    self._process.join()
        self._process = self._connection = None


# --------------------------------------------------------------------------
# judging one program
# --------------------------------------------------------------------------


def behaviour_change(original: Outcome, fixed: Outcome, imported: Set[str] = frozenset()) -> Optional[str]:
    """What the fixed run did differently from the original (which completed), or None.

    A fix may drop an import it made unused (``from torch import has_cuda`` once every use reads
    ``torch.backends.cuda.is_built()``): such names may be gone, never hold another value."""
    if fixed.error is not None:
        return f"the fixed program raised {fixed.error}"
    if fixed.printed != original.printed:
        return f"printed {fixed.printed!r} instead of {original.printed!r}"
    if sorted(set(original.values) - imported) != sorted(set(fixed.values) - imported) or \
            not set(fixed.values) <= set(original.values):
        return f"module variables {sorted(fixed.values)} instead of {sorted(original.values)}"
    for name, value in original.values.items():
        if name not in fixed.values:
            continue  # an import the fix dropped
        same, why = same_value(value, fixed.values[name])
        if not same:
            return f"`{name}` differs: {why}"
    return None


def _soundness(engine: Engine, program: Program, result: FixResult, unsafe: bool) -> List[Failure]:
    """Compiles, idempotent, and nothing the fix claims to fix left fixable."""
    mode = "unsafe" if unsafe else "safe"
    fixed = result.source
    if result.internal_errors:
        return [Failure(f"{mode} fix: internal error", program, "; ".join(result.internal_errors), fixed)]
    if not compiles(fixed):
        return [Failure(f"{mode} fix does not compile", program, f"fixed by {dict(result.fixed)}", fixed)]
    failures = []
    again = engine.fix(fixed, unsafe=unsafe)
    if again.source != fixed:
        failures.append(Failure(f"{mode} fix not idempotent", program,
                                f"a second fix applied {dict(again.fixed)}", fixed))
    left = sorted({(d.code, d.line) for d in engine.check(fixed).diagnostics
                   if d.code in result.fixed and d.fix is not None and (d.fix.safe or unsafe)})
    if left:
        failures.append(Failure(f"{mode} fix left fixable findings", program,
                                f"fixed {dict(result.fixed)}, still fixable: {left}", fixed))
    return failures


def judge(engine: Engine, runner: Runner, program: Program, report: Report) -> None:
    """Check one program, adding its figures and failures to ``report``."""
    report.count += 1
    safe = engine.fix(program.source, unsafe=False)
    unsafe = engine.fix(program.source, unsafe=True)
    report.failures += _soundness(engine, program, safe, unsafe=False)
    report.failures += _soundness(engine, program, unsafe, unsafe=True)
    report.unsafe_fixed += unsafe.source != program.source
    if safe.source == program.source or not compiles(safe.source):
        return
    report.safe_fixed += 1
    report.fixes.update(safe.fixed)
    if program.pitfall_changes_values:
        report.original_differs += 1  # the fix changes the values on purpose (``Example.differs``)
        return
    original = runner.run(program.source)
    if original.error is not None:
        report.original_raised += 1
        return
    report.compared += 1
    change = behaviour_change(original, runner.run(safe.source), imported_names(program.source))
    if change is not None:
        report.failures.append(Failure(f"safe fix changed behaviour ({', '.join(sorted(safe.fixed))})",
                                       program, change, safe.source))


def campaign(seed: int, count: int, start: int = 0, progress=None) -> Report:
    """Programs ``start`` .. ``start + count - 1`` of campaign ``seed``, judged."""
    engine = Engine(all_rules())  # every rule, opt-in ones included
    runner = Runner()
    report = Report(seed)
    try:
        for index in range(start, start + count):
            judge(engine, runner, differential_program(seed, index), report)
            if progress is not None:
                progress(report)
    finally:
        runner.close()
    return report
