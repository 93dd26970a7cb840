"""Export ``tiny_hybrid.onnx``: a small CNN + transformer network, with PyTorch's default exporter.

Needs torch (not a dependency of accel-dse; any recent CPU wheel):

    python examples/export_tiny_hybrid.py            # torch.onnx.export(model, (x,)): the dynamo exporter

The network touches what real exports contain past classic CNNs: a strided conv stem with
batch norm and SiLU (Sigmoid x Mul), a depthwise-separable block with Hardswish and a residual
Add, a Conv1d over the flattened tokens, a transposed conv, global average pooling (which the
dynamo exporter writes as ReduceMean), and a transformer encoder layer (LayerNormalization,
multi-head attention with Transpose/Reshape and batched MatMuls, Softmax, GELU).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn


class TinyHybrid(nn.Module):
    def __init__(self, ch: int = 32, heads: int = 4, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, ch, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(ch), nn.SiLU())
        self.dw = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1, groups=ch), nn.Hardswish(), nn.Conv2d(ch, ch, 1))
        self.up = nn.ConvTranspose2d(ch, ch, 2, stride=2)
        self.down = nn.Conv2d(ch, ch, 2, stride=2)
        self.mix = nn.Conv1d(ch, ch, 3, padding=1)
        self.encoder = nn.TransformerEncoderLayer(ch, heads, dim_feedforward=4 * ch, activation="gelu",
                                                  batch_first=True, dropout=0.0)
        self.head = nn.Linear(ch, classes)

    def forward(self, x):
        x = self.stem(x)                              # (1, C, 16, 16)
        x = x + self.dw(x)
        x = self.down(self.up(x))                     # (1, C, 16, 16)
        t = self.mix(x.flatten(2))                    # Conv1d over 256 positions
        t = self.encoder(t.transpose(1, 2))           # (1, 256, C)
        pooled = x.mean(dim=(2, 3)) + t.mean(dim=1)   # global average pooling of both branches
        return self.head(pooled)


def main(out: str = str(Path(__file__).with_name("tiny_hybrid.onnx"))) -> None:
    torch.manual_seed(0)
    model = TinyHybrid().eval()
    # the default exporter (dynamo); one file instead of a .onnx + .onnx.data pair
    torch.onnx.export(model, (torch.randn(1, 3, 32, 32),), out, external_data=False)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
