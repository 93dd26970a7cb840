"""The Pareto plot's histograms (the diagonal of a plot of three or more objectives)."""

from __future__ import annotations

import numpy as np

from dse.plots import _bins


def test_histogram_bins_are_log_spaced_on_a_log_axis_and_shared_by_the_front():
    v = np.array([0.05, 0.1, 1.0, 7.0, np.inf])  # spans > 30x: a log axis
    b = _bins(v, 30)
    assert len(b) == 31 and b[0] == 0.05 and b[-1] == 7.0
    assert np.allclose(np.diff(np.log(b)), np.log(7.0 / 0.05) / 30)  # equal widths on the page
    lin = _bins(np.array([1.0, 2.0, 4.0]), 10)
    assert np.allclose(np.diff(lin), 0.3)  # explicit edges: the front's bars fall on the same bins
    assert _bins(np.array([3.0, 3.0]), 10) == 10  # no range: matplotlib's own
    assert _bins(np.array([-1.0, 0.01, 1.0]), 5)[0] == 0.01  # a log axis shows the positive values
