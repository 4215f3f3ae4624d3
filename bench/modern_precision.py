#!/usr/bin/env python3
"""Precision on recent releases as their users would run torchlint: from each project's root.

``bench/judged.py score`` runs once over the whole corpus folder with
``--isolated``, so no project's metadata is read. A user runs torchlint in
their project, where the torch floor their metadata declares applies (an
unpacked wheel's ``METADATA``: ``run/project_metadata.py``). This runs the
command in each entry's folder and joins its findings with the labels.

    python bench/modern_precision.py --labels bench/labels/modern.tsv CORPUS
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", required=True)
    parser.add_argument("corpus")
    args = parser.parse_args()
    labels = {}
    with open(args.labels, encoding="utf-8") as handle:
        for row in csv.reader(handle, delimiter="\t"):
            if len(row) >= 4 and row[1].isdigit():
                labels[(row[0], int(row[1]), row[2])] = row[3]
    entries = sorted({key[0].split("/", 1)[0] for key in labels})
    print("| project | findings | TP | FP | unjudged | precision |")
    print("|---|---:|---:|---:|---:|---:|")
    status = 0
    for name in entries:
        root = os.path.join(args.corpus, name)
        if not os.path.isdir(root):
            print(f"| {name} | (missing) | | | | |")
            status = 2
            continue
        result = subprocess.run([sys.executable, "-m", "torchlint.frontends.cli", "--no-cache", "--output-format",
                                 "json", "."], cwd=root, capture_output=True, text=True)
        found = {(f"{name}/{os.path.normpath(item['filename'])}", item["location"]["row"], item["code"])
                 for item in json.loads(result.stdout or "[]") if item["code"]}
        tp = sum(labels.get(f) == "flag" for f in found)
        fp = sum(labels.get(f) == "ok" for f in found)
        unjudged = sorted(f for f in found if f not in labels)
        precision = f"{tp / (tp + fp):.3f}" if tp + fp else "-"
        print(f"| {name} | {len(found)} | {tp} | {fp} | {len(unjudged)} | {precision} |")
        for finding in unjudged:
            print(f"    unjudged: {finding[0]}:{finding[1]} {finding[2]}")
        for finding in sorted(f for f in found if labels.get(f) == "ok"):
            print(f"    false positive: {finding[0]}:{finding[1]} {finding[2]}")
    return status


if __name__ == "__main__":
    sys.exit(main())
