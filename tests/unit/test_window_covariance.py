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


def numpy_loss(fake, mask, mu, W, lags):
    """fake (L, B, C), mask (L, B): trace((M_a - I)(M_b - I)) / D from the two halves' windows."""
    B = fake.shape[1]
    x, m = fake.transpose(1, 0, 2), mask.T

    def m_minus_i(rows):
        v = windows(x[rows], m[rows], lags)
        u = (v - mu) @ W
        return u.T @ u / max(len(u), 1) - np.eye(len(mu))

    a, b = m_minus_i(slice(0, B // 2)), m_minus_i(slice(B // 2, 2 * (B // 2)))
    return np.trace(a @ b) / len(mu)


def loss_of(fake, mask, mu, W, lags):
    x = nn.Variable.from_numpy_array(fake.astype(np.float32), need_grad=True)
    m = nn.Variable.from_numpy_array(mask.astype(np.float32))
    loss = window_covariance_loss(x, m, mu, W, lags)
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
    mu, W = reference(x, m, lags=1)
    v = windows(x, m, 1)
    np.testing.assert_allclose(mu, v.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(W.T @ np.cov(v.T, bias=True) @ W, np.eye(8), atol=1e-8)
    # a feature repeated: the covariance is singular, the whitening stays finite (floored eigenvalue)
    dup = np.concatenate([x, x[:, :, :1]], axis=2)
    mu2, W2 = reference(dup, m, lags=0)
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
    mu, W = reference(real, rm, lags)
    fake, fm = masked(rng, B, 7, 3, min_len=lags + 1)
    fake = fake * 1.3 + 0.2 * fm[:, :, None]
    _, loss = loss_of(fake.transpose(1, 0, 2), fm.T, mu, W, lags)
    loss.forward()
    assert float(loss.d) == pytest.approx(numpy_loss(fake.transpose(1, 0, 2), fm.T, mu, W, lags), rel=1e-4, abs=1e-6)


def test_the_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    real, rm = masked(rng, 100, 5, 2)
    mu, W = reference(real, rm, 1)
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
    mu, W = reference(real, m, lags=0)
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
