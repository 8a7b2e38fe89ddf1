"""The correlational score against a direct NumPy computation, and its draws."""
import numpy as np
import pytest

from gan_sru import DataError
from gan_sru.metrics import correlation_difference, correlation_matrix, correlational_score


def direct_correlation(seqs):
    """Pearson correlation of every valid (sequence, step) row, times (n - 1) / n as Diffusion-TS's mean of
    products of features standardised with torch's ddof-1 std."""
    rows = np.concatenate([np.asarray(s, np.float64) for s in seqs])
    n = len(rows)
    return np.atleast_2d(np.corrcoef(rows, rowvar=False)) * (n - 1) / n


def direct_difference(real, fake):
    C = np.asarray(real[0]).shape[1]
    d = direct_correlation(fake) - direct_correlation(real)
    return sum(abs(d[i, j]) for i in range(C) for j in range(i + 1)) / 10


@pytest.mark.parametrize("C", [1, 2, 5])
def test_correlation_difference_equals_a_direct_computation(C):
    rng = np.random.RandomState(C)
    mix = rng.randn(C, C)
    real = (rng.randn(6, 7, C) @ mix).astype(np.float32)  # the metrics read float32
    fake = [(rng.randn(n, C) @ mix.T).astype(np.float32) for n in (3, 9, 4, 7)]  # every valid step counts once
    np.testing.assert_allclose(correlation_matrix(real), direct_correlation(real), rtol=1e-12, atol=1e-12)
    assert correlation_difference(real, fake) == pytest.approx(direct_difference(real, fake), rel=1e-12, abs=1e-15)
    assert correlation_difference(real, real) == 0.0


def test_correlation_matrix_of_a_constant_feature_is_zero():
    rng = np.random.RandomState(0)
    x = rng.randn(4, 5, 3)
    x[:, :, 1] = 2.5
    c = correlation_matrix(x)
    assert np.all(c[1] == 0) and np.all(c[:, 1] == 0) and np.isfinite(c).all()
    with pytest.raises(DataError, match="1 step in all; expected at least 2"):
        correlation_matrix(x[:1, :1])


def test_correlational_score_averages_five_draws_of_a_fifth():
    rng = np.random.RandomState(1)
    real = (rng.randn(50, 6, 3) @ rng.randn(3, 3)).astype(np.float32)
    fake = rng.randn(80, 6, 3).astype(np.float32)
    result = correlational_score(real, fake, seed=4)
    draws = np.random.RandomState([4, 0xC0AA])
    expected = []
    for _ in range(5):
        ir, jf = draws.randint(0, 50, 10), draws.randint(0, 80, 10)  # a fifth of the real set's size, with replacement
        expected.append(direct_difference(real[ir], fake[jf]))
    np.testing.assert_allclose(result["scores"], expected, rtol=1e-10)
    assert result["mean"] == pytest.approx(np.mean(expected)) and result["std"] == pytest.approx(np.std(expected))
    assert correlational_score(real, fake, seed=4) == result
    assert correlational_score(real, real[::-1], seed=4)["mean"] < 0.5 * result["mean"]
