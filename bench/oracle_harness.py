"""Runs one script under torch and records what its 0.3-era reads met (the runtime oracle, issue 33).

Not part of torchlint (which never runs the code it checks): ``bench/oracle.py``
starts this file in a subprocess, one per script, to label lines by what
actually happened when the script ran:

- ``x.data[0]`` and ``x.data.numpy()[0]`` (also ``.cpu().numpy()[0]``): was the
  receiver 0-dim (the read raises ``IndexError`` since torch 0.4; TL101) or
  not? To get past such a read, as the script did on torch 0.3, a 0-dim read
  returns the Python number ``.item()`` gives;
- ``x.numpy()``: was ``x`` on a CUDA device (TL202)? With ``--cuda`` the run
  pretends a GPU is there: ``torch.cuda.is_available()`` is True, ``.cuda()``,
  ``.to('cuda')``, ``module.cuda()``, ``torch.cuda.FloatTensor(...)`` and
  ``device='cuda'`` factories give CPU tensors tagged as CUDA ones, and a
  ``TorchFunctionMode`` tags every result computed from a tagged tensor;
  ``.cpu()`` gives an untagged copy. ``.numpy()`` of a tagged tensor is
  recorded (a real GPU raises there) and goes on.

Two more spellings of torch 0.3 are taken as it took them, so that a script
gets further: ``backward(retain_variables=...)`` and ``TensorDataset(data_tensor=,
target_tensor=)``.

A record is keyed by the file and line of the expression (from the code
object's positions), and holds counts: ``zero``/``more`` for the reads,
``cuda``/``cpu`` for ``.numpy()``. They are written as JSON to the file
named by ``--record`` when the script ends, however it ends.

    python bench/oracle_harness.py SCRIPT --record OUT.json [--cuda] [--call FUNCTION]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import re
import runpy
import sys
from collections import defaultdict
from typing import Any, Dict, Optional, Tuple

import numpy
import torch
from torch.overrides import TorchFunctionMode

HERE = os.path.abspath(__file__)
# The expressions whose value is recorded, as the code spells them (the whole subscript or call).
DATA_ZERO = re.compile(r"\.\s*data\s*\[\s*\(?\s*0\s*\)?\s*,?\s*\]$")
NUMPY_ZERO = re.compile(r"\.\s*numpy\s*\(\s*\)\s*\[\s*\(?\s*0\s*\)?\s*,?\s*\]$")
NUMPY_CALL = re.compile(r"\.\s*numpy\s*\(\s*\)$")

RECORDS: Dict[Tuple[str, int, str], Dict[str, int]] = defaultdict(lambda: defaultdict(int))
_SOURCES: Dict[str, list] = {}
TAG = "_oracle_cuda"


def _caller_expression(depth: int = 2) -> Optional[Tuple[str, int, str]]:
    """(file, line, source text) of the expression the calling frame is evaluating,
    None inside this harness or where the positions are unknown."""
    frame = sys._getframe(depth)
    filename = frame.f_code.co_filename
    if os.path.abspath(filename) == HERE or "/torch/" in filename or "/numpy/" in filename:
        return None
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if index >= len(positions):
        return None
    line, end_line, column, end_column = positions[index]
    if line is None or column is None or end_line is None or end_column is None:
        return None
    lines = _SOURCES.get(filename)
    if lines is None:
        try:
            with open(filename, encoding="utf-8") as handle:
                lines = _SOURCES[filename] = handle.read().splitlines()
        except OSError:
            return None
    if end_line != line:
        text = lines[line - 1][column:] + " ".join(lines[line:end_line - 1]) + lines[end_line - 1][:end_column]
    else:
        text = lines[line - 1][column:end_column]
    # A byte offset: the text is ASCII in every script this reads; an accent before it would shift it.
    return filename, line, text


def _is_zero(index: Any) -> bool:
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    return type(index) is int and index == 0


def _record(site: Tuple[str, int, str], kind: str, what: str) -> None:
    filename, line, _ = site
    RECORDS[(os.path.abspath(filename), line, kind)][what] += 1


# -- TL101: ``.data[0]`` and ``.numpy()[0]`` --------------------------------------------

_getitem = torch.Tensor.__getitem__


def _tensor_getitem(self, index):
    if _is_zero(index):
        site = _caller_expression()
        if site is not None and DATA_ZERO.search(site[2]):
            if self.dim() == 0:
                _record(site, "data0", "zero")
                return self.item()  # what torch 0.3 gave: the Python number
            _record(site, "data0", "more")
    return _getitem(self, index)


class RecordedArray(numpy.ndarray):
    """What ``.numpy()`` gives here: an array whose ``[0]`` is recorded."""

    def __getitem__(self, index):
        if _is_zero(index):
            site = _caller_expression()
            if site is not None and NUMPY_ZERO.search(site[2]):
                if self.ndim == 0:
                    _record(site, "numpy0", "zero")
                    return self.view(numpy.ndarray)[()]  # torch 0.3's 1-element array gave this scalar
                _record(site, "numpy0", "more")
        return numpy.ndarray.__getitem__(self, index)


_numpy = torch.Tensor.numpy


def _tensor_numpy(self, *args, **kwargs):
    site = _caller_expression()
    if site is not None and NUMPY_CALL.search(site[2]):
        _record(site, "numpy", "cuda" if getattr(self, TAG, False) else "cpu")
    return _numpy(self, *args, **kwargs).view(RecordedArray)


# -- a pretended GPU (``--cuda``) -----------------------------------------------------

def _tag(value: Any, on: bool = True) -> Any:
    if isinstance(value, torch.Tensor):
        try:
            setattr(value, TAG, on)
        except (AttributeError, RuntimeError):
            pass
    elif isinstance(value, (list, tuple)):
        for item in value:
            _tag(item, on)
    elif isinstance(value, dict):
        for item in value.values():
            _tag(item, on)
    return value


def _tagged(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return bool(getattr(value, TAG, False))
    if isinstance(value, (list, tuple)):
        return any(_tagged(item) for item in value)
    if isinstance(value, dict):
        return any(_tagged(item) for item in value.values())
    return False


def _is_cuda_device(value: Any) -> bool:
    if isinstance(value, torch.device):
        return value.type == "cuda"
    if isinstance(value, str):
        return value.startswith("cuda")
    return isinstance(value, int) and not isinstance(value, bool)  # ``.to(0)``: a GPU index


class CudaTags(TorchFunctionMode):
    """Results computed from a tensor tagged as on CUDA are tagged too; a factory
    given ``device='cuda'`` makes a tagged CPU tensor."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        on_cuda = False
        if "device" in kwargs and _is_cuda_device(kwargs["device"]):
            kwargs["device"] = "cpu"
            on_cuda = True
        result = func(*args, **kwargs)
        if on_cuda or _tagged(args) or _tagged(kwargs):
            _tag(result)
        return result


