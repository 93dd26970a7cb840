"""Built-in networks of spec `workloads.md`, with its layer names.

AlexNet layers are numbered as in the EMAXV/EMAXVR thesis (C1, P3, C4, ...);
its classifier, which the thesis does not list, continues the numbering
(FC11-FC13). VGG16 likewise (C1 ... P18, FC19-FC21). LeNet follows the Caffe
model of `atom_switch.md` §3 (ReLU fused into ip1). FC1-FC3 are the single
layers of `multicore.md` §3, each named ``fc``.
"""

from __future__ import annotations

from collections.abc import Callable

from workloads.errors import UserError, allowed

from .layers import FC, Conv2D, Layer, MatMul, Pool, Workload, elementwise, layer_norm, softmax


def _alexnet_features() -> list[Layer]:
    return [
        Conv2D("C1", in_ch=3, out_ch=96, kernel_h=11, kernel_w=11, in_h=227, in_w=227, stride=4, activation="relu"),
        Pool("P3", channels=96, in_h=55, in_w=55, kernel=3, stride=2),
        Conv2D("C4", in_ch=96, out_ch=256, groups=2, kernel_h=5, kernel_w=5, in_h=27, in_w=27, padding=2, activation="relu"),
        Pool("P6", channels=256, in_h=27, in_w=27, kernel=3, stride=2),
        Conv2D("C7", in_ch=256, out_ch=384, kernel_h=3, kernel_w=3, in_h=13, in_w=13, padding=1, activation="relu"),
        Conv2D("C8", in_ch=384, out_ch=384, groups=2, kernel_h=3, kernel_w=3, in_h=13, in_w=13, padding=1, activation="relu"),
        Conv2D("C9", in_ch=384, out_ch=256, groups=2, kernel_h=3, kernel_w=3, in_h=13, in_w=13, padding=1, activation="relu"),
        Pool("P10", channels=256, in_h=13, in_w=13, kernel=3, stride=2),
    ]


def _alexnet_classifier() -> list[Layer]:
    return [
        FC("FC11", inputs=256 * 6 * 6, outputs=4096, activation="relu"),
        FC("FC12", inputs=4096, outputs=4096, activation="relu"),
        FC("FC13", inputs=4096, outputs=1000),
    ]


def _vgg16_features() -> list[Layer]:
    # (name, in_ch, out_ch, spatial size) of the 13 convolutions; a pool after
    # C2, C5, C9, C13, C17 (numbering of the EMAXVR thesis).
    convs = [
        ("C1", 3, 64, 224), ("C2", 64, 64, 224),
        ("C4", 64, 128, 112), ("C5", 128, 128, 112),
        ("C7", 128, 256, 56), ("C8", 256, 256, 56), ("C9", 256, 256, 56),
        ("C11", 256, 512, 28), ("C12", 512, 512, 28), ("C13", 512, 512, 28),
        ("C15", 512, 512, 14), ("C16", 512, 512, 14), ("C17", 512, 512, 14),
    ]
    pool_after = {"C2": "P3", "C5": "P6", "C9": "P10", "C13": "P14", "C17": "P18"}
    layers: list[Layer] = []
    for name, ic, oc, hw in convs:
        layers.append(Conv2D(name, in_ch=ic, out_ch=oc, kernel_h=3, kernel_w=3, in_h=hw, in_w=hw, padding=1, activation="relu"))
        if name in pool_after:
            layers.append(Pool(pool_after[name], channels=oc, in_h=hw, in_w=hw, kernel=2, stride=2))
    return layers


def _vgg16_classifier() -> list[Layer]:
    return [
        FC("FC19", inputs=512 * 7 * 7, outputs=4096, activation="relu"),
        FC("FC20", inputs=4096, outputs=4096, activation="relu"),
        FC("FC21", inputs=4096, outputs=1000),
    ]


