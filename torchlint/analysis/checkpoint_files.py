"""Which devices the tensors of a checkpoint file shipped with the project were saved on.

A ``torch.load`` of a file that lies in the project itself (``hadamard_tensors.pt``
beside the module that loads it, an ``oracle.trc`` beside the script) reads what
that file holds: a checkpoint whose storages were all saved from the CPU loads on
a machine without a GPU, ``map_location`` or not.

The file is read, never unpickled: ``pickletools.genops`` lists the opcodes of its
pickles without running any of them. Both of torch's formats are read: the zip
archive (``archive/data.pkl``) and the legacy sequence of pickles, whose object
pickle names each storage's location (``'cpu'``, ``'cuda:0'``) as a string. Any
string that names a GPU device anywhere in the pickle counts (a configuration
saved with ``'cuda'`` in it too: the answer is then "may hold GPU tensors").
Files larger than ``MAX_CHECKPOINT_BYTES`` are not read.
"""

from __future__ import annotations

import io
import os
import pickletools
import re
import zipfile
from typing import FrozenSet, Iterator, Optional

# Larger files are weights downloaded for use, not read here (and a cache of the
# project's answers keys them by their bytes).
MAX_CHECKPOINT_BYTES = 10 * 1024 * 1024
_DEVICE = re.compile(r"(?:cpu|cuda|mps|xpu|hpu|xla|meta)(?::\d+)?")
_CPU_ONLY = frozenset({"cpu"})
# The legacy format's pickles: magic number, protocol, system info, the object.
_LEGACY_PICKLES = 4


def devices_in_checkpoint(path: str) -> Optional[FrozenSet[str]]:
    """The device names the pickled data of the checkpoint at ``path`` spells (``{"cpu"}``,
    ``{"cpu", "cuda:0"}``); None when the file cannot be read as one of torch's formats."""
    try:
        if os.path.getsize(path) > MAX_CHECKPOINT_BYTES:
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    try:
        strings = list(_archive_strings(data) if zipfile.is_zipfile(io.BytesIO(data)) else _legacy_strings(data))
    except Exception:  # any malformed file: nothing is known of it
        return None
    return frozenset(text for text in strings if _DEVICE.fullmatch(text))


def holds_cpu_tensors_only(path: str) -> bool:
    """Were every storage of the checkpoint at ``path`` saved from the CPU (no GPU device named)?"""
    devices = devices_in_checkpoint(path)
    return devices is not None and devices <= _CPU_ONLY


def _archive_strings(data: bytes) -> Iterator[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        pickles = [name for name in archive.namelist() if name == "data.pkl" or name.endswith("/data.pkl")]
        if len(pickles) != 1:
            raise ValueError("not a torch archive")
        yield from _strings(io.BytesIO(archive.read(pickles[0])), 1)


def _legacy_strings(data: bytes) -> Iterator[str]:
    yield from _strings(io.BytesIO(data), _LEGACY_PICKLES)


def _strings(stream: io.BytesIO, pickles: int) -> Iterator[str]:
    """The string arguments of the opcodes of the first ``pickles`` pickles of ``stream``."""
    for _ in range(pickles):
        for opcode, argument, _ in pickletools.genops(stream):
            if isinstance(argument, str) and opcode.name != "GLOBAL":
                yield argument
