"""The step-profile term (gan_sru/ops/step_profile.py): its reference (each position's whitened mean and mean
square), its value against NumPy, its gradient against finite differences, that it is unbiased (~0 for batches
of the data's own process, the profile's squared distance for a drifting one), and its errors."""
import nnabla as nn
import numpy as np
import pytest
from conftest import batch_mean, numeric_grad

from gan_sru.ops.step_profile import profile_distance, reference, step_profile_loss, step_profile_product

MIX = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.2], [0.3, 0.0, 2.0]])
OFFSET = np.array([3.0, -1.0, 0.5])


def stationary(rng, n, L, drift=None):
    """n sequences (n, L, 3) of correlated white noise; drift (L,) scales each step's spread (None: alike)."""
    x = rng.standard_normal((n, L, 3))
    if drift is not None:
        x = x * drift[None, :, None]
    return x @ MIX + OFFSET


def masked(rng, x, min_len):
    N, L, _ = x.shape
    lengths = rng.integers(min_len, L + 1, N)
    m = (np.arange(L)[None, :] < lengths[:, None]).astype(np.float64)
    return x * m[:, :, None], m


def numpy_product(fake, mask, ref):
    """The two halves' product in NumPy: fake (B, L, C), mask (B, L)."""
    B, L, C = fake.shape
    u = (fake - ref.mu) @ ref.whiten * mask[:, :, None]

    def deviation(s, e):
        count = mask[s:e].sum(axis=0)
        n = np.maximum(count, 1.0)[:, None]
        d = np.concatenate([u[s:e].sum(axis=0) / n - ref.first[:L], (u[s:e] ** 2).sum(axis=0) / n
                            - ref.second[:L]], axis=1)
        return d * (ref.weight[:L] * (count > 0))[:, None]  # a position no sequence of the half reaches: 0

    h = B // 2
    return float((deviation(0, h) * deviation(h, 2 * h)).sum() / (2 * C * max(ref.weight[:L].sum(), 1.0)))


def term_of(fake, mask, ref, root=False):
    x = nn.Variable.from_numpy_array(fake.transpose(1, 0, 2).astype(np.float32), need_grad=True)
    m = nn.Variable.from_numpy_array(mask.T.astype(np.float32))
    return x, (step_profile_loss if root else step_profile_product)(x, m, ref)


