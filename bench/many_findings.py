#!/usr/bin/env python3
"""Time and peak memory of one file with very many findings (issue 18).

Generates a file of ``--lines`` lines like ``y = F.upsample(x)`` (half in
functions of 100 lines each, half at module level; 50,000 lines is about
3.2 MB, one TL finding per line), then runs the real command on it:
check mode and ``--fix``, each in a fresh process, and prints wall time, CPU time
(user + system) and peak RSS (the child's ``ru_maxrss``; CPU time is the
fairer figure on a shared machine). ``--format json`` (repeatable) measures
that output format too: json, full and sarif preview every fix, concise does
not. ``--drop-names`` makes every other line ``output = F.sigmoid(inputs)``,
whose fix (``torch.sigmoid``) drops a name, so its preview must show the
fixer's tidy step (issue 17, edge 5). ``--src DIR`` measures another
checkout's torchlint (``DIR`` goes first on ``PYTHONPATH``), so a before /
after comparison runs side by side in one invocation::

    python bench/many_findings.py --lines 50000 --src /path/to/main-checkout --src .
    python bench/many_findings.py --lines 400 --per-function 2 --drop-names --no-fix \
        --format concise --format json --src /path/to/main-checkout --src .

Standard library only; the file is written to a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

PER_FUNCTION = 100
# One finding (TL: F.upsample is deprecated) per line; about 68 bytes a line.
LINE = 'output = F.upsample(inputs, scale_factor=2, mode="nearest")'
# One finding whose fix (torch.sigmoid) drops a name (``F``).
DROPPING_LINE = "output = F.sigmoid(inputs)"


def generate(lines: int, per_function: int = PER_FUNCTION, drop_names: bool = False) -> str:
    def line(index: int) -> str:
        return DROPPING_LINE if drop_names and index % 2 == 0 else LINE

    out = ["import torch\n", "import torch.nn.functional as F\n", "\n"]
    in_functions = lines // 2
    for start in range(0, in_functions, per_function):
        out.append(f"def f{start}(x):\n")
        out.extend(f"    {line(index)}\n" for index in range(min(per_function, in_functions - start)))
        out.append("    return y\n\n")
    out.extend(f"{line(index)}\n" for index in range(lines - in_functions))
    return "".join(out)


def measure(src: str, path: str, *args: str, timeout: float, output_format: str = "concise") -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-c", "import sys, torchlint.frontends.cli as cli; "
               "assert cli.__file__.startswith(sys.argv[1]), cli.__file__; sys.exit(cli.main(sys.argv[2:]))",
               os.path.abspath(src),
               "--isolated", "--no-cache", "--output-format", output_format, *args, path]
    start = time.perf_counter()
    # Run beside the file, not here: ``-c`` puts the working directory first on
    # sys.path, which would shadow ``--src`` with this checkout.
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               cwd=os.path.dirname(path))
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        status = process.returncode
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        status = "timeout"
    wall = time.perf_counter() - start
    findings = stdout.count(b'"code": "TL') if output_format == "json" else stdout.count(b": TL")
    return {"wall": wall, "status": status, "findings": findings, "stderr": stderr[-300:]}


def run(src: str, source: str, fix: bool, timeout: float, output_format: str = "concise") -> dict:
    """One measurement in a fresh child whose peak RSS is its own (RUSAGE_CHILDREN of a helper)."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "many.py")
        with open(path, "w") as handle:
            handle.write(source)
        helper = [sys.executable, __file__, "--child", src, path, "--timeout", str(timeout)]
        helper += (["--fix"] if fix else []) + ["--format", output_format]
        done = subprocess.run(helper, capture_output=True, text=True)
        fields = dict(item.split("=", 1) for item in done.stdout.split())
        return fields


def child(src: str, path: str, fix: bool, timeout: float, output_format: str) -> None:
    result = measure(src, path, *(["--fix"] if fix else []), timeout=timeout, output_format=output_format)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"wall={result['wall']:.2f} cpu={usage.ru_utime + usage.ru_stime:.2f} rss_mb={usage.ru_maxrss / 1024:.0f} "
          f"status={result['status']} findings={result['findings']}")
    if result["status"] not in (0, 1):
        print(result["stderr"].decode(errors="replace"), file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--src", action="append",
                        help="a torchlint checkout to measure (repeatable); default: this one")
    parser.add_argument("--per-function", type=int, default=PER_FUNCTION,
                        help="lines per function (fewer: more functions; default %(default)s)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--no-fix", action="store_true", help="measure check mode only")
    parser.add_argument("--format", action="append", dest="formats",
                        help="output format to measure (repeatable; default: concise)")
    parser.add_argument("--drop-names", action="store_true",
                        help="every other line a fix that drops a name (F.sigmoid)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--fix", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.fix, args.timeout, (args.formats or ["concise"])[0])
        return 0
    sources = args.src or [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    source = generate(args.lines, args.per_function, args.drop_names)
    print(f"{args.lines:,} lines, {args.per_function} per function, {len(source.encode()) / 1e6:.1f} MB")
    print(f"{'mode':6} {'format':8} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12} {'exit':>5} {'findings':>9}  checkout")
    for fix in ([False] if args.no_fix else [False, True]):
        for output_format in args.formats or ["concise"]:
            for src in sources:
                r = run(src, source, fix, args.timeout, output_format)
                print(f"{'fix' if fix else 'check':6} {output_format:8} {r.get('wall', '?'):>8} {r.get('cpu', '?'):>8} "
                      f"{r.get('rss_mb', '?'):>12} "
                      f"{r.get('status', '?'):>5} {r.get('findings', '?'):>9}  {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