def _cuda(self, *args, **kwargs):
    if getattr(self, TAG, False):
        return self
    return _tag(self.clone())  # a copy, as moving to a GPU makes


def _cpu(self, *args, **kwargs):
    if not getattr(self, TAG, False):
        return self
    return _tag(self.clone(), on=False)


_to = torch.Tensor.to


def _is_device(value: Any) -> bool:
    return isinstance(value, (str, torch.device)) or _is_cuda_device(value)


def _tensor_to(self, *args, **kwargs):
    """``.to(...)`` with every device replaced by the CPU: to a GPU it tags, away from one it untags."""
    devices = [a for a in args if _is_device(a)] + ([kwargs["device"]] if "device" in kwargs else [])
    args = tuple("cpu" if _is_device(a) else a for a in args)
    if "device" in kwargs:
        kwargs["device"] = "cpu"
    out = _to(self, *args, **kwargs)
    if any(_is_cuda_device(d) for d in devices):
        return _cuda(out)
    if devices:
        return _cpu(out)
    return out


def _module_cuda(self, *args, **kwargs):
    for tensor in list(self.parameters()) + list(self.buffers()):
        _tag(tensor)
    return self


_module_to = torch.nn.Module.to


def _module_to_device(self, *args, **kwargs):
    if _is_cuda_device(kwargs.get("device")) or any(_is_cuda_device(a) for a in args):
        return _module_cuda(self)
    return _module_to(self, *args, **kwargs)


class _PassThrough(torch.nn.Module):
    """``nn.DataParallel`` without devices: the module, called as it is."""

    def __init__(self, module, *args, **kwargs):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


def _cuda_type(cpu_type):
    def make(*args, **kwargs):
        return _tag(cpu_type(*args, **kwargs))
    return make


def pretend_gpu() -> None:
    torch.Tensor.cuda = _cuda
    torch.Tensor.cpu = _cpu
    torch.Tensor.to = _tensor_to
    torch.nn.Module.cuda = _module_cuda
    torch.nn.Module.to = _module_to_device
    torch.nn.DataParallel = _PassThrough
    torch.nn.parallel.DataParallel = _PassThrough
    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    for name in ("synchronize", "set_device", "manual_seed", "manual_seed_all", "empty_cache"):
        setattr(cuda, name, lambda *args, **kwargs: None)
    cuda.get_device_name = lambda *args, **kwargs: "oracle"
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
                 "ByteTensor", "CharTensor", "BoolTensor"):
        setattr(cuda, name, _cuda_type(getattr(torch, name)))
    CudaTags().__enter__()


# -- the rest of torch 0.3 a script may need to get further ---------------------------

_backward = torch.Tensor.backward


def _old_backward(self, gradient=None, retain_variables=None, **kwargs):
    """``retain_variables=`` was ``retain_graph=``'s name until torch 0.4."""
    if retain_variables is not None:
        kwargs.setdefault("retain_graph", retain_variables)
    return _backward(self, gradient, **kwargs)


_dataset_init = torch.utils.data.TensorDataset.__init__


def _old_tensor_dataset(self, *tensors, data_tensor=None, target_tensor=None):
    """``TensorDataset(data_tensor=x, target_tensor=y)``: torch 0.3's keywords."""
    if data_tensor is not None:
        tensors = (data_tensor, target_tensor) if target_tensor is not None else (data_tensor,)
    _dataset_init(self, *tensors)


def run_as_on_torch_0_3() -> None:
    torch.Tensor.__getitem__ = _tensor_getitem
    torch.Tensor.numpy = _tensor_numpy
    torch.Tensor.backward = _old_backward
    torch.utils.data.TensorDataset.__init__ = _old_tensor_dataset


def save(path: str) -> None:
    data = [{"file": f, "line": line, "kind": kind, **counts} for (f, line, kind), counts in sorted(RECORDS.items())]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("script")
    parser.add_argument("--record", required=True)
    parser.add_argument("--cuda", action="store_true", help="pretend a GPU is there")
    parser.add_argument("--call", help="a function of the script to call after it ran")
    args = parser.parse_args()
    atexit.register(save, args.record)
    run_as_on_torch_0_3()
    if args.cuda:
        pretend_gpu()
    random.seed(0)
    numpy.random.seed(0)
    torch.manual_seed(0)
    sys.argv = [args.script]
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
    namespace = runpy.run_path(args.script, run_name="__main__")
    if args.call:
        namespace[args.call]()


if __name__ == "__main__":
    main()
