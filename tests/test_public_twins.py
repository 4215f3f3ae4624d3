"""TL114's table of private paths and their public twins, checked against torch 2.13.

A rename is safe only if both spellings mean the same thing: either the very
same object, or (``wrapper``) a public function that just calls the private
one. Each entry's ``since`` must name a torch that is not newer than this one.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torchlint.core.settings import parse_version  # noqa: E402
from torchlint.knowledge.torch_api import PUBLIC_TWINS  # noqa: E402
from torchlint.rules.tl114_private_alias import RENAMES  # noqa: E402

_MISSING = object()
TORCH = parse_version(torch.__version__.split("+")[0])


def lookup(qualified: str) -> Any:
    parts = qualified.split(".")
    obj: Any = importlib.import_module(parts[0])
    for index, part in enumerate(parts[1:], start=1):
        value = getattr(obj, part, _MISSING)
        if value is _MISSING:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = importlib.import_module(".".join(parts[: index + 1]))
            except ImportError:
                return _MISSING
        obj = value
    return obj


@pytest.mark.parametrize("twin", PUBLIC_TWINS, ids=lambda t: t.private)
def test_private_and_public_spellings_mean_the_same(twin):
    assert any(part.startswith("_") for part in twin.private.split(".")), "not a private path"
    assert not any(part.startswith("_") for part in twin.public.split(".")), "the public twin must be public"
    if twin.public.startswith("torch.distributed.") and not torch.distributed.is_available():
        pytest.skip("this torch build has no torch.distributed")
    private, public = lookup(twin.private), lookup(twin.public)
    assert private is not _MISSING, twin.private
    assert public is not _MISSING, twin.public
    if twin.wrapper:
        assert callable(public) and callable(private)
        name = twin.private.rsplit(".", 1)[1]
        # the public function calls the private one, or the private one defers to it
        assert (f"{twin.private.rsplit('.', 1)[0]}.{name}(" in inspect.getsource(public)
                or f"{twin.public}(" in inspect.getsource(private)), twin
    else:
        assert private is public


@pytest.mark.parametrize("twin", PUBLIC_TWINS, ids=lambda t: t.private)
def test_since_is_a_released_version(twin):
    if twin.since is not None:
        assert parse_version(twin.since) <= TORCH


def test_every_twin_is_a_rename_of_the_rule():
    assert set(RENAMES) == {twin.private for twin in PUBLIC_TWINS}
    assert len(PUBLIC_TWINS) == len(RENAMES), "a private path is listed twice"
