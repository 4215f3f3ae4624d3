"""TL206: a comment about strictness next to ``load_state_dict(..., strict=False)`` records the decision.

Lightning 2.6.6 (``strategies/launchers/multiprocessing.py``) explains in the
two comment lines above its call why mismatched keys are expected there; the
rule must stay silent on that, and report the same call with no comment, with
a comment about something else, or with the comment cut off by a blank line.
"""

import textwrap

import pytest

from torchlint.engine.linter import Engine
from torchlint.rules import rule_by_code


def tl206_lines(code):
    # Each snippet loads ``ckpt`` from a file: only such a state is the rule's concern.
    result = Engine([rule_by_code("TL206")]).check(textwrap.dedent(code).lstrip("\n"))
    return [d.line for d in result.diagnostics if d.code == "TL206"]


@pytest.mark.parametrize("code", [
    pytest.param("""
        import torch
        ckpt = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        def recover(model):
            # choose non-strict loading of parameters on the main process, because the model's composition
            # could have changed in the worker process (layers added or removed)
            model.load_state_dict(ckpt, strict=False)
        """, id="comment-block-above"),
    pytest.param("""
        import torch
        ckpt = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        model.load_state_dict(ckpt, strict=False)  # STRICT off: the head is new
        """, id="trailing-comment"),
    pytest.param("""
        import torch
        ckpt = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        if finetune:
            # not strict: the classifier is replaced
            model.load_state_dict(ckpt, strict=False)
        """, id="first-statement-of-a-block"),
])
def test_a_comment_about_strictness_is_a_decision(code):
    assert tl206_lines(code) == []


@pytest.mark.parametrize("code, line", [
    pytest.param("""
        import torch
        ckpt = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        model.load_state_dict(ckpt, strict=False)
        """, 3, id="no-comment"),
    pytest.param("""
        import torch
        ckpt = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        # restore the averaged weights
        model.load_state_dict(ckpt, strict=False)
        """, 4, id="comment-about-something-else"),
    pytest.param("""
        import torch
        ckpt = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        # non-strict loading below

        model.load_state_dict(ckpt, strict=False)
        """, 5, id="blank-line-between"),
    pytest.param("""
        import torch
        ckpt = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)
        # strict loading for the encoder
        encoder.load_state_dict(ckpt)
        model.load_state_dict(ckpt, strict=False)
        """, 5, id="comment-of-the-statement-before"),
])
def test_other_comments_do_not_hide_the_finding(code, line):
    assert tl206_lines(code) == [line]


TAGGER = """
    import torch
    class Tagger:
        def save(self, path):
            state = self.model.state_dict()
            for key in [k for k in state if k.startswith("embedding.")]:
                {delete}
            torch.save({{"model": state, "vocab": self.vocab.state_dict()}}, path)
        def load(self, path):
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
            self.model.load_state_dict(checkpoint["{entry}"], strict=False)
    """


@pytest.mark.parametrize("delete, entry, reported", [
    # stanza: the saving def deletes the keys it leaves out, the load reads that entry back
    ("del state[key]", "model", False),
    ("state.pop(key)", "model", False),
    # nothing deleted: the whole state dict was saved, a partial load is a surprise
    ("print(key)", "model", True),
    # another entry of the saved dict than the one made a subset
    ("del state[key]", "vocab", True),
])
def test_a_state_dict_the_saving_def_deletes_keys_from_is_a_subset_by_design(delete, entry, reported):
    assert bool(tl206_lines(TAGGER.format(delete=delete, entry=entry))) is reported
