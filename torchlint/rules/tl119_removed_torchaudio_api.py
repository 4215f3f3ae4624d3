"""TL119 (opt-in): torchaudio APIs removed in 2.9 (I/O and backends moved to TorchCodec, sox, Kaldi I/O, prototype)."""

from typing import Tuple

from torchlint.knowledge.deprecations import Deprecation, Status
from torchlint.knowledge.torchaudio_api import REMOVED_IN, removed_entries
from torchlint.rules._deprecated import DeprecatedApiRule, concise_message, entry_table, split_replacement
from torchlint.rules.rule import Example, FixSafety


class RemovedTorchaudioApi(DeprecatedApiRule):
    code = "TL119"
    name = "removed-torchaudio-api"
    summary = "`torchaudio.info`, `torchaudio.io.StreamReader`, `sox_effects` and other APIs torchaudio 2.9 removed (opt-in)"
    why = (
        "torchaudio 2.8 deprecated most of its API as it moved into maintenance, and 2.9 removed it: the I/O and "
        "backend functions (`torchaudio.info`, `list_audio_backends`, `set_audio_backend`, `AudioMetaData`, "
        "`torchaudio.io.StreamReader`/`StreamWriter`/`AudioEffector`) moved to TorchCodec, and the sox effects, "
        "the Kaldi I/O wrappers, `utils.download_asset` and the whole `torchaudio.prototype` namespace are gone. "
        "Code that uses them fails with torchaudio 2.9, which torch 2.9 and later pair with. The entries are "
        "mined from the 2.7.1, 2.8.0 and 2.9.1 wheels (`scripts/mine_torchaudio_deprecations.py`). Opt-in: "
        "torchaudio is pinned separately from torch in many projects (speechbrain 1.0 still uses "
        "`StreamReader` behind a version pin), so these findings are for a project moving its torchaudio."
    )
    fix_safety = FixSafety.NONE
    fix_description = (
        "No fix: TorchCodec's decoders and encoders are other objects with other signatures, and the dropped "
        "sox and prototype functions have no replacement in torchaudio.\n\n"
        + entry_table(removed_entries())
    )
    STATUS = Status.REMOVED
    OPT_IN = True
    enabled_by_default = False

    @classmethod
    def table(cls) -> Tuple[Deprecation, ...]:
        return removed_entries()

    def message(self, entry: Deprecation) -> str:  # type: ignore[override]
        return concise_message(entry, f"was removed in torchaudio {REMOVED_IN}", "was removed")

    def detail(self, entry: Deprecation) -> str:  # type: ignore[override]
        return split_replacement(entry.replacement)[1]

    references = (
        "https://github.com/pytorch/audio/issues/3902",
        "https://docs.pytorch.org/audio/2.8/torchaudio.html",
    )
    flagged = (
        Example(
            """
            import torchaudio
            meta = torchaudio.info("speech.wav")
            """,
        ),
        Example(
            """
            from torchaudio.io import StreamReader
            reader = StreamReader("speech.mp4")
            """,
        ),
        Example(
            """
            import torchaudio.sox_effects as sox
            out, sr = sox.apply_effects_tensor(wave, 16000, [["gain", "-n"]])
            """,
        ),
    )
    accepted = (
        """
        import torchaudio
        wave, sr = torchaudio.load("speech.wav")  # still there in 2.9, on TorchCodec
        mel = torchaudio.transforms.MelSpectrogram(sample_rate=sr)(wave)
        """,
    )
