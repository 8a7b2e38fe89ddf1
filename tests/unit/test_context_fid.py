"""Context-FID: the Fréchet distance against closed forms; the whole score ~0 for samples of one
distribution and growing with a shift of mean, of variance, of correlation."""
import numpy as np
import pytest
import scipy.linalg

from gan_sru import DataError
from gan_sru.metrics import context_fid, context_fids, frechet_distance

N, L, C = 100, 12, 4


def ar_sequences(n, seed, mean=0.0, scale=1.0, rho=0.8):
    """(n, L, C) AR(1) sequences (coefficient 0.8, unit stationary variance) whose innovations have
    correlation rho between every two features; then scaled and shifted."""
    r = np.random.RandomState(seed)
    innovations = r.randn(n, L, C) @ np.linalg.cholesky(np.full((C, C), rho) + (1 - rho) * np.eye(C)).T
    x = np.zeros((n, L, C))
    x[:, 0] = innovations[:, 0]
    for t in range(1, L):
        x[:, t] = 0.8 * x[:, t - 1] + 0.6 * innovations[:, t]
    return (mean + scale * x).astype(np.float32)


def test_frechet_distance_closed_forms():
    rng = np.random.RandomState(0)
    a = rng.randn(500, 6) @ rng.randn(6, 6)
    shift = rng.randn(6)
    assert frechet_distance(a, a + shift) == pytest.approx(np.sum(shift ** 2), rel=1e-6)  # same covariance
    x, y = rng.randn(300, 1), 3.0 + 2.5 * rng.randn(200, 1)  # 1-D: (mu_x - mu_y)^2 + (s_x - s_y)^2
    expected = (x.mean() - y.mean()) ** 2 + (x.std(ddof=1) - y.std(ddof=1)) ** 2
    assert frechet_distance(x, y) == pytest.approx(expected, rel=1e-9)
    b = rng.randn(40, 6) @ rng.randn(6, 6) + 1.0  # general case: Diffusion-TS's formula with scipy's sqrtm
    s_a, s_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    expected = np.sum((a.mean(0) - b.mean(0)) ** 2) + np.trace(s_a + s_b - 2 * scipy.linalg.sqrtm(s_a @ s_b).real)
    assert frechet_distance(a, b) == pytest.approx(expected, rel=1e-9)
    with pytest.raises(DataError, match="expected at least 2 in each set"):
        frechet_distance(a[:1], a)


@pytest.fixture(scope="module")
def scores():
    real = ar_sequences(N, 0)
    sets = {"itself": real, "same distribution": ar_sequences(N, 1)}
    sets.update({f"mean +{m}": ar_sequences(N, 2, mean=m) for m in (1.0, 2.0, 4.0)})
    sets.update({f"scale x{s}": ar_sequences(N, 3, scale=s) for s in (1.5, 2.0, 3.0)})
    sets.update({f"correlation {r}": ar_sequences(N, 4, rho=r) for r in (0.4, 0.0, -0.3)})
    fids = context_fids(real, list(sets.values()), iterations=20, seed=0, progress=False)
    return dict(zip(sets, fids))


def test_context_fid_is_about_zero_for_one_distribution(scores):
    assert abs(scores["itself"]) < 1e-5  # the trace of a matrix square root: float error of about 1e-6
    shifted = [v for k, v in scores.items() if k not in ("itself", "same distribution")]
    assert 0 < scores["same distribution"] < 0.25 * min(shifted)


@pytest.mark.parametrize("family", ["mean", "scale", "correlation"])
def test_context_fid_grows_with_the_shift(scores, family):
    values = [scores["same distribution"]] + [v for k, v in scores.items() if k.startswith(family)]
    assert len(values) == 4 and all(a < b for a, b in zip(values, values[1:])), values


def test_context_fid_is_deterministic_in_its_seed_and_checks_its_input():
    real, fake = ar_sequences(30, 5), ar_sequences(30, 6, mean=0.5)
    first = context_fid(real, fake, iterations=3, seed=1, progress=False)
    assert context_fid(real, fake, iterations=3, seed=1, progress=False) == first
    assert context_fid(real, fake, iterations=3, seed=2, progress=False) != first
    varlen = [s[:n] for s, n in zip(fake, np.resize([5, 9, 12], 30))]  # shorter sequences are embedded on their own
    assert np.isfinite(context_fid(real, varlen, iterations=3, progress=False))
    with pytest.raises(DataError, match=r"others\[0\] has 3 features; expected 4"):
        context_fid(real, fake[:, :, :3], iterations=1, progress=False)
    with pytest.raises(DataError, match="no sequence of 2 or more steps"):
        context_fid(real[:, :1], fake[:, :1], iterations=1, progress=False)


def test_context_fid_leaves_global_state_alone():
    import nnabla as nn

    nn.parameter.get_parameter_or_create("marker", (2,))
    rng_state = np.random.get_state()
    context_fid(ar_sequences(12, 7), ar_sequences(12, 8), iterations=2, progress=False)
    assert list(nn.get_parameters()) == ["marker"]
    after = np.random.get_state()
    assert after[0] == rng_state[0] and np.array_equal(after[1], rng_state[1]) and after[2:] == rng_state[2:]
