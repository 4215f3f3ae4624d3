"""What the project model learns about a module, in a form that outlives the run.

A module's summary holds what its text alone decides (the names its top
level binds and imports, the flags it derives from the torch version) and
the answers worked out over it (what a function returns, what a class's
instances give), each with the digests of the other modules read to work
it out. The run layer keeps summaries on disk (``run/summaries.py``), keyed
by the module's path and valid only for the digest of its bytes, so a later
run, a flake8 worker or another file's check reads the answer instead of
parsing and analysing the module again.

Answers are encoded as plain JSON; decoding checks every shape, and
anything unexpected is a ``ValueError`` the project model treats as "not
known": a damaged summary costs a re-analysis, never a wrong answer.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Dict, Optional

from torchlint.analysis.inference import Kind, Value

_VALUE_FIELDS = {f.name: f.default for f in fields(Value)}
_KINDS = {kind.value: kind for kind in Kind}


class SummaryStore:
    """Where module summaries are kept between runs; this one keeps none."""

    def load(self, key: str, digest: str) -> Dict[str, Any]:
        """The summary of module ``key`` whose bytes had ``digest`` ({} if none is kept)."""
        return {}

    def save(self, key: str, digest: str, summary: Dict[str, Any]) -> None:
        """Keep ``summary`` of module ``key`` for the bytes of ``digest``."""


def encode(answer: Any) -> Any:
    """An answer of the project model (values, tuples, mappings, numbers,
    strings, None) as JSON data."""
    if answer is None or isinstance(answer, (bool, int, str)):
        return answer
    if isinstance(answer, Value):
        return {"value": {name: encode(getattr(answer, name)) for name, default in _VALUE_FIELDS.items()
                          if getattr(answer, name) != default}}
    if isinstance(answer, Kind):
        return {"kind": answer.value}
    if isinstance(answer, tuple):
        return {"tuple": [encode(item) for item in answer]}
    if isinstance(answer, dict):
        return {"dict": [[key, encode(item)] for key, item in answer.items()]}
    raise TypeError(f"cannot keep {type(answer).__name__} in a summary")


def decode(data: Any) -> Any:
    """``encode``'s inverse; ``ValueError`` for anything it could not have written."""
    if data is None or isinstance(data, (bool, int, str)):
        return data
    if not isinstance(data, dict) or len(data) != 1:
        raise ValueError("not an encoded answer")
    (tag, content), = data.items()
    if tag == "value" and isinstance(content, dict):
        return _value(content)
    if tag == "kind" and content in _KINDS:
        return _KINDS[content]
    if tag == "tuple" and isinstance(content, list):
        return tuple(decode(item) for item in content)
    if tag == "dict" and isinstance(content, list) and all(
            isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) for pair in content):
        return {key: decode(item) for key, item in content}
    raise ValueError(f"not an encoded answer: {tag!r}")


def _value(content: Dict[str, Any]) -> Value:
    if not set(content) <= set(_VALUE_FIELDS) or "kind" not in content:
        raise ValueError("not an encoded value")
    decoded = {name: decode(item) for name, item in content.items()}
    if not isinstance(decoded["kind"], Kind):
        raise ValueError("a value without a kind")
    for name in ("scalar", "reduces", "loss", "one_element", "partly_scalar"):
        if not isinstance(decoded.get(name, False), bool):
            raise ValueError(f"{name} is not a truth value")
    if decoded.get("cuda") not in (None, True, False):
        raise ValueError("cuda is not a truth value")
    for name in ("module_class", "dtype", "instance_of", "calls"):
        if not isinstance(decoded.get(name), (str, type(None))):
            raise ValueError(f"{name} is not a name")
    items = decoded.get("items", ())
    element: Optional[Value] = decoded.get("element")
    unless_number: Optional[Value] = decoded.get("unless_number")
    if_tensor: Optional[Value] = decoded.get("if_tensor")
    returns: Optional[Value] = decoded.get("returns")
    if not isinstance(items, tuple) or not all(isinstance(item, Value) for item in items) or not all(
            part is None or isinstance(part, Value) for part in (element, unless_number, if_tensor, returns)):
        raise ValueError("a value holding something else than values")
    keys = decoded.get("keys", ())
    if not isinstance(keys, tuple) or not all(
            isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], Value)
            for pair in keys):
        raise ValueError("keys are not (name, value) pairs")
    return Value(**decoded)
