"""benchmarks/predictive_gap.py on data whose answer is known: the same process has no linear gap and unit
step variance; noise that fades along the window shows in the minor axes' variance step by step; a last feature
that follows the others a step late makes a large gap; the rescaling restores unit variance exactly."""
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import predictive_gap  # noqa: E402


def factor_process(n, seed, length=16, fade=0.0, delay=1, noise_ar=0.0):
    """Five features: a shared AR(1) factor plus each feature's own white noise (the noise scaled by 1 - fade
    t / L at step t; with noise_ar > 0 the first four features' noise is an AR(1) of that coefficient and the
    same variance); the last feature is the factor `delay` steps earlier, plus noise."""
    rng = np.random.default_rng(seed)
    a = np.empty((n, length + 2))
    a[:, 0] = rng.standard_normal(n)
    for t in range(1, length + 2):
        a[:, t] = 0.8 * a[:, t - 1] + 0.6 * rng.standard_normal(n)
    scale = (1.0 - fade * np.arange(length) / length)[None, :, None]
    x = np.empty((n, length, 5))
    e = rng.standard_normal((n, length, 4))
    for t in range(1, length if noise_ar else 0):
        e[:, t] = noise_ar * e[:, t - 1] + np.sqrt(1.0 - noise_ar ** 2) * e[:, t]
    x[..., :4] = a[:, 2:, None] * np.array([1.0, 0.8, -0.6, 0.5]) + 0.15 * scale * e
    x[..., 4] = a[:, 2 - delay:length + 2 - delay] + 0.1 * scale[..., 0] * rng.standard_normal((n, length))
    return x


def test_design_pairs_each_window_with_the_next_value_of_the_last_feature():
    x = np.random.default_rng(0).standard_normal((3, 7, 4))
    X, y = predictive_gap.design(x, 2)
    assert X.shape == (3 * 4, 3 * 3) and y.shape == (12,)
    # rows are step-major: t = 2 first (sequences 0, 1, 2), then t = 3, ...
    np.testing.assert_array_equal(X[4], x[1, 1:4, :3].ravel())
    assert y[4] == x[1, 4, 3]


def test_ridge_is_least_squares_for_a_tiny_penalty():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 6))
    y = X @ np.arange(6.0) + 2.0 + 0.1 * rng.standard_normal(200)
    w = predictive_gap.ridge(X, y, alpha=1e-9)
    ref = np.linalg.lstsq(np.c_[X, np.ones(200)], y, rcond=None)[0]
    np.testing.assert_allclose(w, ref, atol=1e-6)


def test_the_same_process_has_no_gap_and_unit_step_variance():
    real, held, fake = (factor_process(2000, s) for s in (0, 1, 2))
    out = predictive_gap.measure(real, held, fake)
    for k in predictive_gap.LAGS:
        assert abs(out[f"linear gap, lags {k} (%)"]) < 2.0
    assert out["major axes"] == 2  # the factor now and a step earlier (the last feature); the rest is noise
    for key in ("generated step variance, major axes", "generated step variance, minor axes",
                "held-out step variance, minor axes"):
        assert len(out[key]) == 16 and np.allclose(out[key], 1.0, atol=0.12), key


def test_fading_noise_shows_step_by_step_and_the_rescaling_removes_it():
    real, held = factor_process(2000, 0), factor_process(2000, 1)
    fake = factor_process(2000, 2, fade=0.6)
    out = predictive_gap.measure(real, held, fake)
    minor = np.asarray(out["generated step variance, minor axes"])
    assert minor[0] > 0.9 and minor[-1] < 0.3 and np.all(np.diff(minor) < 0.05)  # (1 - 0.6 t / L)^2
    assert np.allclose(out["held-out step variance, minor axes"], 1.0, atol=0.12)
    axes = predictive_gap.principal_axes(real)
    np.testing.assert_allclose(predictive_gap.step_variance(predictive_gap.rescale_steps(fake, axes), axes), 1.0,
                               rtol=1e-9)


def test_a_late_last_feature_makes_a_large_gap():
    real, held = factor_process(2000, 0), factor_process(2000, 1)
    late = predictive_gap.measure(real, held, factor_process(2000, 2, delay=2))
    assert late["linear gap, lags 0 (%)"] > 20
    assert late["linear gap, lags 5 (%)"] > 20


