"""metrics.separability: per-sequence statistics against direct NumPy, and which group tells two sets apart."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gan_sru import DataError
from gan_sru.metrics import separability
from gan_sru.metrics.separability import GROUPS, sequence_statistics


def ar_sets(n, L, mix, seed, phi=0.8):
    """n AR(1) sequences (L, C) whose innovations are mixed by `mix` (C, C): feature correlations set by mix."""
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((n, L, mix.shape[0])) @ mix
    x = np.zeros_like(e)
    for t in range(L):
        x[:, t] = (phi * x[:, t - 1] if t else 0.0) + e[:, t]
    return x


def test_statistics_equal_numpy_for_each_sequence_also_when_padded():
    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((L, 3)).cumsum(axis=0) for L in (20, 13, 7)]
    x = np.zeros((3, 20, 3))
    for i, s in enumerate(seqs):
        x[i, :len(s)] = s
    stats = sequence_statistics(x, np.array([20, 13, 7]))
    assert list(stats) == list(GROUPS)
    for i, s in enumerate(seqs):
        c = s - s.mean(axis=0)
        np.testing.assert_allclose(stats["level"][i], s.mean(axis=0), atol=1e-10)
        np.testing.assert_allclose(stats["spread"][i], s.std(axis=0), atol=1e-10)
        np.testing.assert_allclose(stats["extremes"][i], np.r_[s.min(axis=0), s.max(axis=0)], atol=1e-10)
        np.testing.assert_allclose(stats["step changes"][i], np.diff(s, axis=0).std(axis=0), atol=1e-10)
        n = len(s)
        acf = [(c[k:] * c[:-k]).sum(axis=0) / (n - k) / c.var(axis=0) for k in range(1, 13) if k < n]
        np.testing.assert_allclose(stats["lag-1 autocorrelation"][i], acf[0], rtol=1e-6)
        lags = stats["autocorrelation, lags 2-12"][i].reshape(-1, 3)  # lags 2..12 of the set's longest length
        np.testing.assert_allclose(lags[:len(acf) - 1], np.array(acf[1:]), rtol=1e-6)
        assert np.all(lags[len(acf) - 1:] == 0)  # lags a sequence is too short for
        corr = np.corrcoef(s.T)
        np.testing.assert_allclose(stats["feature correlations"][i], corr[np.triu_indices(3, 1)], rtol=1e-6)


def test_spectrum_bands_average_the_log_dft_magnitudes_of_a_full_length_sequence():
    rng = np.random.default_rng(1)
    s = rng.standard_normal((32, 2))
    spec = sequence_statistics(s[None], np.array([32]))["spectrum"][0]
    mag = np.abs(np.fft.rfft(s - s.mean(axis=0), axis=0))[1:17] / 32  # bins 1 .. L/2: w = pi f / (L / 2)
    logmag = np.log(mag + 1e-3)
    edges = np.unique(np.round(np.geomspace(1, 17, 9)).astype(int)) - 1
    expected = np.concatenate([logmag[a:b].mean(axis=0) for a, b in zip(edges[:-1], edges[1:])])  # band-major
    np.testing.assert_allclose(spec, expected, rtol=1e-6)


def test_groups_that_the_data_cannot_have_are_left_out():
    x = np.random.default_rng(2).random((5, 2, 1))
    assert list(sequence_statistics(x, np.full(5, 2))) == ["level", "spread", "extremes"]
    x = np.random.default_rng(2).random((5, 3, 1))
    assert "feature correlations" not in sequence_statistics(x, np.full(5, 3))
    assert "autocorrelation, lags 2-12" not in sequence_statistics(x, np.full(5, 3))  # lag 2 needs 4 steps


def test_same_distribution_scores_low_everywhere():
    mix = np.eye(5) + 0.6
    scores = separability(ar_sets(600, 40, mix, 0), ar_sets(600, 40, mix, 1))
    assert list(scores) == list(GROUPS) and max(scores.values()) < 0.1, scores


def test_the_group_that_differs_is_the_one_that_tells():
    mix = np.eye(5) + 0.6
    flipped = mix.copy()
    flipped[:, 0] *= -1  # feature 0 now moves against the others: same marginals, opposite correlations
    real = ar_sets(600, 40, mix, 0)
    scores = separability(real, ar_sets(600, 40, flipped, 1))
    assert scores["feature correlations"] > 0.4 and max(scores, key=scores.get) == "feature correlations", scores
    assert scores["level"] < 0.1 and scores["lag-1 autocorrelation"] < 0.1
    wider = separability(real, 1.5 * ar_sets(600, 40, mix, 1))
    assert wider["spread"] > 0.3 and wider["feature correlations"] < 0.1 and wider["lag-1 autocorrelation"] < 0.1
    rougher = separability(real, ar_sets(600, 40, mix, 1, phi=0.5))
    assert rougher["lag-1 autocorrelation"] > 0.3 and rougher["level"] < 0.1


def test_seed_makes_it_deterministic_and_variable_lengths_are_accepted():
    rng = np.random.default_rng(3)
    a = [rng.random((L, 2)) for L in rng.integers(5, 30, 40)]
    b = [rng.random((L, 2)) for L in rng.integers(5, 30, 50)]
    assert separability(a, b, seed=4) == separability(a, b, seed=4)
    assert set(separability(a, b)) == set(GROUPS)


def test_bad_inputs_raise_data_errors_naming_the_problem():
    x = np.zeros((10, 8, 3))
    with pytest.raises(DataError, match=r"separability: 3 real and 10 other sequences; expected at least 4"):
        separability(x[:3], x)
    with pytest.raises(DataError, match=r"separability: other has 2 features; expected 3 like real"):
        separability(x, np.zeros((10, 8, 2)))
    with pytest.raises(DataError, match=r"expected finite values"):
        separability(x, np.full((10, 8, 3), np.nan))


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 9), L=st.integers(1, 9), C=st.integers(1, 4), kind=st.sampled_from(["random", "flat", "huge"]),
       seed=st.integers(0, 2 ** 16))
def test_fuzz_any_shape_and_scale_gives_scores_in_range_or_a_data_error(n, L, C, kind, seed):
    rng = np.random.default_rng(seed)
    x = {"random": rng.standard_normal((n, L, C)), "flat": np.ones((n, L, C)),
         "huge": 1e30 * rng.standard_normal((n, L, C))}[kind]
    try:
        scores = separability(x, x[::-1] + 0.0)
    except DataError as e:
        assert "at least 4" in str(e)
        return
    assert all(0.0 <= v <= 0.5 for v in scores.values())
