"""Sample-quality metrics against known answers (small sets, few iterations: seconds each)."""
import nnabla as nn
import nnabla.parametric_functions as PF
import numpy as np
import pytest

from gan_sru import DataError, metrics


def sines(n, length=24, features=4, seed=0, fmax=0.1, lengths=None):
    """TimeGAN-style sines in [0, 1]: per sequence and feature, frequency U(0, fmax), phase U(0, 0.1)."""
    rng = np.random.RandomState(seed)
    f = rng.uniform(0, fmax, (n, 1, features))
    p = rng.uniform(0, 0.1, (n, 1, features))
    x = ((np.sin(f * np.arange(length)[None, :, None] + p) + 1) / 2).astype(np.float32)
    return x if lengths is None else [x[i, :lengths[i]] for i in range(n)]


def noise(n, length=24, features=4, seed=0):
    return np.random.RandomState(seed).rand(n, length, features).astype(np.float32)


# ----------------------------------------------------------------------------- MMD

def rbf_mmd2_direct(x, y, sigma):
    """Unbiased MMD^2 from full kernel matrices."""
    def k(a, b):
        d2 = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
        return np.exp(-d2 / (2 * sigma ** 2))
    n, m = len(x), len(y)
    kxx, kyy = k(x, x), k(y, y)
    return ((kxx.sum() - np.trace(kxx)) / (n * (n - 1)) + (kyy.sum() - np.trace(kyy)) / (m * (m - 1))
            - 2 * k(x, y).mean())


def test_mmd2_matches_direct_formula_also_when_blocked(monkeypatch):
    a, b = sines(40, seed=1), sines(30, seed=2, fmax=0.2)
    x, y = a.reshape(40, -1).astype(np.float64), b.reshape(30, -1).astype(np.float64)
    expected = rbf_mmd2_direct(x, y, 1.7)
    assert metrics.mmd2(a, b, bandwidth=1.7) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    monkeypatch.setattr(metrics.mmd, "KERNEL_BLOCK", 7 * 30)  # 7 rows a block
    assert metrics.mmd2(a, b, bandwidth=1.7) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_mmd2_near_zero_for_same_data_and_distribution_large_for_different():
    a = sines(200, seed=1)
    same_set = metrics.mmd2(a, a)
    same_dist = metrics.mmd2(a, sines(200, seed=2))
    different = metrics.mmd2(a, noise(200, seed=3))
    assert abs(same_set) < 0.02 and abs(same_dist) < 0.02
    assert different > 0.3
    assert different > 20 * max(abs(same_set), abs(same_dist))


@pytest.mark.parametrize("bandwidth", [None, 1.0])
def test_mmd2_grows_with_mean_shift(bandwidth):
    a, b = sines(150, seed=1), sines(150, seed=2)
    values = [metrics.mmd2(a, b + shift, bandwidth=bandwidth) for shift in (0.0, 0.05, 0.1, 0.2, 0.4)]
    assert all(v1 < v2 for v1, v2 in zip(values, values[1:])), values


def test_median_bandwidth_is_the_pooled_median_distance_and_positive():
    rng = np.random.RandomState(0)
    x, y = rng.rand(20, 6), rng.rand(15, 6) + 0.5
    pooled = np.concatenate([x, y])
    d = np.sqrt(((pooled[:, None] - pooled[None]) ** 2).sum(-1))[np.triu_indices(35, 1)]
    assert metrics.median_bandwidth(x, y) == pytest.approx(np.median(d), rel=1e-9)
    assert metrics.median_bandwidth(np.ones((5, 3)), np.ones((4, 3))) == 1.0  # all distances 0
    assert metrics.median_bandwidth(*metrics.flatten_pair(sines(30), noise(30))) > 0


def test_variable_lengths_are_resampled_to_a_common_length():
    ramps = [np.linspace(0, 1, n)[:, None].repeat(2, axis=1) for n in (5, 9, 17)]
    a, b = metrics.flatten_pair(ramps, ramps[:2])
    assert a.shape == (3, 17 * 2) and b.shape == (2, 17 * 2)
    expected = np.linspace(0, 1, 17)[:, None].repeat(2, axis=1).ravel()
    assert np.allclose(a, expected[None], atol=1e-6) and np.allclose(b, expected[None], atol=1e-6)
    lengths = np.random.RandomState(0).randint(10, 25, 100)
    assert abs(metrics.mmd2(sines(100, seed=1, lengths=lengths), sines(100, seed=2, lengths=lengths))) < 0.03


