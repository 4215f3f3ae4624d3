"""Migration benchmark: do real 2017-2019 scripts run on today's torch after `torchlint --fix`?

Not a CI test. Each script of ``SCRIPTS`` (a public repository, a pinned
commit, a path; self-contained: random data or data files of the same
repository, no downloads) is fetched at run time into the folder given on the
command line, never committed. Four copies of it are run under the installed
torch, seeded (``random``, ``numpy``, ``torch``: seed 0) by this file's
``--run-one`` mode:

- ``before``: as written;
- ``torchlint``: after ``torchlint --fix --unsafe-fixes``;
- ``torchfix``: after TorchFix's ``--fix`` (with ``--torchfix BIN``);
- ``hand``: after the hand migration of ``migrate_hand.py`` (small edit
  lists: line, old text, new text; empty for a script that runs as written).

Each fixed copy is run with DeprecationWarning and FutureWarning as errors
(``warning-free``), and again without when that fails (``ran``). The report
prints those counts, how many fixed copies print what the hand migration
prints (the same seeded numbers), each remaining failure's first error line
with whether it is in torchlint's scope (``OUT_OF_SCOPE`` says why not), and
any script that ran before and fails after a fix (a fix that broke it; the
exit status is then 1).

Fetching: from ``https://raw.githubusercontent.com/<repo>/<commit>/<path>``,
or, with ``--mirrors DIR``, from local git mirrors ``DIR/<owner>+<name>/repo``
(``git show <commit>:<path>``) on machines without network access. The
MorvanZhou scripts need ``matplotlib`` (run with the Agg backend).

    python bench/migrate.py /tmp/migrate [--mirrors /work/.mirror] [--torchfix BIN] [--timeout 300]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from migrate_hand import HAND_EDITS  # noqa: E402

WARNINGS_AS_ERRORS = ["-W", "error::DeprecationWarning", "-W", "error::FutureWarning"]
VARIANTS = ("torchlint", "torchfix", "hand")


@dataclass(frozen=True)
class Script:
    repo: str  # owner/name on GitHub
    commit: str
    path: str
    extras: Tuple[str, ...] = ()  # data files of the same repository the script reads
    call: Optional[str] = None  # a model file's test function, called after the file runs

    @property
    def key(self) -> str:
        return f"{self.repo}:{self.path}"

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.commit[:7]}:{self.path}"


def _scripts(repo: str, commit: str, paths: Sequence[str], **options) -> List[Script]:
    return [Script(repo, commit, path, **options) for path in paths]


# jcjohnson/pytorch-examples before its torch 0.4 update (2017-11-01): Variable,
# .data[0], a legacy autograd Function, size_average.
_JCJ = "0f1b88a38e1fd761dd4ee22398d0efec7a3c7faf"
# hunkim/PyTorchZeroToAll (2018-03-28, torch 0.3): lecture scripts.
_HUNKIM = "edd7ba1f19a8d2e74188d6caf6b020dc20130e53"
# MorvanZhou/PyTorch-Tutorial just before its "update to torch 0.4" (2018-05-30).
_MORVAN = "538ba189758d8c5dc3abe164a4c1c69556dee88b"
# kuangliu/pytorch-cifar before its "Update to v0.4" (2018-01-29): model files,
# each run on a random batch by its own test function.
_KUANGLIU = "e010fe867f38075d3b8bb878b82f8a19774d5962"
# pytorch/examples (2018-03-23, torch 0.3.1).
_EXAMPLES = "dcdabc22b305d2f2989c6f03570dfcd3919e8a5b"
# yunjey/pytorch-tutorial before "Update tutorials for pytorch 0.4.0" (2018-05-09).
_YUNJEY = "1016ac031ff35406ae36aaad80e1bd671a98e688"

SCRIPTS: List[Script] = [
    *_scripts("jcjohnson/pytorch-examples", _JCJ, (
        "tensor/two_layer_net_tensor.py",
        "autograd/two_layer_net_autograd.py",
        "autograd/two_layer_net_custom_function.py",
        "nn/two_layer_net_nn.py",
        "nn/two_layer_net_optim.py",
        "nn/two_layer_net_module.py",
        "nn/dynamic_net.py",
    )),
    *_scripts("hunkim/PyTorchZeroToAll", _HUNKIM, (
        "03_auto_gradient.py",
        "05_linear_regression.py",
        "06_logistic_regression.py",
        "12_1_rnn_basics.py",
        "12_2_hello_rnn.py",
        "12_3_hello_rnn_seq.py",
        "12_4_hello_rnn_emb.py",
        "13_4_pack_pad.py",
    )),
    *_scripts("hunkim/PyTorchZeroToAll", _HUNKIM, (
        "07_diabets_logistic.py",
        "08_2_dataset_loade_logistic.py",
    ), extras=("data/diabetes.csv.gz",)),
    *_scripts("MorvanZhou/PyTorch-Tutorial", _MORVAN, (
        "tutorial-contents/201_torch_numpy.py",
        "tutorial-contents/202_variable.py",
        "tutorial-contents/203_activation.py",
        "tutorial-contents/301_regression.py",
        "tutorial-contents/302_classification.py",
        "tutorial-contents/303_build_nn_quickly.py",
        "tutorial-contents/304_save_reload.py",
        "tutorial-contents/305_batch_train.py",
        "tutorial-contents/306_optimizer.py",
        "tutorial-contents/403_RNN_regressor.py",
        "tutorial-contents/406_GAN.py",
        "tutorial-contents/406_conditional_GAN.py",
        "tutorial-contents/501_why_torch_dynamic_graph.py",
        "tutorial-contents/503_dropout.py",
        "tutorial-contents/504_batch_normalization.py",
    )),
    *[Script("kuangliu/pytorch-cifar", _KUANGLIU, f"models/{name}.py", call=call) for name, call in (
        ("densenet", "test_densenet"),
        ("dpn", "test"),
        ("mobilenet", "test"),
        ("mobilenetv2", "test"),
        ("pnasnet", "test"),
        ("preact_resnet", "test"),
        ("resnet", "test"),
        ("resnext", "test_resnext"),
        ("senet", "test"),
        ("shufflenet", "test"),
    )],
    Script("pytorch/examples", _EXAMPLES, "regression/main.py"),
    Script("yunjey/pytorch-tutorial", _YUNJEY, "tutorials/01-basics/linear_regression/main.py"),
]

# Failures that torchlint cannot or should not fix, by ``Script.key``: why not.
OUT_OF_SCOPE: Dict[str, str] = {
    "hunkim/PyTorchZeroToAll:12_4_hello_rnn_emb.py":
        "a bug of the script, failing on torch 0.3 too: `Model.forward` reads `self.num_layers`, never set",
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/406_GAN.py":
        "`opt_D.step()` runs between `D_loss.backward(retain_graph=True)` and `G_loss.backward()` through D; "
        "until torch 1.4 the optimizer's in-place update went unseen by autograd, since 1.5 it is an error. Reordering "
        "the step changes the numbers: no behaviour-keeping rewrite exists",
    "MorvanZhou/PyTorch-Tutorial:tutorial-contents/406_conditional_GAN.py":
        "as 406_GAN.py: an optimizer step inside a retained graph; no behaviour-keeping rewrite exists",
    "kuangliu/pytorch-cifar:models/shufflenet.py":
        "Python 2 integer division: `out_planes/4` and `C/g` are ints in Python 2, floats in Python 3, and torch "
        "sizes must be ints (the hand migration writes `//`). Porting Python 2 to 3 is not torchlint's job, and "
        "`/` -> `//` is not exact in general",
}


# A number as printed: ``4``, ``-0.25``, ``4.``, ``1.2346e+05`` (not the digits of ``Backward0``, ``float64``).
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def same_numbers(printed: str, expected: str) -> bool:
    """Do two outputs print the same numbers, each to the precision the less
    precise of the two shows (``tensor(0.1235)`` is ``0.12345678``)?"""
    found, wanted = _NUMBER.findall(printed), _NUMBER.findall(expected)
    if len(found) != len(wanted):
        return False
    for a, b in zip(found, wanted):
        if a != b and abs(float(a) - float(b)) > 0.5 * 10.0 ** -min(_decimals(a), _decimals(b)) * (1 + 1e-9):
            return False
    return True


def _decimals(number: str) -> int:
    """How many decimals ``number`` shows (negative for ``1.2e+05``'s tens)."""
    mantissa, _, exponent = number.lower().partition("e")
    shown = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return shown - (int(exponent) if exponent else 0)


@dataclass
class Run:
    ok: bool
    error: str  # the first error line (the exception), "" when it ran
    stdout: str = ""


def fetch(repo: str, commit: str, path: str, mirrors: Optional[Path]) -> bytes:
    if mirrors is not None:
        git_dir = mirrors / repo.replace("/", "+") / "repo"
        return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                              check=True, capture_output=True).stdout
    url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 (a fixed https URL)
        return response.read()