def _lenet() -> list[Layer]:
    return [
        Conv2D("conv1", in_ch=1, out_ch=20, kernel_h=5, kernel_w=5, in_h=28, in_w=28),
        Pool("pool1", channels=20, in_h=24, in_w=24, kernel=2, stride=2),
        Conv2D("conv2", in_ch=20, out_ch=50, kernel_h=5, kernel_w=5, in_h=12, in_w=12),
        Pool("pool2", channels=50, in_h=8, in_w=8, kernel=2, stride=2),
        FC("ip1", inputs=4 * 4 * 50, outputs=500, activation="relu"),
        FC("ip2", inputs=500, outputs=10),
    ]


def _fc(n: int) -> list[Layer]:
    return [FC("fc", inputs=n, outputs=n)]


def _resnet50() -> list[Layer]:
    """torchvision ResNet-50 (v1.5: the stride sits on the 3x3 conv), 224 x 224, batch-norm folded.

    Layer names follow torchvision's modules (``layer2.0.conv2``, ``layer2.0.downsample``); each
    bottleneck ends with its residual ``add`` and ``relu`` as vector layers.
    """
    layers: list[Layer] = [
        Conv2D("conv1", in_ch=3, out_ch=64, kernel_h=7, kernel_w=7, in_h=224, in_w=224, stride=2, padding=3,
               activation="relu"),
        Pool("maxpool", channels=64, in_h=112, in_w=112, kernel=3, stride=2, padding=1),
    ]
    cin, size = 64, 56
    for stage, (width, blocks, stride) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)), 1):
        for b in range(blocks):
            s = stride if b == 0 else 1
            pre, out = f"layer{stage}.{b}", 4 * width
            layers += [
                Conv2D(f"{pre}.conv1", in_ch=cin, out_ch=width, in_h=size, in_w=size, activation="relu"),
                Conv2D(f"{pre}.conv2", in_ch=width, out_ch=width, kernel_h=3, kernel_w=3, in_h=size, in_w=size,
                       stride=s, padding=1, activation="relu"),
            ]
            size //= s
            layers.append(Conv2D(f"{pre}.conv3", in_ch=width, out_ch=out, in_h=size, in_w=size))
            if b == 0:
                layers.append(Conv2D(f"{pre}.downsample", in_ch=cin, out_ch=out, in_h=size * s, in_w=size * s,
                                     stride=s))
            elems = out * size * size
            layers += [elementwise(f"{pre}.add", "add", elems, in_elems=2 * elems),
                       elementwise(f"{pre}.relu", "relu", elems)]
            cin = out
    layers += [Pool("avgpool", channels=2048, in_h=7, in_w=7, kernel=7, stride=7, mode="avg"),
               FC("fc", inputs=2048, outputs=1000)]
    return layers