def test_the_reference_whitens_the_steps_and_keeps_each_positions_moments():
    rng = np.random.default_rng(0)
    drift = np.linspace(0.5, 1.5, 8)
    x, m = masked(rng, stationary(rng, 5000, 8, drift), min_len=3)
    ref = reference(x, m)
    steps = x[m > 0]
    np.testing.assert_allclose(ref.mu, steps.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(ref.whiten.T @ np.cov(steps.T, bias=True) @ ref.whiten, np.eye(3), atol=1e-8)
    u = (x - ref.mu) @ ref.whiten
    for t in (0, 4, 7):
        valid = m[:, t] > 0
        np.testing.assert_allclose(ref.first[t], u[valid, t].mean(axis=0), atol=1e-10)
        np.testing.assert_allclose(ref.second[t], (u[valid, t] ** 2).mean(axis=0), atol=1e-10)
    # the drift is in the profile: the last step's spread is 3x the first's, each about the pooled one
    assert ref.second[7].sum() / ref.second[0].sum() == pytest.approx(9.0, rel=0.1)
    np.testing.assert_array_equal(ref.weight, 1.0)


def test_positions_with_fewer_than_four_sequences_go_without_the_term():
    x = np.random.default_rng(1).standard_normal((10, 5, 2))
    m = np.ones((10, 5))
    m[3:, 3:] = 0  # steps 3 and 4: only 3 sequences
    np.testing.assert_array_equal(reference(x * m[:, :, None], m).weight, [1, 1, 1, 0, 0])


def test_the_reference_refuses_too_few_steps_naming_the_count():
    with pytest.raises(ValueError, match=r"the step-profile term needs more than 3 valid steps; the real "
                                         r"sequences hold 2"):
        reference(np.ones((2, 1, 3)), np.ones((2, 1)))


@pytest.mark.parametrize("B, L, root", [(6, 8, False), (7, 5, False), (8, 8, True)])
def test_the_term_is_the_half_batch_product_computed_in_numpy(B, L, root):
    rng = np.random.default_rng(2 + B)
    real, rm = masked(rng, stationary(rng, 400, 8), min_len=3)
    ref = reference(real, rm)
    fake, fm = masked(rng, stationary(rng, B, L, np.linspace(0.3, 1.2, L)) + 0.4, min_len=3)
    _, loss = term_of(fake, fm, ref, root)
    loss.forward()
    want = numpy_product(fake, fm, ref)
    if root:
        want = np.sqrt(max(want, 1e-4))
    assert float(loss.d) == pytest.approx(want, rel=1e-4, abs=1e-6) and abs(want) > 1e-2


@pytest.mark.parametrize("root", [False, True])
def test_the_gradient_matches_finite_differences(root):
    rng = np.random.default_rng(5)
    real, rm = masked(rng, stationary(rng, 200, 6), min_len=3)
    ref = reference(real, rm)
    fake, fm = masked(rng, stationary(rng, 4, 6, np.linspace(0.5, 1.5, 6)) + 1.5, min_len=3)  # product > 0
    x, loss = term_of(fake, fm, ref, root)
    loss.forward()
    x.grad.zero()
    loss.backward()

    def value():
        v = numpy_product(fake, fm, ref)
        return np.sqrt(max(v, 1e-4)) if root else v

    numeric = np.array([numeric_grad(value, fake, idx, eps=1e-4)
                        for idx in np.ndindex(*fake.shape)]).reshape(fake.shape) * fm[:, :, None]
    np.testing.assert_allclose(x.g.transpose(1, 0, 2) * fm[:, :, None], numeric, rtol=2e-2, atol=2e-4)
    assert np.abs(numeric).max() > 1e-2


def test_it_is_unbiased_near_zero_for_the_data_and_reads_a_drifts_squared_distance():
    """Batches of the data's own process: mean ~ 0, where a batch's squared distance (one half's) is not. A
    process whose spread drifts along the window: the mean is the squared distance of its profile (from many
    of its sequences) to the data's."""
    rng = np.random.default_rng(6)
    L = 10
    ref = reference(stationary(rng, 40000, L), np.ones((40000, L)))
    drift = np.linspace(0.7, 1.0, L)

    def mean_term(d, batches=200, B=32):
        return batch_mean(lambda: term_of(stationary(rng, B, L, d), np.ones((B, L)), ref)[1], batches)

    same, se = mean_term(None)
    naive = np.mean([profile_distance(stationary(rng, 16, L), np.ones((16, L)), ref) for _ in range(100)])
    assert abs(same) < 3 * se + 1e-4 and naive > 10 * abs(same) + 1e-3, (same, se, naive)
    drifting, se = mean_term(drift)
    want = profile_distance(stationary(rng, 40000, L, drift), np.ones((40000, L)), ref)
    assert want > 0.01 and drifting == pytest.approx(want, abs=3 * se + 0.1 * want), (drifting, want)


def test_a_position_that_no_sequence_of_a_half_reaches_adds_nothing():
    rng = np.random.default_rng(8)
    real = stationary(rng, 500, 6)
    ref = reference(real, np.ones((500, 6)))
    fake = stationary(rng, 4, 6) + 1.0
    short = np.ones((4, 6))
    short[:2, 4:] = 0  # the first half ends at step 4, the second runs on
    _, cut = term_of(fake * short[:, :, None], short, ref)
    cut.forward()
    both = short.copy()
    both[:, 4:] = 0  # neither half reaches steps 4 and 5
    _, none = term_of(fake * both[:, :, None], both, ref)
    none.forward()
    assert float(cut.d) == pytest.approx(float(none.d), rel=1e-5) and float(none.d) > 0.01


def test_the_term_refuses_a_window_longer_than_the_reference():
    rng = np.random.default_rng(7)
    ref = reference(stationary(rng, 50, 4), np.ones((50, 4)))
    with pytest.raises(ValueError, match=r"at most 4 steps; got 5 x 6"):
        term_of(stationary(rng, 6, 5), np.ones((6, 5)), ref)