def apply_hand_edits(text: str, edits: Sequence[Tuple[int, str, str]], label: str) -> str:
    """``text`` with each (line, old, new) edit made; a stale edit is an error, never skipped."""
    lines = text.splitlines(keepends=True)
    for line, old, new in edits:
        if old not in lines[line - 1]:
            raise SystemExit(f"migrate_hand.py: {label}:{line}: {old!r} not found in {lines[line - 1]!r}")
        lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "".join(lines)


_RUNS: Dict[Tuple[bytes, bool], Run] = {}  # a copy no tool changed runs as the original did (seeded)


def run(script: Script, root: Path, strict: bool, timeout: int) -> Run:
    path = root / script.repo.replace("/", "+") / script.path
    key = (script.key.encode() + b"\0" + path.read_bytes(), strict)
    if key not in _RUNS:
        _RUNS[key] = _run(script, path, strict, timeout)
    return _RUNS[key]


def _run(script: Script, path: Path, strict: bool, timeout: int) -> Run:
    command = [sys.executable, *(WARNINGS_AS_ERRORS if strict else []), os.path.abspath(__file__),
               "--run-one", path.name, *(["--call", script.call] if script.call else [])]
    environment = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    try:
        done = subprocess.run(command, cwd=path.parent, capture_output=True, text=True, timeout=timeout,
                              env=environment)
    except subprocess.TimeoutExpired:
        return Run(False, f"timed out after {timeout} s")
    if done.returncode == 0:
        return Run(True, "", done.stdout)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return Run(False, lines[-1] if lines else f"exit status {done.returncode}", done.stdout)


