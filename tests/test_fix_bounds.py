"""``--fix`` writes only the files it read, inside the tree it checks (issue 36, items 6 and 7).

A ``*.py`` symlink whose target lies outside the checked tree is checked,
never written; a file replaced by a symlink (or by any other file) between
the read and the write is not written either, even when the new file holds
the very bytes that were read.
"""

from __future__ import annotations

import os

import pytest

from conftest import run_torchlint

from torchlint.run.fileio import ChangedOnDisk, CheckedTree, OutsideTree, read_source, write_atomically

UPSAMPLE = "import torch.nn.functional as F\ny = F.upsample(x, scale_factor=2)\n"
FIXED = UPSAMPLE.replace("F.upsample", "F.interpolate")


@pytest.fixture
def layout(tmp_path):
    """tree/ (checked) holding a file, a link into tree/real/, and a link to outside/."""
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "real").mkdir(parents=True)
    outside.mkdir()
    (outside / "shared.py").write_text(UPSAMPLE)
    (tree / "plain.py").write_text(UPSAMPLE)
    (tree / "real" / "target.py").write_text(UPSAMPLE)
    os.symlink(os.path.join("real", "target.py"), tree / "inner_link.py")
    os.symlink(os.path.join("..", "outside", "shared.py"), tree / "outer_link.py")
    return tree, outside


def test_fix_dot_never_writes_the_target_of_a_symlink_out_of_the_tree(layout):
    tree, outside = layout
    result = run_torchlint(["--isolated", "--no-cache", "--fix", "."], cwd=tree)
    assert (outside / "shared.py").read_text() == UPSAMPLE
    assert "outer_link.py: not fixed: it is a symbolic link to" in result.stderr
    assert "outer_link.py:2:7: TL103" in result.stdout  # still checked, and its finding still shown
    assert (tree / "plain.py").read_text() == FIXED
    assert (tree / "real" / "target.py").read_text() == FIXED  # a link inside the tree is fixed
    assert (tree / "inner_link.py").is_symlink() and (tree / "outer_link.py").is_symlink()
    assert result.returncode == 1, result.stderr


def test_a_symlink_named_on_the_command_line_is_fixed_through(layout):
    """Naming the link itself makes its target part of what is checked."""
    tree, outside = layout
    result = run_torchlint(["--isolated", "--no-cache", "--fix", "outer_link.py"], cwd=tree)
    assert result.returncode == 0, result.stderr
    assert (outside / "shared.py").read_text() == FIXED
    assert (tree / "outer_link.py").is_symlink()


def test_add_noqa_never_writes_out_of_the_tree(layout):
    tree, outside = layout
    result = run_torchlint(["--isolated", "--no-cache", "--add-noqa", "."], cwd=tree)
    assert (outside / "shared.py").read_text() == UPSAMPLE
    assert "outer_link.py: not fixed" in result.stderr
    assert "# noqa" in (tree / "plain.py").read_text()


def test_a_file_replaced_by_a_symlink_to_a_copy_outside_is_not_written(layout):
    """The swap happens between the read and the write: the outside file
    holds the same bytes, so only the file's identity tells them apart."""
    tree, outside = layout
    path = tree / "plain.py"
    source = read_source(str(path))
    path.unlink()
    os.symlink(outside / "shared.py", path)
    with pytest.raises(OutsideTree):
        write_atomically(str(path), FIXED.encode(), expected=source.data, identity=source.identity,
                         tree=CheckedTree([str(tree)]))
    assert (outside / "shared.py").read_text() == UPSAMPLE


def test_a_file_replaced_by_a_symlink_inside_the_tree_is_not_written(layout):
    tree, _ = layout
    path = tree / "plain.py"
    source = read_source(str(path))
    path.unlink()
    os.symlink(os.path.join("real", "target.py"), path)  # same bytes, another file
    with pytest.raises(ChangedOnDisk):
        write_atomically(str(path), FIXED.encode(), expected=source.data, identity=source.identity,
                         tree=CheckedTree([str(tree)]))
    assert (tree / "real" / "target.py").read_text() == UPSAMPLE
    assert path.is_symlink()


def test_a_file_replaced_by_another_with_the_same_bytes_is_not_written(layout):
    tree, _ = layout
    path = tree / "plain.py"
    source = read_source(str(path))
    saved = tree / "plain.py.new"
    saved.write_text(UPSAMPLE)  # an editor's save: a new inode (made while the old one lives), the same bytes
    os.replace(saved, path)
    with pytest.raises(ChangedOnDisk):
        write_atomically(str(path), FIXED.encode(), expected=source.data, identity=source.identity,
                         tree=CheckedTree([str(tree)]))
    assert path.read_text() == UPSAMPLE


def test_the_file_read_is_written(layout):
    tree, _ = layout
    path = tree / "inner_link.py"
    source = read_source(str(path))
    write_atomically(str(path), FIXED.encode(), expected=source.data, identity=source.identity,
                     tree=CheckedTree([str(tree)]))
    assert (tree / "real" / "target.py").read_text() == FIXED and path.is_symlink()
    assert not [name for name in os.listdir(tree / "real") if name.startswith(".torchlint-")]
