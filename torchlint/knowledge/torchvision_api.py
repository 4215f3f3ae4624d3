"""What torchlint knows about torchvision's API, as data (TL112, TL113).

torchvision 0.13 (paired with torch 1.12) replaced the boolean
``pretrained=`` / ``pretrained_backbone=`` arguments of its model builders by
``weights=`` / ``weights_backbone=``, which take a weights enum member, its
name as a string (``weights="IMAGENET1K_V1"``) or None. The old arguments
still work through a compatibility decorator that warns and maps
``pretrained=True`` to one fixed enum member per builder, the *legacy*
weights: for ResNet-50 that is ``ResNet50_Weights.IMAGENET1K_V1``, the
weights ``pretrained=True`` always loaded, while ``weights="DEFAULT"`` means
the best weights of the installed torchvision (``IMAGENET1K_V2`` for
ResNet-50), a different model. So the behaviour-preserving rewrite of
``pretrained=True`` is the legacy member, and this table records it for every
builder of torchvision's model registry (classification, detection,
segmentation, quantization, video and optical flow), as declared by each
builder's ``handle_legacy_interface`` in torchvision's sources.

torchvision is not installed here (its wheels pull a CUDA torch), so the
table is data read from torchvision's sources; ``tests/test_torchvision_table``
checks its internal consistency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

MODELS = "torchvision.models"

# The builder's legacy weights are unknown or differ between torchvision
# releases: ``pretrained=True`` is reported without a fix.
VARIES = "<varies>"


@dataclass(frozen=True)
class Builder:
    """A model builder and what its legacy arguments meant.

    ``legacy``: the member of ``weights_enum`` that ``pretrained=True`` loads;
    None when the builder has no such weights (``pretrained=True`` raises
    ValueError), VARIES when it is not the same in every release.
    ``backbone``: (enum, member) that ``pretrained_backbone=True`` loads, for
    builders that have ``weights_backbone``. ``quantized``: (enum, member)
    that ``pretrained=True`` loads when ``quantize=True`` (quantization
    builders; without ``quantize`` it is ``weights_enum.legacy``).
    """

    package: str  # "torchvision.models" or a subpackage such as "torchvision.models.detection"
    name: str
    modules: Tuple[str, ...]  # defining submodules of ``package`` that also export the builder
    weights_enum: str
    legacy: Optional[str]
    backbone: Optional[Tuple[str, str]] = None
    quantized: Optional[Tuple[str, str]] = None

    @property
    def qualified_names(self) -> Tuple[str, ...]:
        return (f"{self.package}.{self.name}",) + tuple(f"{self.package}.{m}.{self.name}" for m in self.modules)


def _classification(modules: Tuple[str, ...], pairs: Mapping[str, Tuple[str, Optional[str]]]) -> Tuple[Builder, ...]:
    return tuple(Builder(MODELS, name, modules, enum, legacy) for name, (enum, legacy) in pairs.items())


def _imagenet(*pairs: Tuple[str, str]) -> Dict[str, Tuple[str, Optional[str]]]:
    return {name: (enum, "IMAGENET1K_V1") for name, enum in pairs}


_V1 = "IMAGENET1K_V1"

CLASSIFICATION: Tuple[Builder, ...] = (
    *_classification(("alexnet",), _imagenet(("alexnet", "AlexNet_Weights"))),
    *_classification(("convnext",), _imagenet(
        ("convnext_tiny", "ConvNeXt_Tiny_Weights"), ("convnext_small", "ConvNeXt_Small_Weights"),
        ("convnext_base", "ConvNeXt_Base_Weights"), ("convnext_large", "ConvNeXt_Large_Weights"))),
    *_classification(("densenet",), _imagenet(
        ("densenet121", "DenseNet121_Weights"), ("densenet161", "DenseNet161_Weights"),
        ("densenet169", "DenseNet169_Weights"), ("densenet201", "DenseNet201_Weights"))),
    *_classification(("efficientnet",), _imagenet(
        *((f"efficientnet_b{i}", f"EfficientNet_B{i}_Weights") for i in range(8)),
        ("efficientnet_v2_s", "EfficientNet_V2_S_Weights"), ("efficientnet_v2_m", "EfficientNet_V2_M_Weights"),
        ("efficientnet_v2_l", "EfficientNet_V2_L_Weights"))),
    *_classification(("googlenet",), _imagenet(("googlenet", "GoogLeNet_Weights"))),
    *_classification(("inception",), _imagenet(("inception_v3", "Inception_V3_Weights"))),
    *_classification(("maxvit",), _imagenet(("maxvit_t", "MaxVit_T_Weights"))),
    *_classification(("mnasnet",), _imagenet(
        ("mnasnet0_5", "MNASNet0_5_Weights"), ("mnasnet0_75", "MNASNet0_75_Weights"),
        ("mnasnet1_0", "MNASNet1_0_Weights"), ("mnasnet1_3", "MNASNet1_3_Weights"))),
    *_classification(("mobilenetv2", "mobilenet"), _imagenet(("mobilenet_v2", "MobileNet_V2_Weights"))),
    *_classification(("mobilenetv3", "mobilenet"), _imagenet(
        ("mobilenet_v3_large", "MobileNet_V3_Large_Weights"), ("mobilenet_v3_small", "MobileNet_V3_Small_Weights"))),
    *_classification(("regnet",), {
        **_imagenet(*((f"regnet_{kind}_{size}", f"RegNet_{kind.upper()}_{size.upper()}_Weights")
                      for kind, sizes in (("y", ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")),
                                          ("x", ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")))
                      for size in sizes)),
        "regnet_y_128gf": ("RegNet_Y_128GF_Weights", None),
    }),
    *_classification(("resnet",), _imagenet(
        ("resnet18", "ResNet18_Weights"), ("resnet34", "ResNet34_Weights"), ("resnet50", "ResNet50_Weights"),
        ("resnet101", "ResNet101_Weights"), ("resnet152", "ResNet152_Weights"),
        ("resnext50_32x4d", "ResNeXt50_32X4D_Weights"), ("resnext101_32x8d", "ResNeXt101_32X8D_Weights"),
        ("resnext101_64x4d", "ResNeXt101_64X4D_Weights"), ("wide_resnet50_2", "Wide_ResNet50_2_Weights"),
        ("wide_resnet101_2", "Wide_ResNet101_2_Weights"))),
    *_classification(("shufflenetv2",), _imagenet(
        ("shufflenet_v2_x0_5", "ShuffleNet_V2_X0_5_Weights"), ("shufflenet_v2_x1_0", "ShuffleNet_V2_X1_0_Weights"),
        ("shufflenet_v2_x1_5", "ShuffleNet_V2_X1_5_Weights"), ("shufflenet_v2_x2_0", "ShuffleNet_V2_X2_0_Weights"))),
    *_classification(("squeezenet",), _imagenet(
        ("squeezenet1_0", "SqueezeNet1_0_Weights"), ("squeezenet1_1", "SqueezeNet1_1_Weights"))),
    *_classification(("swin_transformer",), _imagenet(
        ("swin_t", "Swin_T_Weights"), ("swin_s", "Swin_S_Weights"), ("swin_b", "Swin_B_Weights"),
        ("swin_v2_t", "Swin_V2_T_Weights"), ("swin_v2_s", "Swin_V2_S_Weights"), ("swin_v2_b", "Swin_V2_B_Weights"))),
    *_classification(("vgg",), _imagenet(*(
        (f"vgg{depth}{bn}", f"VGG{depth}{bn.upper()}_Weights") for depth in (11, 13, 16, 19) for bn in ("", "_bn")))),
    *_classification(("vision_transformer",), {
        **_imagenet(("vit_b_16", "ViT_B_16_Weights"), ("vit_b_32", "ViT_B_32_Weights"),
                    ("vit_l_16", "ViT_L_16_Weights"), ("vit_l_32", "ViT_L_32_Weights")),
        "vit_h_14": ("ViT_H_14_Weights", None),
    }),
)

# The classifiers whose output is always one tensor of logits, ``(N, num_classes)``:
# GoogLeNet and Inception v3 give a tuple with their auxiliary logits when training.
CLASSIFIER_OUTPUTS_2D = frozenset(
    name for builder in CLASSIFICATION if builder.name not in ("googlenet", "inception_v3")
    for name in builder.qualified_names)

DETECTION = MODELS + ".detection"
_RESNET50_BACKBONE = ("ResNet50_Weights", _V1)
_MOBILENET_BACKBONE = ("MobileNet_V3_Large_Weights", _V1)


def _detection(module: str, name: str, enum: str, backbone: Tuple[str, str], legacy: str = "COCO_V1") -> Builder:
    return Builder(DETECTION, name, (module,), enum, legacy, backbone)


DETECTION_BUILDERS: Tuple[Builder, ...] = (
    _detection("faster_rcnn", "fasterrcnn_resnet50_fpn", "FasterRCNN_ResNet50_FPN_Weights", _RESNET50_BACKBONE),
    _detection("faster_rcnn", "fasterrcnn_resnet50_fpn_v2", "FasterRCNN_ResNet50_FPN_V2_Weights", _RESNET50_BACKBONE),
    _detection("faster_rcnn", "fasterrcnn_mobilenet_v3_large_fpn", "FasterRCNN_MobileNet_V3_Large_FPN_Weights",
               _MOBILENET_BACKBONE),
    _detection("faster_rcnn", "fasterrcnn_mobilenet_v3_large_320_fpn",
               "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights", _MOBILENET_BACKBONE),
    _detection("fcos", "fcos_resnet50_fpn", "FCOS_ResNet50_FPN_Weights", _RESNET50_BACKBONE),
    # pretrained="legacy" selected COCO_LEGACY; True (and any other truthy value) COCO_V1.
    _detection("keypoint_rcnn", "keypointrcnn_resnet50_fpn", "KeypointRCNN_ResNet50_FPN_Weights", _RESNET50_BACKBONE),
    _detection("mask_rcnn", "maskrcnn_resnet50_fpn", "MaskRCNN_ResNet50_FPN_Weights", _RESNET50_BACKBONE),
    _detection("mask_rcnn", "maskrcnn_resnet50_fpn_v2", "MaskRCNN_ResNet50_FPN_V2_Weights", _RESNET50_BACKBONE),
    _detection("retinanet", "retinanet_resnet50_fpn", "RetinaNet_ResNet50_FPN_Weights", _RESNET50_BACKBONE),
    _detection("retinanet", "retinanet_resnet50_fpn_v2", "RetinaNet_ResNet50_FPN_V2_Weights", _RESNET50_BACKBONE),
    _detection("ssd", "ssd300_vgg16", "SSD300_VGG16_Weights", ("VGG16_Weights", "IMAGENET1K_FEATURES")),
    _detection("ssdlite", "ssdlite320_mobilenet_v3_large", "SSDLite320_MobileNet_V3_Large_Weights",
               _MOBILENET_BACKBONE),
)

SEGMENTATION = MODELS + ".segmentation"
_VOC = "COCO_WITH_VOC_LABELS_V1"

SEGMENTATION_BUILDERS: Tuple[Builder, ...] = (
    Builder(SEGMENTATION, "deeplabv3_resnet50", ("deeplabv3",), "DeepLabV3_ResNet50_Weights", _VOC,
            _RESNET50_BACKBONE),
    Builder(SEGMENTATION, "deeplabv3_resnet101", ("deeplabv3",), "DeepLabV3_ResNet101_Weights", _VOC,
            ("ResNet101_Weights", _V1)),
    Builder(SEGMENTATION, "deeplabv3_mobilenet_v3_large", ("deeplabv3",), "DeepLabV3_MobileNet_V3_Large_Weights",
            _VOC, _MOBILENET_BACKBONE),
    Builder(SEGMENTATION, "fcn_resnet50", ("fcn",), "FCN_ResNet50_Weights", _VOC, _RESNET50_BACKBONE),
    Builder(SEGMENTATION, "fcn_resnet101", ("fcn",), "FCN_ResNet101_Weights", _VOC, ("ResNet101_Weights", _V1)),
    Builder(SEGMENTATION, "lraspp_mobilenet_v3_large", ("lraspp",), "LRASPP_MobileNet_V3_Large_Weights", _VOC,
            _MOBILENET_BACKBONE),
)

QUANTIZATION = MODELS + ".quantization"


def _quantized(modules: Tuple[str, ...], name: str, enum: str, member: str = "IMAGENET1K_FBGEMM_V1") -> Builder:
    quantized_enum = enum.replace("_Weights", "_QuantizedWeights")
    return Builder(QUANTIZATION, name, modules, enum, _V1, quantized=(quantized_enum, member))


QUANTIZATION_BUILDERS: Tuple[Builder, ...] = (
    _quantized(("googlenet",), "googlenet", "GoogLeNet_Weights"),
    _quantized(("inception",), "inception_v3", "Inception_V3_Weights"),
    _quantized(("mobilenetv2", "mobilenet"), "mobilenet_v2", "MobileNet_V2_Weights", "IMAGENET1K_QNNPACK_V1"),
    _quantized(("mobilenetv3", "mobilenet"), "mobilenet_v3_large", "MobileNet_V3_Large_Weights",
               "IMAGENET1K_QNNPACK_V1"),
    _quantized(("resnet",), "resnet18", "ResNet18_Weights"),
    _quantized(("resnet",), "resnet50", "ResNet50_Weights"),
    _quantized(("resnet",), "resnext101_32x8d", "ResNeXt101_32X8D_Weights"),
    _quantized(("resnet",), "resnext101_64x4d", "ResNeXt101_64X4D_Weights"),
    _quantized(("shufflenetv2",), "shufflenet_v2_x0_5", "ShuffleNet_V2_X0_5_Weights"),
    _quantized(("shufflenetv2",), "shufflenet_v2_x1_0", "ShuffleNet_V2_X1_0_Weights"),
    _quantized(("shufflenetv2",), "shufflenet_v2_x1_5", "ShuffleNet_V2_X1_5_Weights"),
    _quantized(("shufflenetv2",), "shufflenet_v2_x2_0", "ShuffleNet_V2_X2_0_Weights"),
)

VIDEO = MODELS + ".video"
_K400 = "KINETICS400_V1"

VIDEO_BUILDERS: Tuple[Builder, ...] = (
    Builder(VIDEO, "r3d_18", ("resnet",), "R3D_18_Weights", _K400),
    Builder(VIDEO, "mc3_18", ("resnet",), "MC3_18_Weights", _K400),
    Builder(VIDEO, "r2plus1d_18", ("resnet",), "R2Plus1D_18_Weights", _K400),
    Builder(VIDEO, "s3d", ("s3d",), "S3D_Weights", _K400),
    Builder(VIDEO, "mvit_v1_b", ("mvit",), "MViT_V1_B_Weights", _K400),
    Builder(VIDEO, "mvit_v2_s", ("mvit",), "MViT_V2_S_Weights", _K400),
    Builder(VIDEO, "swin3d_t", ("swin_transformer",), "Swin3D_T_Weights", _K400),
    Builder(VIDEO, "swin3d_s", ("swin_transformer",), "Swin3D_S_Weights", _K400),
    Builder(VIDEO, "swin3d_b", ("swin_transformer",), "Swin3D_B_Weights", _K400),
)

OPTICAL_FLOW = MODELS + ".optical_flow"

OPTICAL_FLOW_BUILDERS: Tuple[Builder, ...] = (
    # The legacy default of raft_large moved from C_T_V2 to C_T_SKHT_V2 between releases.
    Builder(OPTICAL_FLOW, "raft_large", ("raft",), "Raft_Large_Weights", VARIES),
    Builder(OPTICAL_FLOW, "raft_small", ("raft",), "Raft_Small_Weights", "C_T_V2"),
)

BUILDERS: Tuple[Builder, ...] = (
    *CLASSIFICATION, *DETECTION_BUILDERS, *SEGMENTATION_BUILDERS, *QUANTIZATION_BUILDERS, *VIDEO_BUILDERS,
    *OPTICAL_FLOW_BUILDERS,
)

BUILDERS_BY_NAME: Mapping[str, Builder] = {
    qualified: builder for builder in BUILDERS for qualified in builder.qualified_names
}

# The weights API (``weights=`` / ``weights_backbone=``, enum names as strings)
# exists from torchvision 0.13, released together with torch 1.12.
WEIGHTS_API_TORCH = "1.12"


# --- deprecated transforms (TL113) ------------------------------------------------

V2_TO_TENSOR = "torchvision.transforms.v2.ToTensor"
V2_FUNCTIONAL_TO_TENSOR = "torchvision.transforms.v2.functional.to_tensor"

# What replaces each, in the words of torchvision's own deprecation warning.
V2_TO_TENSOR_REPLACEMENTS: Mapping[str, str] = {
    V2_TO_TENSOR: "v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])",
    V2_FUNCTIONAL_TO_TENSOR: "to_dtype(to_image(x), dtype=torch.float32, scale=True)",
}

# ``v2.ToImage`` / ``ToDtype(..., scale=True)`` exist, and ``v2.ToTensor`` warns,
# from torchvision 0.16, released together with torch 2.1.
V2_TO_IMAGE_TORCH = "2.1"
