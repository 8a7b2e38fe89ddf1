"""benchmarks/value_shape.py's statistics on series whose answers are known."""
import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import value_shape  # noqa: E402


def _bands(rng, N=400, L=128):
    """A slow sine (period 64) and a fast one (period 4), random phases and amplitudes, independent."""
    t = np.arange(L)[None, :, None]
    slow = rng.rayleigh(1.0, (N, 1, 1)) * np.sin(2 * np.pi * t / 64 + rng.uniform(0, 7, (N, 1, 1)))
    fast = rng.rayleigh(1.0, (N, 1, 1)) * np.sin(2 * np.pi * t / 4 + rng.uniform(0, 7, (N, 1, 1)))
    return slow, fast


def test_kurtosis_of_known_distributions():
    rng = np.random.default_rng(0)
    assert value_shape.kurtosis(rng.standard_normal(200000), 0) == pytest.approx(0.0, abs=0.05)
    assert value_shape.kurtosis(np.sin(np.linspace(0, 200 * np.pi, 100000)), 0) == pytest.approx(-1.5, abs=0.01)


def test_bands_split_a_sum_of_slow_and_fast_sines_and_their_coupling_is_zero_when_independent():
    slow, fast = _bands(np.random.default_rng(1))
    x = slow + fast
    assert np.allclose(value_shape.band(x, 0.0, 1 / 20), slow, atol=1e-9)
    assert np.allclose(value_shape.band(x, 1 / 5, 1.0), fast, atol=1e-9)
    assert abs(value_shape.square_coupling(slow, fast)) < 0.05


def test_saturation_couples_the_bands_and_flattens_the_values():
    """Squashing the sum (tanh) shrinks the fast part where the slow one is large: the coupling of the squared
    bands turns negative and the values within a sequence get flatter, as a sigmoid output does to samples."""
    slow, fast = _bands(np.random.default_rng(2))
    plain, squashed = 0.5 + 0.1 * (slow + fast), 0.5 + 0.5 * np.tanh(0.6 * (slow + fast))
    a, b = value_shape.describe(plain[..., :1]), value_shape.describe(squashed[..., :1])
    key = "coupling of squares, slow x fast"
    assert abs(a[key]) < 0.05 and b[key] < a[key] - 0.1
    assert b["within-sequence kurtosis"] < a["within-sequence kurtosis"] - 0.1
