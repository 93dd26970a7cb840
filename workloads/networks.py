"""Built-in networks of spec `workloads.md`, with its layer names.

AlexNet layers are numbered as in the EMAXV/EMAXVR thesis (C1, P3, C4, ...);
its classifier, which the thesis does not list, continues the numbering
(FC11-FC13). VGG16 likewise (C1 ... P18, FC19-FC21). LeNet follows the Caffe
model of `atom_switch.md` §3 (ReLU fused into ip1). FC1-FC3 are the single
layers of `multicore.md` §3, each named ``fc``.
"""

from __future__ import annotations

from collections.abc import Callable

from .layers import FC, Conv2D, Layer, Pool, Workload


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


BUILTINS: dict[str, Callable[[], list[Layer]]] = {
    "alexnet": lambda: _alexnet_features() + _alexnet_classifier(),
    "alexnet-conv": _alexnet_features,
    "vgg16": lambda: _vgg16_features() + _vgg16_classifier(),
    "vgg16-conv": _vgg16_features,
    "lenet": _lenet,
    "fc1": lambda: _fc(512),
    "fc2": lambda: _fc(1280),
    "fc3": lambda: _fc(2560),
}


def builtin(name: str) -> Workload:
    """The built-in network ``name`` (one of :data:`BUILTINS`)."""
    return Workload(name, tuple(BUILTINS[name]()))
