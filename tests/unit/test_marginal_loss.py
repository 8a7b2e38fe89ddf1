"""G's marginal term (train.marginal_loss): each feature's values over the batch, sorted and compared with the real
batch's, against a NumPy computation and finite differences, in its fused (host) and plain-ops forms."""
import nnabla as nn
import numpy as np
import pytest
from conftest import max_rel_err, numeric_grad

from gan_sru.train.losses import marginal_loss


def _reference(fake, real, mask):
    """NumPy: per feature, the mean over ranks of |sorted fake - sorted real| over the valid steps, divided by the
    real values' std; the mean over features."""
    m = mask.astype(bool)
    f, r = np.asarray(fake, np.float64)[m], np.asarray(real, np.float64)[m]  # (n, C)
    return float(np.mean(np.abs(np.sort(f, axis=0) - np.sort(r, axis=0)).mean(axis=0) / r.std(axis=0)))


def _data(rng, L=7, B=6, C=3):
    mask = np.ones((L, B), np.float32)
    mask[4:, 1] = mask[2:, 4] = 0  # two shorter sequences
    fake = rng.normal(0.5, 0.2, (L, B, C)) * mask[..., None]
    real = (0.4 + 0.1 * rng.standard_t(3, (L, B, C))) * mask[..., None]
    return fake.astype(np.float32), real.astype(np.float32), mask


def _value_and_grad(fake, real, mask, impl):
    f, r, m = (nn.Variable.from_numpy_array(a) for a in (fake, real, mask))
    f.need_grad = True
    loss = marginal_loss(f, r, m, impl)
    loss.forward()
    f.grad.zero()
    loss.backward()
    return float(loss.d), f.g.copy()


# "auto": the fused host function (gan_sru/ops/marginals.py) on this CPU context; "ref": plain nnabla ops
@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_marginal_loss_equals_numpy_on_a_padded_batch(impl):
    fake, real, mask = _data(np.random.default_rng(3))
    value, _ = _value_and_grad(fake, real, mask, impl)
    assert value == pytest.approx(_reference(fake, real, mask), rel=1e-5)


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_marginal_loss_gradient_matches_finite_differences_and_is_zero_at_padded_steps(impl):
    fake, real, mask = _data(np.random.default_rng(4))
    _, grad = _value_and_grad(fake, real, mask, impl)
    f64 = fake.astype(np.float64)
    expected = np.zeros_like(f64)
    for index in np.ndindex(*f64.shape):
        if mask[index[:2]]:
            expected[index] = numeric_grad(lambda: _reference(f64, real, mask), f64, index, eps=1e-7)
    assert max_rel_err(grad, expected) < 1e-4
    assert np.all(grad[mask == 0] == 0)


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_marginal_loss_is_zero_for_the_real_values_in_another_order(impl):
    """Any rearrangement of the real batch's valid values within each feature has its marginals: the term is 0,
    whatever it does to time or to the pairing of features."""
    rng = np.random.default_rng(5)
    _, real, mask = _data(rng)
    m = mask.astype(bool)
    fake = np.zeros_like(real)
    fake[m] = np.stack([rng.permutation(col) for col in real[m].T], axis=1)
    value, _ = _value_and_grad(fake, real, mask, impl)
    assert value < 1e-6


def test_marginal_loss_tells_short_tails_from_the_data_at_equal_mean_and_std():
    """Uniform values with a Gaussian batch's mean and std (no tails: a sine's kind of distribution) are far from
    the Gaussian batch; another Gaussian batch is not."""
    rng = np.random.default_rng(6)
    L, B, C = 64, 32, 4
    mask = np.ones((L, B), np.float32)
    real = rng.normal(0.5, 0.1, (L, B, C)).astype(np.float32)
    other = rng.normal(0.5, 0.1, (L, B, C)).astype(np.float32)
    flat = rng.uniform(0.5 - 0.1 * 3 ** 0.5, 0.5 + 0.1 * 3 ** 0.5, (L, B, C)).astype(np.float32)
    same, short = (_value_and_grad(x, real, mask, "auto")[0] for x in (other, flat))
    assert short > 3 * same, (short, same)
    # the gradient pulls the short tails outwards: the largest values up, the smallest down
    _, grad = _value_and_grad(flat, real, mask, "auto")
    hi, lo = flat > 0.5 + 0.16, flat < 0.5 - 0.16
    assert np.all(grad[hi] < 0) and np.all(grad[lo] > 0)  # descent: x - lr g moves them out


def test_marginals_refuse_mismatched_shapes_by_name():
    from gan_sru.ops.marginals import marginals

    with pytest.raises(ValueError, match=r"Marginals expects fake and real \(L, B, C\) and mask \(L, B\); got "
                                         r"\[\(6, 4, 3\), \(6, 4, 2\), \(6, 4\)\]"):
        marginals(nn.Variable((6, 4, 3)), nn.Variable((6, 4, 2)), nn.Variable((6, 4)))