# ----------------------------------------------------------------------------- discriminative score

def test_discriminative_score_same_distribution_near_zero():
    r = metrics.discriminative_score(sines(300, seed=1), sines(300, seed=2), repeats=2, iterations=100,
                                     progress=False)
    assert len(r["scores"]) == 2 and r["mean"] == pytest.approx(np.mean(r["scores"]))
    assert r["std"] == pytest.approx(np.std(r["scores"]))
    assert r["mean"] < 0.1, r


def test_discriminative_score_is_the_same_whatever_the_number_of_workers():
    """Repeats train in threads (workers); each has its own seed, model and solver, so the scores are those of
    one repeat after the other, in order."""
    real, fake = sines(200, seed=1), [s * 0.9 for s in sines(200, seed=2)]
    one = metrics.discriminative_score(real, fake, repeats=3, iterations=40, progress=False, workers=1)
    three = metrics.discriminative_score(real, fake, repeats=3, iterations=40, progress=False, workers=3)
    assert one == three and len(set(one["scores"])) > 1


def test_discriminative_score_different_sets_near_half():
    r = metrics.discriminative_score(sines(300, seed=1), noise(300, seed=2), repeats=1, iterations=100,
                                     progress=False)
    assert r["mean"] > 0.35, r


def test_discriminative_score_variable_lengths():
    lengths = np.random.RandomState(0).randint(8, 25, 300)
    fake = [s[:n] for s, n in zip(noise(300, seed=2), lengths)]
    r = metrics.discriminative_score(sines(300, seed=1, lengths=lengths), fake, repeats=1, iterations=100,
                                     progress=False)
    assert r["mean"] > 0.35, r