def _mobilenet_v2() -> list[Layer]:
    """torchvision MobileNetV2 (width 1.0, 224 x 224): inverted residuals with ReLU6 (``clip``),
    depthwise 3x3 convolutions, a residual ``add`` where stride is 1 and channels match."""
    layers: list[Layer] = [Conv2D("features.0", in_ch=3, out_ch=32, kernel_h=3, kernel_w=3, in_h=224, in_w=224,
                                  stride=2, padding=1, activation="clip")]
    cin, size, idx = 32, 112, 1
    for t, c, n, stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                            (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            s, hidden, pre = (stride if i == 0 else 1), cin * t, f"features.{idx}"
            if t != 1:
                layers.append(Conv2D(f"{pre}.expand", in_ch=cin, out_ch=hidden, in_h=size, in_w=size,
                                     activation="clip"))
            layers.append(Conv2D(f"{pre}.dw", in_ch=hidden, out_ch=hidden, kernel_h=3, kernel_w=3, in_h=size,
                                 in_w=size, stride=s, padding=1, groups=hidden, activation="clip"))
            size = (size + 2 - 3) // s + 1
            layers.append(Conv2D(f"{pre}.project", in_ch=hidden, out_ch=c, in_h=size, in_w=size))
            if s == 1 and cin == c:
                elems = c * size * size
                layers.append(elementwise(f"{pre}.add", "add", elems, in_elems=2 * elems))
            cin, idx = c, idx + 1
    layers += [Conv2D("features.18", in_ch=320, out_ch=1280, in_h=7, in_w=7, activation="clip"),
               Pool("avgpool", channels=1280, in_h=7, in_w=7, kernel=7, stride=7, mode="avg"),
               FC("classifier", inputs=1280, outputs=1000)]
    return layers


def _bert_encoder(seq: int = 128, hidden: int = 768, heads: int = 12, ffn: int = 3072) -> list[Layer]:
    """One BERT-base-like encoder layer (post-LayerNorm) over ``seq`` tokens.

    Linear layers are FC with batch = tokens; the per-head Q K^T and P V are batched activation
    products (``MatMul`` with batch = heads); scaling, softmax, residual adds, LayerNorms and
    GELU are vector layers.
    """
    d, tokens = hidden // heads, seq
    x = tokens * hidden
    att = heads * tokens * tokens
    return [
        FC("attention.query", inputs=hidden, outputs=hidden, batch=tokens),
        FC("attention.key", inputs=hidden, outputs=hidden, batch=tokens),
        FC("attention.value", inputs=hidden, outputs=hidden, batch=tokens),
        MatMul("attention.scores", m=tokens, k=d, n=tokens, batch=heads),
        elementwise("attention.scale", "div", att),
        softmax("attention.softmax", att, heads * tokens),
        MatMul("attention.context", m=tokens, k=tokens, n=d, batch=heads),
        FC("attention.output", inputs=hidden, outputs=hidden, batch=tokens),
        elementwise("attention.add", "add", x, in_elems=2 * x),
        layer_norm("attention.layernorm", x, tokens, 2 * hidden),
        FC("intermediate", inputs=hidden, outputs=ffn, batch=tokens),
        elementwise("intermediate.gelu", "gelu", tokens * ffn),
        FC("output", inputs=ffn, outputs=hidden, batch=tokens),
        elementwise("output.add", "add", x, in_elems=2 * x),
        layer_norm("output.layernorm", x, tokens, 2 * hidden),
    ]


#: built-ins that take parameters (``name:key=value,...``) and their defaults
PARAMETRIC: dict[str, tuple[Callable[..., list[Layer]], dict[str, int]]] = {
    "bert_encoder": (_bert_encoder, {"seq": 128, "hidden": 768, "heads": 12, "ffn": 3072}),
}


BUILTINS: dict[str, Callable[[], list[Layer]]] = {
    "alexnet": lambda: _alexnet_features() + _alexnet_classifier(),
    "alexnet-conv": _alexnet_features,
    "vgg16": lambda: _vgg16_features() + _vgg16_classifier(),
    "vgg16-conv": _vgg16_features,
    "lenet": _lenet,
    "fc1": lambda: _fc(512),
    "fc2": lambda: _fc(1280),
    "fc3": lambda: _fc(2560),
    "resnet50": _resnet50,
    "mobilenet_v2": _mobilenet_v2,
    "bert_encoder": _bert_encoder,
}


def builtin(name: str) -> Workload:
    """The built-in network ``name`` (one of :data:`BUILTINS`)."""
    return Workload(name, tuple(BUILTINS[name]()))


def parse(spec: str) -> Workload:
    """A built-in by name, or a parametric built-in ``bert_encoder:seq=384,heads=16``."""
    name, _, rest = spec.partition(":")
    if not rest and name in BUILTINS:
        return builtin(name)
    if name not in PARAMETRIC:
        raise UserError(f"workload '{spec}': {name} takes no parameters; parametric built-ins: {allowed(PARAMETRIC)}")
    build, defaults = PARAMETRIC[name]
    args = dict(defaults)
    for item in filter(None, (t.strip() for t in rest.split(","))):
        key, sep, value = item.partition("=")
        if key not in defaults or not sep:
            raise UserError(f"workload '{spec}': unknown key '{key}'; allowed: {allowed(sorted(defaults))} (key=value)")
        try:
            args[key] = int(value)
        except ValueError:
            raise UserError(f"workload '{spec}': {key}={value!r} is not an int") from None
        if args[key] < 1:
            raise UserError(f"workload '{spec}': {key}={args[key]} must be >= 1")
    if args.get("hidden", 1) % args.get("heads", 1):
        raise UserError(f"workload '{spec}': heads={args['heads']} must divide hidden={args['hidden']}")
    return Workload(spec, tuple(build(**args)))
