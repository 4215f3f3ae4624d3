"""TL208 and NaN sentinels: ``x is torch.nan`` tests for the very object where the code
itself puts that constant in ``x`` (coqui-tts, deepinv), here through another method of
the class, in a file big enough for the check to be narrowed to the candidates."""

from conftest import run_torchlint

CLIPS = '''import torch


def load_audio(path):
    return torch.zeros(3)


class Clips(torch.utils.data.Dataset):
    def __init__(self, samples, masking):
        self.samples, self.masking = samples, masking

    def load_item(self, sample):
        wav = load_audio(sample)
        if self.masking:
            cond_len = {sentinel}
        else:
            cond_len = wav.shape[-1]
        return wav, cond_len

    def __getitem__(self, index):
        try:
            wav, cond_len = self.load_item(self.samples[index])
        except Exception:
            return self[1]
        return {{"wav": wav, "cond_lens": torch.tensor(cond_len) if cond_len is not torch.nan else torch.tensor([0])}}
'''


def test_a_sentinel_another_method_returns_is_tested_by_identity(tmp_path):
    (tmp_path / "clips.py").write_text(CLIPS.format(sentinel="torch.nan"))
    run = run_torchlint(["--isolated", "--no-cache", "--select", "TL208", "clips.py"], cwd=tmp_path)
    assert "TL208" not in run.stdout and run.returncode == 0, run.stdout + run.stderr


def test_a_computed_nan_is_still_reported(tmp_path):
    # the method puts a computed NaN there, never the constant object: `is not` cannot see it
    (tmp_path / "clips.py").write_text(CLIPS.format(sentinel="wav.sum() / 0"))
    run = run_torchlint(["--isolated", "--no-cache", "--select", "TL208", "clips.py"], cwd=tmp_path)
    assert "clips.py:25:" in run.stdout and "TL208" in run.stdout, run.stdout + run.stderr
