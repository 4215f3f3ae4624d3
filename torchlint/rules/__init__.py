"""The rule catalog: every rule torchlint ships, in code order.

Adding a rule is adding a module here and listing its class below.
"""

from typing import List, Tuple, Type

from torchlint.rule import Rule
from torchlint.rules.tl101_data_index import DataIndexZero
from torchlint.rules.tl102_volatile import VolatileVariable
from torchlint.rules.tl103_upsample import DeprecatedUpsample
from torchlint.rules.tl104_sigmoid_tanh import FunctionalSigmoidTanh
from torchlint.rules.tl105_init_inplace import InitWithoutUnderscore
from torchlint.rules.tl106_legacy_reduction import LegacyLossReduction
from torchlint.rules.tl201_discarded_conversion import DiscardedTensorConversion
from torchlint.rules.tl202_cuda_numpy import CudaTensorToNumpy

RULE_CLASSES: Tuple[Type[Rule], ...] = (
    DataIndexZero,
    VolatileVariable,
    DeprecatedUpsample,
    FunctionalSigmoidTanh,
    InitWithoutUnderscore,
    LegacyLossReduction,
    DiscardedTensorConversion,
    CudaTensorToNumpy,
)


def all_rules() -> List[Rule]:
    return [cls() for cls in RULE_CLASSES]


def rule_by_code(code: str) -> Rule:
    for cls in RULE_CLASSES:
        if cls.code == code:
            return cls()
    raise KeyError(code)
