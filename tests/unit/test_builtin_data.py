"""The built-in wide and chaotic sets have the structure they claim, deterministically in their seed."""
import os

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from gan_sru import ConfigError
from gan_sru.config import load_config
from gan_sru.data import factor_covariance, factor_structure, load_dataset, make_factors, make_lorenz96
from gan_sru.data.builtin import LORENZ_DT, LORENZ_EVERY, lorenz96_tendency

CONFIGS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "configs")


def lag_covariance(x, mean, lag):
    """Cov(x_t, x_{t+lag}) pooled over sequences and steps, around the known mean: (C, C)."""
    a, b = x[:, :x.shape[1] - lag] - mean, x[:, lag:] - mean
    return np.einsum("ntc,ntd->cd", a, b) / (a.shape[0] * a.shape[1])


@pytest.fixture(scope="module")
def factors():
    return np.stack(make_factors(4000, 24, 28, seed=0))


@pytest.mark.parametrize("lag", [0, 1, 3, 6, 12])  # 6: a whole cycle of the 6-step season
def test_factors_lag_covariances_are_those_the_parameters_imply(factors, lag):
    s = factor_structure(28)
    sd = np.sqrt(np.diag(factor_covariance(s, 0)))
    implied = factor_covariance(s, lag) / np.outer(sd, sd)
    measured = lag_covariance(factors, s["offset"], lag) / np.outer(sd, sd)
    assert np.abs(measured - implied).max() < 0.05
    if lag == 0:
        np.testing.assert_allclose(factors.std(axis=(0, 1)), sd, rtol=0.05)  # units: scales 0.1 .. 100


def test_factors_are_wide_and_strongly_correlated():
    s = factor_structure(28)
    cov = factor_covariance(s, 0)
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    same = (s["group"][:, None] == s["group"][None, :]) & ~np.eye(28, dtype=bool)
    assert np.abs(corr[same]).mean() > 0.5  # strong within the six groups, of both signs
    assert (corr[same] < -0.3).any() and (corr[same] > 0.3).any()
    assert s["scale"].max() / s["scale"].min() > 100  # very different units
    # the slow parts: the 40-step cycle and the 0.99 AR factor keep lag-12 correlation that the noise lacks
    assert np.abs(np.diag(factor_covariance(s, 12)) / np.diag(cov)).max() > 0.2


def test_factors_are_deterministic_in_their_seed_and_structure_is_fixed():
    a, b, c = (np.stack(make_factors(5, 16, 28, seed=k)) for k in (3, 3, 4))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    np.testing.assert_array_equal(factor_structure(28)["loadings"], factor_structure(28)["loadings"])
    assert np.stack(make_factors(5, 64, 28, seed=3)).shape == (5, 64, 28)


def test_lorenz96_steps_follow_the_equations():
    x = np.stack(make_lorenz96(3, 12, 6, seed=0))
    for seq in x:  # each recorded step is LORENZ_EVERY RK4 steps after the previous one
        span = (seq.shape[0] - 1) * LORENZ_EVERY * LORENZ_DT
        exact = solve_ivp(lambda t, y: lorenz96_tendency(y), (0, span), seq[0], rtol=1e-11, atol=1e-11,
                          t_eval=np.linspace(0, span, seq.shape[0]))
        np.testing.assert_allclose(exact.y.T, seq, atol=1e-5)


def test_lorenz96_statistics_are_circular_and_as_published():
    x = np.stack(make_lorenz96(1500, 24, 12, seed=1))
    flat = x.reshape(-1, 12)
    assert 2.2 < flat.mean() < 2.5 and 3.4 < flat.std() < 3.9  # F = 8: mean about 2.34, std about 3.63
    corr = np.corrcoef(flat, rowvar=False)
    for k in range(1, 6):  # translation invariance: corr(x_i, x_{i+k}) is the same for every i
        offsets = [corr[i, (i + k) % 12] for i in range(12)]
        assert np.ptp(offsets) < 0.1, (k, offsets)
    np.testing.assert_array_equal(x[:2], np.stack(make_lorenz96(2, 24, 12, seed=1)))


def test_configs_select_the_built_in_sets():
    for name, length, shape in (("wide", [], (24, 28)), ("lorenz96", [], (24, 28)),
                                ("wide", ["data.seq_len=64"], (64, 28)), ("wide", ["data.seq_len=256"], (256, 28))):
        cfg = load_config(os.path.join(CONFIGS, f"{name}.yaml"), ["data.num_sequences=20"] + length)
        ds = load_dataset(cfg["data"], cfg["seed"])
        assert len(ds) == 20 and ds.sequences[0].shape == shape and ds.source == cfg["data"]["source"]
        flat = np.concatenate(ds.sequences)
        assert flat.min() == 0.0 and flat.max() == 1.0
    with pytest.raises(ConfigError, match="data.num_features: got 3; expected at least 4 for data.source lorenz96"):
        load_config(os.path.join(CONFIGS, "lorenz96.yaml"), ["data.num_features=3"])
