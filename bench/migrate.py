"""Migration benchmark: do real 2017-2019 scripts run on today's torch after `torchlint --fix`?

Not a CI test. Each script of ``SCRIPTS`` (a public repository, a pinned
commit, a path; self-contained: random data, no downloads) is fetched at run
time into the folder given on the command line, never committed. It is run
under the installed torch before and after ``torchlint --fix --unsafe-fixes``;
after the fix it is also run with DeprecationWarning and FutureWarning as
errors. The report prints ran-before, ran-after and warning-free-after, each
remaining failure's first error line, and any script that ran before and
fails after (a fix that broke it).

Fetching: from ``https://raw.githubusercontent.com/<repo>/<commit>/<path>``,
or, with ``--mirrors DIR``, from local git mirrors ``DIR/<owner>+<name>/repo``
(``git show <commit>:<path>``) on machines without network access.

    python bench/migrate.py /tmp/migrate [--mirrors /work/.mirror] [--timeout 300]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

WARNINGS_AS_ERRORS = ["-W", "error::DeprecationWarning", "-W", "error::FutureWarning"]


@dataclass(frozen=True)
class Script:
    repo: str  # owner/name on GitHub
    commit: str
    path: str

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.commit[:7]}:{self.path}"


# jcjohnson/pytorch-examples before its torch 0.4 update (2017-11-01): Variable,
# .data[0], legacy autograd Function, size_average.
_JCJ = "0f1b88a38e1fd761dd4ee22398d0efec7a3c7faf"
SCRIPTS = [
    Script("jcjohnson/pytorch-examples", _JCJ, path)
    for path in (
        "tensor/two_layer_net_tensor.py",
        "autograd/two_layer_net_autograd.py",
        "autograd/two_layer_net_custom_function.py",
        "nn/two_layer_net_nn.py",
        "nn/two_layer_net_optim.py",
        "nn/two_layer_net_module.py",
        "nn/dynamic_net.py",
    )
]


@dataclass
class Run:
    ok: bool
    error: str  # the first error line (the exception), "" when it ran


def fetch(script: Script, mirrors: Optional[Path]) -> bytes:
    if mirrors is not None:
        git_dir = mirrors / script.repo.replace("/", "+") / "repo"
        return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{script.commit}:{script.path}"],
                              check=True, capture_output=True).stdout
    url = f"https://raw.githubusercontent.com/{script.repo}/{script.commit}/{script.path}"
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 (a fixed https URL)
        return response.read()


def run(path: Path, strict: bool, timeout: int) -> Run:
    command = [sys.executable, *(WARNINGS_AS_ERRORS if strict else []), path.name]
    try:
        done = subprocess.run(command, cwd=path.parent, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Run(False, f"timed out after {timeout} s")
    if done.returncode == 0:
        return Run(True, "")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return Run(False, lines[-1] if lines else f"exit status {done.returncode}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="where the scripts are fetched (emptied first)")
    parser.add_argument("--mirrors", type=Path, help="local git mirrors instead of the network")
    parser.add_argument("--timeout", type=int, default=300)
    args = parser.parse_args(argv)

    before_dir, after_dir = args.folder / "before", args.folder / "after"
    shutil.rmtree(args.folder, ignore_errors=True)
    for script in SCRIPTS:
        data = fetch(script, args.mirrors)
        for root in (before_dir, after_dir):
            target = root / script.repo.replace("/", "+") / script.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    fixed = subprocess.run([sys.executable, "-m", "torchlint", "--fix", "--unsafe-fixes", "--no-cache",
                            "--exit-zero", str(after_dir)], capture_output=True, text=True)
    print(fixed.stdout.strip().splitlines()[-1] if fixed.stdout.strip() else "torchlint: no output")

    ran_before = ran_after = warning_free = 0
    broken: List[str] = []
    failures: List[str] = []
    for script in SCRIPTS:
        relative = Path(script.repo.replace("/", "+")) / script.path
        before = run(before_dir / relative, strict=False, timeout=args.timeout)
        after = run(after_dir / relative, strict=False, timeout=args.timeout)
        strict = run(after_dir / relative, strict=True, timeout=args.timeout) if after.ok else after
        ran_before += before.ok
        ran_after += after.ok
        warning_free += strict.ok
        if before.ok and not after.ok:
            broken.append(f"  {script.label}: {after.error}")
        if not strict.ok:
            failures.append(f"  {script.label}: {strict.error}")
    total = len(SCRIPTS)
    print(f"scripts: {total}")
    print(f"ran-before: {ran_before}/{total}")
    print(f"ran-after: {ran_after}/{total}")
    print(f"warning-free-after: {warning_free}/{total}")
    print("broken by the fix (ran before, fail after):" + ("" if broken else " none"))
    print("\n".join(broken)) if broken else None
    print("remaining failures (warnings as errors):" + ("" if failures else " none"))
    print("\n".join(failures)) if failures else None
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
