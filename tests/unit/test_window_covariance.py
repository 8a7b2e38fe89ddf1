"""The window covariance term (gan_sru/ops/covariance.py, train.losses.window_covariance_loss): its windows, its
reference, its value against NumPy, its gradient against finite differences, and that it is unbiased."""
import nnabla as nn
import numpy as np
import pytest

from gan_sru.ops.covariance import reference, windows
from gan_sru.train.losses import window_covariance_loss


def masked(rng, N, L, C, min_len=2):
    lengths = rng.integers(min_len, L + 1, N)
    m = (np.arange(L)[None, :] < lengths[:, None]).astype(np.float64)
    return rng.standard_normal((N, L, C)) * m[:, :, None], m


def numpy_loss(fake, mask, mu, W, lags, T=None):
    """fake (L, B, C), mask (L, B): trace((M_a - T)(M_b - T)) / D from the two halves' windows (T = I when
    None)."""
    T = np.eye(len(mu)) if T is None else T
    B = fake.shape[1]
    x, m = fake.transpose(1, 0, 2), mask.T

    def m_minus_i(rows):
        v = windows(x[rows], m[rows], lags)
        u = (v - mu) @ W
        return u.T @ u / max(len(u), 1) - T

    a, b = m_minus_i(slice(0, B // 2)), m_minus_i(slice(B // 2, 2 * (B // 2)))
    return np.trace(a @ b) / len(mu)


def loss_of(fake, mask, mu, W, lags, T=None):
    x = nn.Variable.from_numpy_array(fake.astype(np.float32), need_grad=True)
    m = nn.Variable.from_numpy_array(mask.astype(np.float32))
    loss = window_covariance_loss(x, m, mu, W, lags, T)
    return x, loss


@pytest.mark.parametrize("lags", [0, 1, 2])
def test_windows_are_the_runs_of_valid_steps_current_step_first(lags):
    rng = np.random.default_rng(0)
    x, m = masked(rng, 5, 6, 3)
    expected = [np.concatenate([x[i, t - j] for j in range(lags + 1)])
                for i in range(5) for t in range(lags, 6) if m[i, t - lags:t + 1].all()]
    np.testing.assert_array_equal(windows(x, m, lags), np.array(expected).reshape(-1, (lags + 1) * 3))


def test_the_reference_whitens_the_real_windows_and_floors_collinear_directions():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 4))
    x = np.cumsum(rng.standard_normal((300, 10, 4)), axis=1) * 0.3 @ A + 2.0
    m = np.ones((300, 10))
    mu, W, _ = reference(x, m, lags=1)
    v = windows(x, m, 1)
    np.testing.assert_allclose(mu, v.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(W.T @ np.cov(v.T, bias=True) @ W, np.eye(8), atol=1e-8)
    # a feature repeated: the covariance is singular, the whitening stays finite (floored eigenvalue)
    dup = np.concatenate([x, x[:, :, :1]], axis=2)
    mu2, W2, _ = reference(dup, m, lags=0)
    lam = np.linalg.eigvalsh(np.cov(windows(dup, m, 0).T, bias=True))
    assert np.isfinite(W2).all()
    assert np.abs(W2).max() <= 1.0 / np.sqrt(1e-3 * lam.mean()) + 1e-9


def test_the_reference_refuses_too_few_windows_naming_the_count():
    x, m = np.ones((3, 2, 4)), np.ones((3, 2))
    with pytest.raises(ValueError, match=r"with 1 lag\(s\) needs more than 8 windows of 2 valid steps; "
                                         r"the real sequences hold 3"):
        reference(x, m, lags=1)


@pytest.mark.parametrize("lags, B", [(0, 6), (1, 7), (2, 8)])
def test_the_loss_is_the_half_batch_product_computed_in_numpy(lags, B):
    rng = np.random.default_rng(2 + lags)
    real, rm = masked(rng, 200, 7, 3)
    mu, W, _ = reference(real, rm, lags)
    fake, fm = masked(rng, B, 7, 3, min_len=lags + 1)
    fake = fake * 1.3 + 0.2 * fm[:, :, None]
    _, loss = loss_of(fake.transpose(1, 0, 2), fm.T, mu, W, lags)
    loss.forward()
    assert float(loss.d) == pytest.approx(numpy_loss(fake.transpose(1, 0, 2), fm.T, mu, W, lags), rel=1e-4, abs=1e-6)


def test_the_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    real, rm = masked(rng, 100, 5, 2)
    mu, W, _ = reference(real, rm, 1)
    fake, fm = masked(rng, 4, 5, 2)
    fake, fm = fake.transpose(1, 0, 2) * 1.5, fm.T
    x, loss = loss_of(fake, fm, mu, W, 1)
    loss.forward()
    x.grad.zero()
    loss.backward()
    eps = 1e-3
    numeric = np.zeros_like(fake)
    for idx in np.ndindex(*fake.shape):
        up, down = fake.copy(), fake.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (numpy_loss(up, fm, mu, W, 1) - numpy_loss(down, fm, mu, W, 1)) / (2 * eps)
    numeric *= fm[:, :, None]  # padded steps enter no window
    np.testing.assert_allclose(x.g * fm[:, :, None], numeric, rtol=2e-2, atol=2e-4)
    assert np.abs(numeric).max() > 1e-2


def test_it_is_unbiased_near_zero_for_the_data_and_measures_a_covariance_change():
    """Fake batches from the real process: mean ~ 0 (a squared single-batch estimate would be ~ D / n > 0). One
    whitened direction scaled by s: the mean is ((s^2 - 1)^2) / D."""
    rng = np.random.default_rng(6)
    C, L = 3, 6
    A = np.array([[1.0, 0.9, 0.0], [0.0, 0.3, 0.5], [0.0, 0.0, 0.2]])

    def draw(n):
        return (np.cumsum(rng.standard_normal((n, L, C)), axis=1) * 0.5) @ A

    real = draw(20000)
    m = np.ones((20000, L))
    mu, W, _ = reference(real, m, lags=0)
    D = C
    direction = np.linalg.inv(W)[0]  # the first whitened coordinate's direction in feature space

    def mean_loss(scale, batches=300, B=16):
        out = []
        for _ in range(batches):
            x = draw(B)
            u = (x - mu) @ W
            x = x + (scale - 1.0) * u[:, :, :1] * direction  # scales the first whitened coordinate's deviation
            out.append(loss_of(x.transpose(1, 0, 2), np.ones((L, B)), mu, W, 0)[1])
        vals = []
        for v in out:
            v.forward()
            vals.append(float(v.d))
        return np.mean(vals), np.std(vals) / np.sqrt(batches)

    same, se = mean_loss(1.0)
    naive = np.mean([np.sum((np.cov(((draw(16) - mu) @ W).reshape(-1, C).T, bias=True) - np.eye(C)) ** 2) / D
                     for _ in range(100)])
    assert abs(same) < 3 * se + 1e-3 and naive > 10 * abs(same)
    changed, se2 = mean_loss(1.5)
    assert changed == pytest.approx((1.5 ** 2 - 1) ** 2 / D, rel=0.2), (changed, se2)


def test_the_step_whitening_whitens_each_step_and_targets_the_real_windows_own_moments():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((3, 3))
    x, m = masked(rng, 400, 8, 3, min_len=3)
    x = (np.cumsum(x, axis=1) * 0.4 @ A + 1.0) * m[:, :, None]
    mu, W, T = reference(x, m, lags=2, whitening="step")
    steps = x[m > 0]
    P = W[:3, :3]
    np.testing.assert_allclose(mu, np.tile(steps.mean(axis=0), 3), atol=1e-12)
    np.testing.assert_allclose(P.T @ np.cov(steps.T, bias=True) @ P, np.eye(3), atol=1e-8)
    np.testing.assert_allclose(W, np.kron(np.eye(3), P), atol=0)
    u = (windows(x, m, 2) - mu) @ W
    np.testing.assert_allclose(T, u.T @ u / len(u), atol=1e-10)
    assert np.abs(T[:3, 3:6]).max() > 0.5  # the data's own lag-1 correlation stays in the target
    _, _, eye = reference(x, m, lags=2)
    np.testing.assert_array_equal(eye, np.eye(9))
    with pytest.raises(ValueError, match="whitening 'feature': expected 'window' or 'step'"):
        reference(x, m, lags=2, whitening="feature")


@pytest.mark.parametrize("lags, B", [(1, 7), (2, 8)])
def test_the_loss_against_a_target_is_the_half_batch_product_computed_in_numpy(lags, B):
    rng = np.random.default_rng(20 + lags)
    real, rm = masked(rng, 200, 7, 3)
    real = np.cumsum(real, axis=1) * rm[:, :, None]
    mu, W, T = reference(real, rm, lags, whitening="step")
    fake, fm = masked(rng, B, 7, 3, min_len=lags + 1)
    _, loss = loss_of(fake.transpose(1, 0, 2), fm.T, mu, W, lags, T)
    loss.forward()
    want = numpy_loss(fake.transpose(1, 0, 2), fm.T, mu, W, lags, T)
    assert float(loss.d) == pytest.approx(want, rel=1e-4, abs=1e-6) and abs(want) > 1e-3


def test_with_the_step_whitening_the_data_scores_near_zero_and_white_noise_in_its_place_does_not():
    """Real batches: mean ~ 0 (unbiased). The same process with its smooth part kept and its white noise made
    smooth (an AR(1) of the same variance): the lagged noise correlations show."""
    rng = np.random.default_rng(8)
    C, L = 4, 8

    def draw(n, smooth_noise=False):
        f = np.cumsum(rng.standard_normal((n, L, 1)), axis=1) * 0.3
        e = rng.standard_normal((n, L, C))
        if smooth_noise:
            for t in range(1, L):
                e[:, t] = 0.8 * e[:, t - 1] + 0.6 * e[:, t]
        return f * np.array([1.0, 0.8, -0.6, 0.5]) + 0.1 * e

    real = draw(20000)
    mu, W, T = reference(real, np.ones((20000, L)), 2, whitening="step")

    def mean_loss(smooth, batches=150, B=32):
        vals = []
        for _ in range(batches):
            _, v = loss_of(draw(B, smooth).transpose(1, 0, 2), np.ones((L, B)), mu, W, 2, T)
            v.forward()
            vals.append(float(v.d))
        return np.mean(vals), np.std(vals) / np.sqrt(batches)

    same, se = mean_loss(False)
    smooth, _ = mean_loss(True)
    assert abs(same) < 3 * se + 1e-3
    assert smooth > 0.05 and smooth > 20 * abs(same)