def test_discriminative_score_leaves_global_nnabla_state_alone():
    with nn.parameter_scope("gan_under_test"):
        PF.affine(nn.Variable((2, 3)), 4)
    before = {k: v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
    np_state = np.random.get_state()[1].copy()
    nn.set_auto_forward(True)
    try:
        r1 = metrics.discriminative_score(sines(40, seed=1), noise(40), repeats=1, iterations=5, progress=False)
        assert nn.get_auto_forward() is True
    finally:
        nn.set_auto_forward(False)
    r2 = metrics.discriminative_score(sines(40, seed=1), noise(40), repeats=1, iterations=5, progress=False)
    after = nn.get_parameters(grad_only=False)
    try:
        assert list(after) == list(before)
        assert all(np.array_equal(after[k].d, before[k]) for k in before)
        assert np.array_equal(np.random.get_state()[1], np_state)
        assert r1 == r2  # seeded: same data and seed give the same score
    finally:
        with nn.parameter_scope("gan_under_test"):
            nn.clear_parameters()


# ----------------------------------------------------------------------------- predictive score

def lagged_data(n, seed, length=24, features=4, theta=0.5):
    """For 2+ features every feature's next step is an exact function of the previous step: features 0 and 1
    turn by theta about (0.5, 0.5) (radius and phase per sequence), feature c >= 2 is feature c - 2 one step
    late. One feature: feature 0 alone."""
    rng = np.random.RandomState(seed)
    r, ph = rng.uniform(0.1, 0.4, (n, 1)), rng.uniform(0, 2 * np.pi, (n, 1))
    a = ph + theta * np.arange(length + features)[None, :]
    x = [0.5 + r * np.cos(a), 0.5 + r * np.sin(a)]
    for c in range(2, features):
        x.append(np.roll(x[c - 2], 1, axis=1))
    return np.stack(x, -1)[:, features:features + length, :features].astype(np.float32)  # no wrap-around


def shuffled_steps(x, seed):
    """The same values, each sequence's steps in a random order: the marginals kept, the dynamics gone."""
    rng = np.random.RandomState(seed)
    return np.stack([s[rng.permutation(len(s))] for s in x])


def test_lagged_data_is_an_exact_function_of_the_previous_step():
    x = lagged_data(5, seed=0, length=8, features=4).astype(np.float64)
    c, s = np.cos(0.5), np.sin(0.5)
    u, v = x[:, :-1, 0] - 0.5, x[:, :-1, 1] - 0.5
    np.testing.assert_allclose(x[:, 1:, 0], 0.5 + c * u - s * v, atol=1e-6)
    np.testing.assert_allclose(x[:, 1:, 1], 0.5 + s * u + c * v, atol=1e-6)
    np.testing.assert_allclose(x[:, 1:, 2:], x[:, :-1, :2], atol=1e-6)


def test_predictive_score_near_zero_for_the_real_dynamics_and_large_for_shuffled_steps():
    """Every feature is a target: a regressor trained on data of the same dynamics predicts all of them
    almost exactly; one trained on the same values with the steps shuffled does not, for any feature."""
    real = lagged_data(200, seed=1, length=12, features=3)
    train = lagged_data(200, seed=2, length=12, features=3)
    good = metrics.predictive_score(train, real, iterations=400, progress=False)
    bad = metrics.predictive_score(shuffled_steps(train, 3), real, iterations=400, progress=False)
    assert len(good["mae_per_feature"]) == 3 and np.isclose(np.mean(good["mae_per_feature"]), good["mae"])
    assert good["mae"] < 0.02 and bad["mae"] > 0.1, (good, bad)
    assert max(good["mae_per_feature"]) < 0.02 < 0.05 < min(bad["mae_per_feature"]), (good, bad)


def test_predictive_score_of_one_feature():
    """Predicting from all features, one feature is enough (the feature's own history)."""
    real, train = lagged_data(40, seed=1, length=10, features=1), lagged_data(40, seed=2, length=10, features=1)
    out = metrics.predictive_score(train, real, iterations=20, progress=False)
    assert out["mae_per_feature"] == [out["mae"]] and 0 < out["mae"] < 1


def test_predictive_score_per_step_adds_up_to_the_mae():
    real = lagged_data(40, seed=1, length=10)
    test = [real[i, :n] for i, n in enumerate(np.r_[np.full(20, 10), np.full(20, 6)])]  # steps 6..9 in 20 only
    test[0] = real[0, :1]  # one sequence with nothing to predict
    out = metrics.predictive_score(lagged_data(40, seed=2, length=10), test, iterations=20, progress=False,
                                   per_step=True)
    per, counts = np.asarray(out["mae_per_step"]), np.r_[np.full(5, 39), np.full(4, 19)]
    assert per.shape == (9,) and np.all(np.isfinite(per))
    assert np.isclose(np.sum(per * counts) / counts.sum(), out["mae"])
    plain = metrics.predictive_score(lagged_data(40, seed=2, length=10), test, iterations=20, progress=False)
    assert plain == {k: out[k] for k in ("mae", "std", "scores", "mae_per_feature")}  # per_step adds a breakdown
    short = metrics.predictive_score(real, real[:, :6], iterations=5, progress=False, per_step=True)["mae_per_step"]
    assert len(short) == 9 and np.all(np.isfinite(short[:5])) and np.all(np.isnan(short[5:]))  # no test step


def test_predictive_score_repeats_average_regressors_of_their_own_seeds():
    """As TimeGAN's code averages metric_iteration runs: repeat r is seeded (seed, r), so repeat 0 is the
    single score and fewer repeats are a prefix of more; threads do not change a score; the per-step MAEs
    are the repeats' mean, so they still add up to the mean MAE."""
    real, train = lagged_data(40, seed=1, length=10), lagged_data(40, seed=2, length=10)
    one = metrics.predictive_score(train, real, iterations=20, progress=False)
    two = metrics.predictive_score(train, real, iterations=20, progress=False, repeats=2, workers=1)
    three = metrics.predictive_score(train, real, iterations=20, progress=False, repeats=3, workers=2,
                                     per_step=True)
    assert one["scores"] == [one["mae"]] and one["std"] == 0.0
    assert three["scores"][:2] == two["scores"] and two["scores"][0] == one["mae"]
    assert len(set(three["scores"])) == 3  # each repeat its own initialisation and batches
    assert np.isclose(three["mae"], np.mean(three["scores"])) and np.isclose(three["std"], np.std(three["scores"]))
    assert np.isclose(np.mean(three["mae_per_step"]), three["mae"])  # equal lengths: every step counts alike
    assert np.isclose(np.mean(three["mae_per_feature"]), three["mae"])
    with pytest.raises(ValueError, match="repeats 0: expected at least 1"):
        metrics.predictive_score(train, real, iterations=1, progress=False, repeats=0)


def test_predictive_score_needs_a_numeric_target():
    x = noise(10, features=3)
    for numeric in (0, 4):
        with pytest.raises(DataError, match=f"{numeric} numeric features of 3; expected 1 to 3"):
            metrics.predictive_score(x, x, iterations=1, progress=False, numeric=numeric)


# ----------------------------------------------------------------------------- PCA, ACF

def test_pca_projection_recovers_planted_components():
    rng = np.random.RandomState(0)
    basis, _ = np.linalg.qr(rng.randn(24 * 3, 2))  # orthonormal directions of a 2-D plane
    coords = rng.randn(200, 2) * [3.0, 1.0]  # first direction has the larger variance
    mean = rng.rand(24 * 3)
    real = (mean + coords @ basis.T + 1e-3 * rng.randn(200, 72)).reshape(200, 24, 3)
    fake = (mean + np.array([[2.0, -1.0]]) @ basis.T).reshape(1, 24, 3)
    pr, pf = metrics.pca_projection(real, fake, n=2)
    assert pr.shape == (200, 2) and pf.shape == (1, 2)
    # direct computation: eigenvectors of the covariance, same sign convention
    flat = real.reshape(200, -1)
    _, vecs = np.linalg.eigh(np.cov(flat, rowvar=False))
    comps = vecs[:, ::-1][:, :2].T
    comps *= np.sign(comps[np.arange(2), np.abs(comps).argmax(1)])[:, None]
    assert np.allclose(pr, (flat - flat.mean(0)) @ comps.T, atol=1e-6)
    assert np.allclose(pf, (fake.reshape(1, -1) - flat.mean(0)) @ comps.T, atol=1e-6)
    assert pr[:, 0].var() > 5 * pr[:, 1].var()


def test_autocorrelation_of_ar1_is_phi_to_the_lag():
    rng = np.random.RandomState(0)
    phi, n, length = 0.8, 300, 400
    x = np.zeros((n, length, 2))
    for t in range(1, length):
        x[:, t] = phi * x[:, t - 1] + rng.randn(n, 2)
    acf = metrics.autocorrelation(x, max_lag=5)
    assert acf.shape == (6, 2)
    assert np.allclose(acf, (phi ** np.arange(6))[:, None], atol=0.05)


def test_autocorrelation_matches_numpy_on_variable_length_sines():
    rng = np.random.RandomState(1)
    seqs = [np.sin(rng.uniform(0.1, 1.0, (1, 2)) * np.arange(n)[:, None]) for n in (6, 12, 20, 30)]
    seqs.append(np.full((15, 2), 0.3))  # constant: no ACF, left out of the mean
    acf = metrics.autocorrelation(seqs, max_lag=8)
    expected = np.zeros((9, 2))
    for c in range(2):
        for k in range(9):
            vals = []
            for s in seqs[:4]:
                v = s[:, c] - s[:, c].mean()
                if len(v) > k:
                    vals.append(np.correlate(v, v, "full")[len(v) - 1 + k] / (v @ v))
            expected[k, c] = np.mean(vals)
    assert np.allclose(acf, expected, atol=1e-6)
    assert np.allclose(acf[0], 1.0)


# ----------------------------------------------------------------------------- input checks

def test_bad_inputs_raise_data_errors_naming_the_place():
    with pytest.raises(DataError, match=r"fake\[1\]: 3 features; expected 4"):
        metrics.as_padded([np.zeros((5, 4)), np.zeros((5, 3))], "fake")
    bad = np.zeros((2, 5, 4))
    bad[1, 2, 3] = np.nan
    with pytest.raises(DataError, match=r"real\[1\]: value nan at step 2, feature 3"):
        metrics.as_padded(bad, "real")
    with pytest.raises(DataError, match=r"expected \(N, L, C\)"):
        metrics.mmd2(np.zeros((5, 4)), np.zeros((5, 4)))
    with pytest.raises(DataError, match="b has 3 features; expected 4"):
        metrics.mmd2(noise(5), noise(5, features=3))
