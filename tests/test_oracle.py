"""bench/oracle_harness.py, the runtime oracle of issue 33, on small scripts run under real torch.

The harness is run as ``bench/oracle.py`` runs it (a subprocess per script) and
its records are checked against what the scripts plainly do: which
``.data[0]`` / ``.numpy()[0]`` receivers are 0-dim, and which ``.numpy()``
calls meet a tensor a pretended GPU holds. ``oracle.labels`` then turns the
records into labels. Then torchlint's TL101 and TL202 findings on the script
agree with the oracle's labels line by line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parent.parent
HARNESS = REPO / "bench" / "oracle_harness.py"

SCRIPT = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.autograd import Variable

    model = nn.Linear(3, 2)
    if torch.cuda.is_available():
        model.cuda()
    x = Variable(torch.randn(4, 3))
    if torch.cuda.is_available():
        x = x.cuda()
    out = model(x)
    loss = F.mse_loss(out, Variable(torch.zeros(4, 2)).type_as(out))
    total = 0
    total += loss.data[0]
    row = out.data[0]
    print(out.data.cpu().numpy()[0])
    print(loss.data.cpu().numpy()[0])
    probs = F.softmax(out, 1).data.numpy()
    kept = x.cpu().numpy()
    print(total, row, probs.shape, kept.shape)
    """)


def _records(tmp_path, cuda):
    (tmp_path / "script.py").write_text(SCRIPT)
    record = tmp_path / ("cuda.json" if cuda else "cpu.json")
    done = subprocess.run([sys.executable, str(HARNESS), "script.py", "--record", str(record),
                           *(["--cuda"] if cuda else [])], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {(item["line"], item["kind"]): {k: item[k] for k in ("zero", "more", "cuda", "cpu") if k in item}
            for item in json.loads(record.read_text())}


def test_reads_of_0_dim_values_are_told_from_rows_and_the_script_goes_on(tmp_path):
    records = _records(tmp_path, cuda=False)
    assert records[(15, "data0")] == {"zero": 1}  # a loss: IndexError since torch 0.4
    assert records[(16, "data0")] == {"more": 1}  # a row of the batch
    assert records[(17, "numpy0")] == {"more": 1}
    assert records[(18, "numpy0")] == {"zero": 1}
    # It ran to its end: the 0-dim reads gave the number, as on torch 0.3.
    assert records[(19, "numpy")] == {"cpu": 1} and records[(20, "numpy")] == {"cpu": 1}


def test_a_pretended_gpu_tags_what_it_computes_and_cpu_copies_are_untagged(tmp_path):
    records = _records(tmp_path, cuda=True)
    assert records[(19, "numpy")] == {"cuda": 1}  # softmax of the output of a module moved to the GPU
    assert records[(20, "numpy")] == {"cpu": 1}  # brought back first
    assert records[(17, "numpy")] == {"cpu": 1}
    assert records[(15, "data0")] == {"zero": 1}


def test_the_labels_say_what_the_runs_met_and_torchlint_agrees(tmp_path):
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import oracle
    finally:
        sys.path.pop(0)
    merged = {}
    for cuda in (False, True):
        for (line, kind), counts in _records(tmp_path, cuda).items():
            key = ("script.py", line, kind + ("@gpu" if cuda and kind == "numpy" else ""))
            merged.setdefault(key, {}).update(counts)
    rows = oracle.labels(merged, {"script.py": True})
    verdicts = {(line, code): verdict for _, line, code, verdict, _ in rows}
    assert verdicts == {(15, "TL101"): "flag", (16, "TL101"): "ok", (17, "TL101"): "ok", (18, "TL101"): "flag",
                        (17, "TL202"): "ok", (18, "TL202"): "ok", (19, "TL202"): "flag", (20, "TL202"): "ok"}
    found = subprocess.run([sys.executable, "-m", "torchlint", "--isolated", "--no-cache", "--select", "TL101,TL202",
                            "--output-format", "json", "--exit-zero", "script.py"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    reported = {(item["location"]["row"], item["code"]) for item in json.loads(found.stdout)}
    assert reported == {key for key, verdict in verdicts.items() if verdict == "flag"}
