"""Running a witness (a snippet that uses a torch API) under torch, and comparing what it computed.

``tests/test_deprecation_rewrites_run.py`` runs its witnesses here under the
installed torch; ``bench/run_fixes_under.py`` runs the same witnesses under
another Python (torch 2.14.1's environment), where neither torchlint nor
pytest is installed, so this module needs only the standard library and torch:

    python tests/witness_exec.py CASES.json RESULTS.pt

CASES.json is a list of ``{"id", "code", "warnings_as_errors"}``; RESULTS.pt
(``torch.save``) maps each id to ``{"values", "warnings", "error"}``: the
values ``values`` keeps (tensors, detached; numbers, strings, dtypes, lists and
tuples of them), the warnings as ``Category: message`` and the error as
``Type: message`` (None when the code ran).
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any, Dict, List, Optional

import torch


class Run:
    def __init__(self, values: Dict[str, Any], caught: List[warnings.WarningMessage],
                 error: Optional[BaseException]) -> None:
        self.values, self.warnings, self.error = values, caught, error


def execute(code: str, warnings_as_errors: bool) -> Run:
    """Run ``code`` in a fresh namespace (seed 0, every torch warning shown), recording its warnings
    or, with ``warnings_as_errors``, failing on the first one."""
    namespace: Dict[str, Any] = {"__name__": "__witness__"}
    error: Optional[BaseException] = None
    warn_always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # once-per-process warnings show in every run
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error" if warnings_as_errors else "always")
        torch.manual_seed(0)
        try:
            exec(compile(code, "<witness>", "exec"), namespace)
        except Exception as exc:
            error = exc
        finally:
            torch.set_warn_always(warn_always)
            restore_global_state()
    return Run(values(namespace), list(caught), error)


def values(namespace: Dict[str, Any]) -> Dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # looking at an imported deprecated object (``reduce_op``) warns
        return {name: value for name, value in namespace.items()
                if not name.startswith("_") and _comparable(value)}


def _comparable(value: Any) -> bool:
    if isinstance(value, (torch.Tensor, bool, int, float, str, torch.dtype)):
        return True
    return isinstance(value, (list, tuple)) and all(_comparable(v) for v in value)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return (a.shape == b.shape and a.dtype == b.dtype
                and torch.allclose(a.detach().double(), b.detach().double(), atol=1e-6, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def restore_global_state() -> None:
    """What a witness may change for the whole process (a failing one may stop half-way)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.set_default_dtype(torch.float32)
        torch.use_deterministic_algorithms(False)
        for device, dtype in (("cpu", torch.bfloat16), ("cuda", torch.float16), ("ipu", torch.float16),
                              ("xla", torch.bfloat16)):
            torch.set_autocast_dtype(device, dtype)
            torch.set_autocast_enabled(device, False)
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


def _detached(value: Any) -> Any:
    """A value ``torch.save`` can write (a non-leaf tensor that requires grad cannot be saved)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value)
    return value


def _describe(error: Optional[BaseException]) -> Optional[str]:
    return None if error is None else f"{type(error).__name__}: {error}"


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: python witness_exec.py CASES.json RESULTS.pt\n")
        return 2
    cases = json.loads(open(argv[0], encoding="utf-8").read())
    results: Dict[str, Dict[str, Any]] = {}
    for case in cases:
        run = execute(case["code"], bool(case["warnings_as_errors"]))
        results[case["id"]] = {
            "values": {name: _detached(value) for name, value in run.values.items()},
            "warnings": [f"{w.category.__name__}: {w.message}" for w in run.warnings],
            "error": _describe(run.error),
        }
    torch.save({"torch": torch.__version__, "results": results}, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