def run_one(path: str, call: Optional[str]) -> None:
    """Run one script as ``__main__``, seeded, in this process (the ``--run-one`` mode)."""
    import random
    import runpy

    import numpy
    import torch

    random.seed(0)
    numpy.random.seed(0)
    torch.manual_seed(0)
    sys.argv = [path]
    sys.path.insert(0, os.getcwd())
    namespace = runpy.run_path(path, run_name="__main__")
    if call:
        namespace[call]()


def prepare(folder: Path, mirrors: Optional[Path]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    for script in SCRIPTS:
        base = script.repo.replace("/", "+")
        for path in (script.path, *script.extras):
            data = fetch(script.repo, script.commit, path, mirrors)
            for variant in ("before", *VARIANTS):
                target = folder / variant / base / path
                target.parent.mkdir(parents=True, exist_ok=True)
                if variant == "hand" and path == script.path:
                    text = data.decode("utf-8")
                    target.write_text(apply_hand_edits(text, HAND_EDITS.get(script.key, ()), script.key),
                                      encoding="utf-8")
                else:
                    target.write_bytes(data)


def fix_with_tools(folder: Path, torchfix: Optional[str]) -> None:
    fixed = subprocess.run([sys.executable, "-m", "torchlint", "--fix", "--unsafe-fixes", "--no-cache",
                            "--exit-zero", str(folder / "torchlint")], capture_output=True, text=True)
    print("torchlint:", fixed.stdout.strip().splitlines()[-1] if fixed.stdout.strip() else "no output")
    if torchfix:
        done = subprocess.run([torchfix, "--fix", str(folder / "torchfix")], capture_output=True, text=True)
        lines = (done.stdout + done.stderr).strip().splitlines()
        print("torchfix:", lines[-1] if lines else "no output")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, nargs="?", help="where the scripts are fetched (emptied first)")
    parser.add_argument("--mirrors", type=Path, help="local git mirrors instead of the network")
    parser.add_argument("--torchfix", help="TorchFix's command, installed apart (e.g. a venv's bin/torchfix)")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--only", help="only the scripts whose key contains this text")
    parser.add_argument("--run-one", help=argparse.SUPPRESS)
    parser.add_argument("--call", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_one:
        run_one(args.run_one, args.call)
        return 0
    if args.folder is None:
        parser.error("the folder is required")
    global SCRIPTS
    if args.only:
        SCRIPTS = [s for s in SCRIPTS if args.only in s.key]

    prepare(args.folder, args.mirrors)
    fix_with_tools(args.folder, args.torchfix)
    variants = [v for v in VARIANTS if v != "torchfix" or args.torchfix]
    return report(args.folder, variants, args.timeout)


def report(folder: Path, variants: Sequence[str], timeout: int) -> int:
    ran = dict.fromkeys(("before", *variants), 0)
    clean = dict.fromkeys(variants, 0)
    same = dict.fromkeys(variants, 0)
    broken: List[str] = []
    failures: Dict[str, List[str]] = {v: [] for v in variants}
    differ: Dict[str, List[str]] = {v: [] for v in variants}
    for script in SCRIPTS:
        # Strict first: a copy a tool left unchanged then reuses both runs.
        before_strict = run(script, folder / "before", strict=True, timeout=timeout)
        before = before_strict if before_strict.ok else run(script, folder / "before", strict=False, timeout=timeout)
        ran["before"] += before.ok
        results: Dict[str, Run] = {}
        for variant in variants:
            strict = run(script, folder / variant, strict=True, timeout=timeout)
            lenient = strict if strict.ok else run(script, folder / variant, strict=False, timeout=timeout)
            results[variant] = lenient
            ran[variant] += lenient.ok
            clean[variant] += strict.ok
            if before.ok and not lenient.ok and variant != "hand":
                broken.append(f"  {variant}: {script.label}: {lenient.error}")
            if not strict.ok:
                where = ""
                if variant == "torchlint":  # the scope is torchlint's
                    scope = OUT_OF_SCOPE.get(script.key)
                    where = f"  [out of scope: {scope}]" if scope else "  [in scope]"
                failures[variant].append(f"  {script.label}: {strict.error}{where}")
        hand = results["hand"]
        for variant in variants:
            if variant != "hand" and results[variant].ok and hand.ok:
                if same_numbers(results[variant].stdout, hand.stdout):
                    same[variant] += 1
                else:
                    differ[variant].append(f"  {script.label}")
        print(f"  {script.label}: before {'ok' if before.ok else 'fails'}; "
              + "; ".join(f"{v} {'ok' if results[v].ok else 'fails'}" for v in variants), flush=True)
    total = len(SCRIPTS)
    print(f"scripts: {total} from {len({s.repo for s in SCRIPTS})} repositories")
    print(f"ran-before: {ran['before']}/{total}")
    for variant in variants:
        print(f"{variant}: ran-after {ran[variant]}/{total}, warning-free-after {clean[variant]}/{total}"
              + ("" if variant == "hand" else f", same numbers as the hand migration {same[variant]}/{total}"))
    print("broken by a fix (ran before, fail after):" + ("" if broken else " none"))
    for line in broken:
        print(line)
    for variant in variants:
        print(f"{variant}: remaining failures (warnings as errors):" + ("" if failures[variant] else " none"))
        for line in failures[variant]:
            print(line)
        if differ[variant]:
            print(f"{variant}: ran but printed other numbers than the hand migration:")
            for line in differ[variant]:
                print(line)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
