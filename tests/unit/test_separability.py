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
    minor = (np.array([0.5, -1.0, 2.0]), np.array([[0.6, 0.0], [0.8, 0.0], [0.0, 1.0]]))
    stats = sequence_statistics(x, np.array([20, 13, 7]), minor)
    assert list(stats) == list(GROUPS)
    assert list(sequence_statistics(x, np.array([20, 13, 7]))) == list(GROUPS[:-1])  # no minor directions given
    for i, s in enumerate(seqs):
        c = s - s.mean(axis=0)
        np.testing.assert_allclose(stats["level"][i], s.mean(axis=0), atol=1e-10)
        np.testing.assert_allclose(stats["spread"][i], s.std(axis=0), atol=1e-10)
        np.testing.assert_allclose(stats["extremes"][i], np.r_[s.min(axis=0), s.max(axis=0)], atol=1e-10)
        z = c / s.std(axis=0)
        np.testing.assert_allclose(stats["shape"][i], np.r_[(z ** 3).mean(axis=0), (z ** 4).mean(axis=0) - 3],
                                   rtol=1e-6)
        np.testing.assert_allclose(stats["step changes"][i], np.diff(s, axis=0).std(axis=0), atol=1e-10)
        n = len(s)
        acf = [(c[k:] * c[:-k]).sum(axis=0) / (n - k) / c.var(axis=0) for k in range(1, 13) if k < n]
        np.testing.assert_allclose(stats["lag-1 autocorrelation"][i], acf[0], rtol=1e-6)
        lags = stats["autocorrelation, lags 2-12"][i].reshape(-1, 3)  # lags 2..12 of the set's longest length
        np.testing.assert_allclose(lags[:len(acf) - 1], np.array(acf[1:]), rtol=1e-6)
        assert np.all(lags[len(acf) - 1:] == 0)  # lags a sequence is too short for
        corr = np.corrcoef(s.T)
        np.testing.assert_allclose(stats["feature correlations"][i], corr[np.triu_indices(3, 1)], rtol=1e-6)
        y = (s - minor[0]) @ minor[1]
        yc = y - y.mean(axis=0)
        np.testing.assert_allclose(stats["minor directions"][i], np.r_[y.std(axis=0), (yc[1:] * yc[:-1]).sum(axis=0)
                                                                       / (n - 1) / yc.var(axis=0)], rtol=1e-6)


def test_minor_directions_are_those_past_the_leading_share_of_the_variance():
    from gan_sru.metrics.separability import minor_directions

    rng = np.random.default_rng(9)
    x = rng.standard_normal((50, 20, 3)) * np.array([10.0, 3.0, 0.1])  # variance shares 0.917, 0.083, 0.0001
    mean, dirs = minor_directions(x, np.full(50, 20))
    assert dirs.shape == (3, 1) and abs(dirs[2, 0]) > 0.999  # two leading hold 95%: the third is minor
    assert minor_directions(x, np.full(50, 20), share=0.5)[1].shape == (3, 2)
    assert minor_directions(x[:, :, :1].repeat(2, axis=2), np.full(50, 20))[1].shape == (2, 1)  # at least one
    np.testing.assert_allclose(mean, x.reshape(-1, 3).mean(axis=0))


def test_smooth_noise_where_the_data_has_white_noise_shows_in_the_minor_directions():
    """Two shared AR(1) factors plus each feature's own noise, white in the real set and as strong but smooth
    (an AR(1) at 0.8) in the other: only the minor directions tell them apart."""
    def draw(seed, smooth):
        rng = np.random.default_rng(seed)
        f = ar_sets(600, 40, np.eye(2), seed)
        noise = ar_sets(600, 40, np.eye(6), seed + 100) * 0.6 if smooth else rng.standard_normal((600, 40, 6))
        # (an AR(1) at 0.8 with unit innovations has std 1 / 0.6)
        return f @ np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1.0]]) + 0.1 * noise  # noise std 0.1 either way

    real = draw(0, False)
    same, smooth = separability(real, draw(1, False)), separability(real, draw(1, True))
    assert same["minor directions"] < 0.1
    assert smooth["minor directions"] > 0.4 and max(smooth, key=smooth.get) == "minor directions", smooth


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
    assert list(sequence_statistics(x, np.full(5, 2))) == ["level", "spread", "extremes"]  # no shape from 2 steps
    x = np.random.default_rng(2).random((5, 3, 1))
    assert "feature correlations" not in sequence_statistics(x, np.full(5, 3))
    assert "autocorrelation, lags 2-12" not in sequence_statistics(x, np.full(5, 3))  # lag 2 needs 4 steps


def test_a_flatter_distribution_within_each_sequence_shows_in_the_shape():
    """About the same level, spread, lags and correlations; the other set's values are squashed towards a flat
    distribution within each sequence (x -> sign(x) |x|^0.6, rescaled): only the shape group should stand out."""
    mix = np.eye(4) + 0.5
    real = ar_sets(600, 64, mix, 0, phi=0.3)
    other = ar_sets(600, 64, mix, 1, phi=0.3)
    squashed = np.sign(other) * np.abs(other) ** 0.6
    squashed *= other.std() / squashed.std()
    scores = separability(real, squashed)
    assert scores["shape"] > 0.3 and max(scores, key=scores.get) == "shape", scores
    assert separability(real, other)["shape"] < 0.1


def test_a_flat_sequence_has_zero_shape():
    x = np.zeros((2, 6, 2))
    x[1] = np.random.default_rng(3).standard_normal((6, 2))
    shape = sequence_statistics(x, np.full(2, 6))["shape"]
    assert np.all(shape[0] == 0) and np.all(np.isfinite(shape))


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
