"""The torchvision facts of TL112 / TL113 (``torchlint.knowledge.torchvision_api``).

torchvision cannot be installed here (its wheels pull a CUDA build of torch),
so these tests check the table against an independent listing of
torchvision's model registry (``torchvision.models.list_models()`` of the
0.15+ releases, by module) and against the naming rules of its weights enums.
"""

from __future__ import annotations

import re

import pytest

from torchlint.knowledge.torchvision_api import (
    BUILDERS,
    BUILDERS_BY_NAME,
    DETECTION,
    MODELS,
    OPTICAL_FLOW,
    QUANTIZATION,
    SEGMENTATION,
    VARIES,
    VIDEO,
)

REGISTRY = {
    MODELS: """
        alexnet convnext_base convnext_large convnext_small convnext_tiny densenet121 densenet161 densenet169
        densenet201 efficientnet_b0 efficientnet_b1 efficientnet_b2 efficientnet_b3 efficientnet_b4 efficientnet_b5
        efficientnet_b6 efficientnet_b7 efficientnet_v2_l efficientnet_v2_m efficientnet_v2_s googlenet inception_v3
        maxvit_t mnasnet0_5 mnasnet0_75 mnasnet1_0 mnasnet1_3 mobilenet_v2 mobilenet_v3_large mobilenet_v3_small
        regnet_x_16gf regnet_x_1_6gf regnet_x_32gf regnet_x_3_2gf regnet_x_400mf regnet_x_800mf regnet_x_8gf
        regnet_y_128gf regnet_y_16gf regnet_y_1_6gf regnet_y_32gf regnet_y_3_2gf regnet_y_400mf regnet_y_800mf
        regnet_y_8gf resnet101 resnet152 resnet18 resnet34 resnet50 resnext101_32x8d resnext101_64x4d
        resnext50_32x4d shufflenet_v2_x0_5 shufflenet_v2_x1_0 shufflenet_v2_x1_5 shufflenet_v2_x2_0 squeezenet1_0
        squeezenet1_1 swin_b swin_s swin_t swin_v2_b swin_v2_s swin_v2_t vgg11 vgg11_bn vgg13 vgg13_bn vgg16
        vgg16_bn vgg19 vgg19_bn vit_b_16 vit_b_32 vit_h_14 vit_l_16 vit_l_32 wide_resnet101_2 wide_resnet50_2
    """,
    DETECTION: """
        fasterrcnn_mobilenet_v3_large_320_fpn fasterrcnn_mobilenet_v3_large_fpn fasterrcnn_resnet50_fpn
        fasterrcnn_resnet50_fpn_v2 fcos_resnet50_fpn keypointrcnn_resnet50_fpn maskrcnn_resnet50_fpn
        maskrcnn_resnet50_fpn_v2 retinanet_resnet50_fpn retinanet_resnet50_fpn_v2 ssd300_vgg16
        ssdlite320_mobilenet_v3_large
    """,
    SEGMENTATION: """
        deeplabv3_mobilenet_v3_large deeplabv3_resnet101 deeplabv3_resnet50 fcn_resnet101 fcn_resnet50
        lraspp_mobilenet_v3_large
    """,
    # registered as quantized_<name>
    QUANTIZATION: """
        googlenet inception_v3 mobilenet_v2 mobilenet_v3_large resnet18 resnet50 resnext101_32x8d resnext101_64x4d
        shufflenet_v2_x0_5 shufflenet_v2_x1_0 shufflenet_v2_x1_5 shufflenet_v2_x2_0
    """,
    VIDEO: "mc3_18 mvit_v1_b mvit_v2_s r2plus1d_18 r3d_18 s3d swin3d_b swin3d_s swin3d_t",
    OPTICAL_FLOW: "raft_large raft_small",
}

LEGACY_MEMBERS = {
    MODELS: {"IMAGENET1K_V1", None},
    DETECTION: {"COCO_V1"},
    SEGMENTATION: {"COCO_WITH_VOC_LABELS_V1"},
    QUANTIZATION: {"IMAGENET1K_V1"},
    VIDEO: {"KINETICS400_V1"},
    OPTICAL_FLOW: {"C_T_V2", VARIES},
}


@pytest.mark.parametrize("package", list(REGISTRY))
def test_every_registered_builder_is_in_the_table(package):
    listed = {b.name for b in BUILDERS if b.package == package}
    assert listed == set(REGISTRY[package].split())


def test_builders_are_unique_and_every_spelling_resolves_to_its_builder():
    keys = [(b.package, b.name) for b in BUILDERS]
    assert len(keys) == len(set(keys))
    for builder in BUILDERS:
        for qualified in builder.qualified_names:
            assert BUILDERS_BY_NAME[qualified] is builder
    # the quantized resnet18 is not the float one
    assert BUILDERS_BY_NAME[f"{QUANTIZATION}.resnet18"] is not BUILDERS_BY_NAME[f"{MODELS}.resnet18"]


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: f"{b.package.rsplit('.', 1)[1]}.{b.name}")
def test_builder_entry_follows_torchvision_naming(builder):
    assert re.fullmatch(r"[A-Z][A-Za-z0-9_]*_Weights", builder.weights_enum), builder.weights_enum
    assert builder.legacy in LEGACY_MEMBERS[builder.package]
    # weights_backbone exists exactly on detection and segmentation builders
    assert (builder.backbone is not None) == (builder.package in (DETECTION, SEGMENTATION))
    if builder.backbone is not None:
        enum, member = builder.backbone
        assert enum in {"ResNet50_Weights", "ResNet101_Weights", "MobileNet_V3_Large_Weights", "VGG16_Weights"}
        assert member == ("IMAGENET1K_FEATURES" if enum == "VGG16_Weights" else "IMAGENET1K_V1")
    assert (builder.quantized is not None) == (builder.package == QUANTIZATION)
    if builder.quantized is not None:
        enum, member = builder.quantized
        assert enum == builder.weights_enum.replace("_Weights", "_QuantizedWeights")
        assert member == ("IMAGENET1K_QNNPACK_V1" if "MobileNet" in enum else "IMAGENET1K_FBGEMM_V1")


def test_the_builders_without_legacy_weights():
    assert {b.name for b in BUILDERS if b.legacy is None} == {"vit_h_14", "regnet_y_128gf"}
    assert {b.name for b in BUILDERS if b.legacy == VARIES} == {"raft_large"}