def test_lagged_correlations_and_where_the_excess_error_lies():
    real, held = factor_process(2000, 0), factor_process(2000, 1)
    x = real[:3]
    mean, std = x.reshape(-1, 5).mean(0), x.reshape(-1, 5).std(0)
    c = predictive_gap.lagged_correlations(x, mean, std, 2)
    z = (x - mean) / std
    direct = np.mean([np.outer(z[i, t], z[i, t - 2]) for i in range(3) for t in range(2, 16)], axis=0)
    np.testing.assert_allclose(c, direct, atol=1e-12)
    same = predictive_gap.correlation_differences(held, real)
    assert set(same) == {0, 1, 2, 3, 5, 8, 12} and max(same.values()) < 0.06
    assert predictive_gap.correlation_differences(factor_process(2000, 2, delay=2), real)[1] > 3 * same[1]
    # one wrong coefficient: the last feature follows the factor with half its loading, so the regression's
    # error lies mostly along the factor's direction
    weak = factor_process(2000, 2)
    weak[..., 4] *= 0.5
    assert predictive_gap.largest_share(weak, real, 2) > 0.5
    assert predictive_gap.largest_share(held, real, 2) < predictive_gap.largest_share(weak, real, 2)


def test_the_gru_gaps_are_the_paper_regressor_against_the_held_out_one():
    def unit(seed, **kw):  # the [0, 1] training scale the regressor's sigmoid output needs
        return np.clip(0.5 + 0.12 * factor_process(300, seed, length=10, **kw), 0.0, 1.0)

    real, held = unit(0), unit(1)
    axes = predictive_gap.principal_axes(real)
    same = predictive_gap.gru_gaps(held, held, real, axes, iterations=1000)
    assert same["GRU gap (%)"] == 0.0  # the same sequences and seed train the same regressor
    other = predictive_gap.gru_gaps(unit(2), held, real, axes, iterations=1000)
    assert abs(other["GRU gap (%)"]) < 5 and abs(other["GRU gap rescaled (%)"]) < 5
    late = predictive_gap.gru_gaps(unit(2, delay=2), held, real, axes, iterations=1000)
    assert late["GRU gap (%)"] > 10 and late["GRU gap rescaled (%)"] > 10


def test_the_systematic_excess_and_whether_it_lies_in_each_features_own_noise():
    real = factor_process(20000, 0)
    assert predictive_gap.excess_error(real, real, 5) == (0.0, 0.0)
    same = predictive_gap.systematic(factor_process(20000, 2), factor_process(2000, 1), real)
    # with as many sequences as the reference the same process leaves almost nothing; the smaller held-out set
    # leaves its estimation noise, mostly along the many noise directions
    assert same["generated excess MSE on all training, lags 5 (%)"] < 0.1
    assert same["generated excess MSE on all training, lags 5 (%)"] < same["held-out excess MSE on all training, "
                                                                           "lags 5 (%)"] < 0.5
    # the last feature at half its loading: the error lies along the shared factor (a major direction)
    weak = factor_process(20000, 3)
    weak[..., 4] *= 0.5
    excess, share = predictive_gap.excess_error(weak, real, 5)
    assert excess > 100 and share < 0.05
    # feature 0's own noise at t carries the last feature's extra noise at t + 1, which real data's does not:
    # a regression trained on it leans on feature 0's noise, a minor direction
    leak = factor_process(20000, 4)
    e = np.random.default_rng(5).standard_normal(leak.shape[:2])
    leak[..., 4] += 0.1 * e
    leak[:, :-1, 0] += 0.1 * e[:, 1:]
    excess, share = predictive_gap.excess_error(leak, real, 5)
    assert 1.0 < excess < 10 and share > 0.9



def test_whitened_lagged_correlations_show_noise_made_smooth_that_the_features_scale_hides():
    """Each feature's white noise made an AR(1) of the same variance: in the features' own scale the lagged
    correlations move little (the noise is a small part of the variance); in the whitened axes the block of the
    minor axes against themselves does, far past the held-out level."""
    real, held = factor_process(4000, 0), factor_process(4000, 1)
    smooth = factor_process(4000, 2, noise_ar=0.8)
    axes = predictive_gap.principal_axes(real)
    same, moved = (predictive_gap.whitened_lagged(x, real, axes) for x in (held, smooth))
    assert set(same) == {f"lag {k}, {b}" for k in (1, 2, 3) for b in predictive_gap.BLOCKS}
    assert max(same.values()) < 0.05
    assert moved["lag 1, minor to minor"] > 0.4 and moved["lag 1, minor to minor"] > 10 * same["lag 1, minor to minor"]
    assert moved["lag 1, minor to major"] < 0.1 and moved["lag 1, major to minor"] < 0.1
    # the features' own scale: the lag-1 correlations move by a fraction of that
    assert predictive_gap.correlation_differences(smooth, real)[1] < 0.1 * moved["lag 1, minor to minor"]
    entry = predictive_gap.measure(real, held, smooth)
    assert entry["generated whitened lagged correlations, RMS difference"] == moved
