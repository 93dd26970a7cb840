"""Atom-switch circuits (spec atom_switch.md §2): closed forms against a clock-by-clock simulation.

Hand check of the smallest case, a 6 x 6 image and a 3 x 3 kernel, one pixel
per clock: the last pixel (index 35) is latched into the input register at
edge 36; its product is latched at edge 37 and the last MAC's sum (the
window at row 3, column 3) at edge 38 = 36 + 2. The 2x2 pool compares that
output with its left neighbour (edge 39) and with the line memory (edge 40).
Delay lines: (3 - 1) lines of 6 - 3 = 3 registers; pooling line memory
4 / 2 = 2 words.
"""

from __future__ import annotations

import numpy as np
import pytest

from archmodels.atomswitch.circuits import (
    STAGES,
    conv_fill_cycles,
    delay_line_words,
    fold_split,
    pool_line_words,
    pool_tail_cycles,
    simulate_conv_pool,
    stream_cycles,
    tree_depth,
)


def _conv_ref(image: np.ndarray, kernels: np.ndarray) -> np.ndarray:
    """Direct valid cross-correlation summed over channels (what Caffe's conv computes)."""
    C, H, W = image.shape
    _, kh, kw = kernels.shape
    out = np.zeros((H - kh + 1, W - kw + 1))
    for y in range(out.shape[0]):
        for x in range(out.shape[1]):
            out[y, x] = np.sum(image[:, y:y + kh, x:x + kw] * kernels)
    return out


def _pool_ref(a: np.ndarray) -> np.ndarray:
    h, w = a.shape[0] // 2, a.shape[1] // 2
    return a[:2 * h, :2 * w].reshape(h, 2, w, 2).max(axis=(1, 3))


def test_hand_checked_6x6_image_3x3_kernel():
    rng = np.random.default_rng(0)
    image = rng.integers(-9, 10, (1, 6, 6))
    kernel = rng.integers(-4, 5, (1, 3, 3))
    sim = simulate_conv_pool(image, kernel)
    assert np.array_equal(sim.conv, _conv_ref(image, kernel))
    assert np.array_equal(sim.pool, _pool_ref(sim.conv))
    assert sim.conv_done == 38  # hand count (module docstring)
    assert sim.pool_done == 40
    assert sim.delay_registers == 6 == delay_line_words(3, 3, 6)
    assert sim.line_memory_words == 2 == pool_line_words(2, 2, 2)
    # the closed form the model uses
    assert stream_cycles(36, 1) + conv_fill_cycles(1, False, False) == 38
    assert stream_cycles(36, 1) + conv_fill_cycles(1, False, False) + STAGES.pool == 40


@pytest.mark.parametrize("C,H,W,kh,kw", [
    (1, 5, 5, 5, 5),  # kernel as wide as the image: no delay registers
    (2, 7, 6, 3, 2),  # non-square kernel, adder tree of depth 1
    (3, 7, 9, 2, 4),  # depth 2 (3 inputs)
    (5, 8, 8, 3, 3),  # depth 3
    (1, 7, 7, 2, 2),  # even conv output 6 x 6
    (1, 6, 7, 3, 2),  # conv output 4 x 6, pool tail 2
])
def test_closed_form_cycles_match_the_register_simulation(C, H, W, kh, kw):
    rng = np.random.default_rng(C * 100 + H)
    image = rng.integers(-9, 10, (C, H, W))
    kernels = rng.integers(-4, 5, (C, kh, kw))
    sim = simulate_conv_pool(image, kernels, pool=(H - kh + 1) >= 2 and (W - kw + 1) >= 2)
    assert np.array_equal(sim.conv, _conv_ref(image, kernels))
    expect = stream_cycles(H * W, 1) + conv_fill_cycles(C, False, False)
    assert sim.conv_done == expect
    assert sim.delay_registers == delay_line_words(kh, kw, W)
    if sim.pool is not None:
        assert np.array_equal(sim.pool, _pool_ref(sim.conv))
        # the stage ends when the conv buffer and the pool are both done
        oh, ow = H - kh + 1, W - kw + 1
        tail = pool_tail_cycles(oh, ow, 1, W, oh // 2, ow // 2, 2, 2, 0)
        assert max(sim.conv_done, sim.pool_done) == expect + tail
        if oh % 2 == 0 and ow % 2 == 0:
            assert tail == STAGES.pool


def test_tree_depth_is_ceil_log2():
    n = np.array([1, 2, 3, 4, 5, 8, 9, 20, 25, 500, 1000, 1024, 1025])
    assert tree_depth(n).tolist() == [0, 1, 2, 2, 3, 3, 4, 5, 5, 9, 10, 10, 11]


def test_fill_adds_partial_sum_and_relu_stages():
    base = conv_fill_cycles(20, False, False)
    assert base == STAGES.product + STAGES.accumulate + 5 * STAGES.adder_level
    assert conv_fill_cycles(20, True, True) == base + STAGES.activation + STAGES.partial_sum


@pytest.mark.parametrize("fold,expect", [
    (1, (50, 20, 1, 1)),
    (2, (25, 20, 2, 1)),
    (3, (17, 20, 3, 1)),  # ceil(50/3) = 17 channels per pass, 3 passes
    (50, (1, 20, 50, 1)),
    (100, (1, 10, 50, 2)),  # beyond the output channels: input channels split too
    (1000, (1, 1, 50, 20)),
    (5000, (1, 1, 50, 20)),  # cannot fold below one circuit
])
def test_fold_split_conv2(fold, expect):
    got = tuple(int(x[0]) for x in fold_split(np.array([fold]), 50, 20))
    assert got == expect
    oc_p, ic_p, oc_passes, ic_passes = got
    assert oc_p * oc_passes >= 50 and ic_p * ic_passes >= 20


def test_delay_line_words_with_dilation():
    # d = 2, 3x3, width 10: MACs of a row 2 pixels apart (1 extra register between neighbours, 2 per row, 3 rows);
    # row-to-row path 2 lines = 20 clocks minus the 4 pixels the row spans minus the MAC's own register: 15 per line.
    assert delay_line_words(3, 3, 10, dilation=2) == 3 * 2 * 1 + 2 * 15
    assert delay_line_words(5, 5, 28) == 4 * 23  # LeNet conv1: 4 lines of I - P = 23


def test_python_numbers_give_the_array_values():
    """The one-point path runs the circuit formulas on Python numbers: the same values as on arrays, and Python
    numbers out (no numpy scalar that would make every later operation a numpy call)."""
    rng = np.random.default_rng(7)
    n = np.concatenate([np.arange(1, 2100), rng.integers(1, 1 << 40, 2000)])
    assert [tree_depth(int(x)) for x in n] == tree_depth(n).tolist()
    for fold in [1, 2, 3, 7, 50, 100, 999, 1000, 5000]:
        one = fold_split(fold, 50, 20)
        assert all(type(v) is int for v in one)
        assert list(one) == [int(v[0]) for v in fold_split(np.array([fold]), 50, 20)]
    for args in [(24, 24, 1, 28, 12, 12, 2, 2, 0, 1), (9, 7, 2, 19, 4, 3, 3, 2, 1, 3), (5, 5, 1, 7, 2, 2, 2, 2, 0, 2)]:
        assert type(pool_tail_cycles(*args)) is int
        assert pool_tail_cycles(*args) == int(pool_tail_cycles(*map(np.array, args)))
    assert type(conv_fill_cycles(20, True, False)) is int
    assert conv_fill_cycles(20, True, False) == int(conv_fill_cycles(np.array([20]), np.array([1]), np.array([False]))[0])
