"""The predictor term (gan_sru/ops/predictor.py, train.losses.predictor_loss): its reference regression, its
value against NumPy, its gradient against finite differences, that it is unbiased, and that it measures what
it says: the relative excess squared error of a regression trained on the samples and tested on the data."""
import nnabla as nn
import numpy as np
import pytest
from conftest import batch_mean, numeric_grad

from gan_sru.ops.covariance import windows
from gan_sru.ops.predictor import normal_equations, predictor_loss, predictor_product, reference


def var1(rng, n, L, A, noise=0.5):
    """n sequences of L steps of x_t+1 = x_t A + noise e_t (C = len(A)), started from the stationary spread."""
    C = len(A)
    x = np.zeros((n, L, C))
    x[:, 0] = rng.standard_normal((n, C))
    for t in range(1, L):
        x[:, t] = x[:, t - 1] @ A + noise * rng.standard_normal((n, C))
    return x


A_TRUE = np.array([[0.8, 0.3, 0.0], [0.0, 0.5, 0.4], [0.1, 0.0, -0.3]])


def masked(rng, x, min_len):
    N, L, _ = x.shape
    lengths = rng.integers(min_len, L + 1, N)
    m = (np.arange(L)[None, :] < lengths[:, None]).astype(np.float64)
    return x * m[:, :, None], m


def numpy_loss(fake, mask, ref, root=False):
    """fake (B, L, C), mask (B, L): sum(N_a * N_b) / C from the two halves' windows (the product); root: the
    term, its floored square root."""
    B, C = fake.shape[0], fake.shape[2]
    a = normal_equations(fake[:B // 2], mask[:B // 2], ref)
    b = normal_equations(fake[B // 2:2 * (B // 2)], mask[B // 2:2 * (B // 2)], ref)
    loss = np.sum(a * b) / C
    return np.sqrt(max(loss, 1e-4)) if root else loss


def loss_of(fake, mask, ref, root=False):
    """fake (B, L, C), mask (B, L) -> the nnabla input (L, B, C) and the product (root: the term)."""
    x = nn.Variable.from_numpy_array(fake.transpose(1, 0, 2).astype(np.float32), need_grad=True)
    m = nn.Variable.from_numpy_array(mask.T.astype(np.float32))
    return x, (predictor_loss if root else predictor_product)(x, m, ref)


def test_the_reference_is_the_datas_regression_and_its_normal_equations_hold_there():
    rng = np.random.default_rng(0)
    x = var1(rng, 4000, 12, A_TRUE) + np.array([1.0, -2.0, 0.5]) * (1 - 0.8)
    m = np.ones(x.shape[:2])
    ref = reference(x, m, lags=1)
    assert ref.weights.shape == (6, 3) and ref.whiten.shape == (6, 6) and ref.scale.shape == (3,)
    np.testing.assert_allclose(ref.weights[:3], A_TRUE, atol=0.02)  # x_t's coefficients
    np.testing.assert_allclose(ref.weights[3:], 0.0, atol=0.02)  # x_t-1 adds nothing to a VAR(1)
    np.testing.assert_allclose(ref.scale, 0.5, rtol=0.02)
    z = windows(x, m, 2)[:, 3:]  # the windows that have a next step
    np.testing.assert_allclose(ref.z_mean, z.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(ref.whiten.T @ np.cov(z.T, bias=True) @ ref.whiten, np.eye(6), atol=1e-8)
    assert np.abs(normal_equations(x, m, ref)).max() < 1e-10  # its own residuals: orthogonal, mean 0


def test_the_reference_refuses_too_few_windows_naming_the_count():
    x, m = np.ones((3, 3, 2)), np.ones((3, 3))
    with pytest.raises(ValueError, match=r"the predictor term with 1 lag\(s\) needs more than 4 windows of 3 valid "
                                         r"steps; the real sequences hold 3"):
        reference(x, m, lags=1)


@pytest.mark.parametrize("lags, B, root", [(0, 6, False), (1, 7, False), (2, 8, True)])
def test_the_loss_is_the_half_batch_product_computed_in_numpy(lags, B, root):
    rng = np.random.default_rng(2 + lags)
    real, rm = masked(rng, var1(rng, 300, 9, A_TRUE), min_len=lags + 2)
    ref = reference(real, rm, lags)
    fake, fm = masked(rng, var1(rng, B, 9, A_TRUE.T * 0.9, noise=0.7), min_len=lags + 2)
    _, loss = loss_of(fake, fm, ref, root)
    loss.forward()
    want = numpy_loss(fake, fm, ref, root)
    assert float(loss.d) == pytest.approx(want, rel=1e-4, abs=1e-6) and abs(want) > 1e-2


@pytest.mark.parametrize("root", [False, True])
def test_the_gradient_matches_finite_differences(root):
    rng = np.random.default_rng(5)
    real, rm = masked(rng, var1(rng, 200, 6, A_TRUE), min_len=3)
    ref = reference(real, rm, 1)
    fake, fm = masked(rng, var1(rng, 4, 6, A_TRUE.T), min_len=3)
    x, loss = loss_of(fake, fm, ref, root)
    loss.forward()
    x.grad.zero()
    loss.backward()
    numeric = np.array([numeric_grad(lambda: numpy_loss(fake, fm, ref, root), fake, idx, eps=1e-3)
                        for idx in np.ndindex(*fake.shape)]).reshape(fake.shape)
    numeric *= fm[:, :, None]  # padded steps enter no window
    np.testing.assert_allclose(x.g.transpose(1, 0, 2) * fm[:, :, None], numeric, rtol=2e-2, atol=2e-4)
    assert np.abs(numeric).max() > 1e-2


def test_it_is_unbiased_near_zero_for_the_data_and_reads_the_excess_error_of_the_samples_regression():
    """Batches of the data's own process: mean ~ 0, where one batch's squared estimate is not. A process whose
    regression differs: the mean is the relative excess squared error that a regression fitted on (many of) its
    sequences has on the data, to first order (the term weighs the samples' deviation by the data's window
    covariance where the fitted regression's error weighs it by the samples' own: here 1.35x apart)."""
    rng = np.random.default_rng(6)
    L, lags = 10, 1
    real = var1(rng, 20000, L, A_TRUE)
    ones = np.ones((20000, L))
    ref = reference(real, ones, lags)
    other = A_TRUE + 0.5 * np.array([[0.0, 0.0, 0.1], [0.05, 0.0, 0.0], [0.0, -0.08, 0.0]])

    def mean_loss(A, batches=120, B=32):
        return batch_mean(lambda: loss_of(var1(rng, B, L, A), np.ones((B, L)), ref)[1], batches)

    same, se = mean_loss(A_TRUE)
    naive = np.mean([np.sum(normal_equations(var1(rng, 16, L, A_TRUE), np.ones((16, L)), ref) ** 2) / 3
                     for _ in range(60)])
    assert abs(same) < 3 * se + 1e-4 and naive > 10 * abs(same) + 1e-3, (same, se, naive)
    changed, _ = mean_loss(other)
    # the samples' own regression, tested on the data: its squared error above the data's, relative, per target
    samples = var1(rng, 20000, L, other)
    fitted = reference(samples, ones, lags)
    v = windows(real, ones, lags + 1)
    y, z = v[:, :3], v[:, 3:]

    def mse(r):
        return ((y - r.y_mean - (z - r.z_mean) @ r.weights) ** 2).mean(axis=0)

    excess = float(np.mean(mse(fitted) / mse(ref) - 1))
    assert excess > 0.003 and excess < changed < 1.6 * excess, (changed, excess)
