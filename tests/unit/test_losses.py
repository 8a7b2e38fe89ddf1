"""The moment-matching term of G's loss against a NumPy computation, and its gradient against finite differences."""
import nnabla as nn
import numpy as np
import pytest
from conftest import max_rel_err, numeric_grad

from gan_sru.train.losses import moment_loss


def _reference(fake, real, mask):
    """NumPy: per-feature mean, std and lag-1 autocorrelation and the lag-0 correlation matrix over the valid steps."""
    m = mask.astype(bool)

    def stats(x):
        v = x[m]  # (N, C)
        mean, std = v.mean(0), v.std(0)
        pairs = m[1:] & m[:-1]  # consecutive valid steps
        acf1 = ((x[1:] - mean) * (x[:-1] - mean))[pairs].mean(0) / std ** 2
        return mean, std, np.corrcoef(v, rowvar=False), acf1

    (mf, sf, cf, af), (mr, sr, cr, ar) = stats(fake), stats(real)
    return (np.abs(mf - mr).mean() + np.abs(sf - sr).mean() + np.abs(cf - cr).mean()
            + np.abs(af - ar).mean())


def _data(rng, L=6, B=5, C=4, padded=True):
    mask = np.ones((L, B), np.float32)
    if padded:
        mask[4:, :2] = 0  # two shorter sequences
    mix = rng.standard_normal((C, C))
    fake = (rng.standard_normal((L, B, C)) @ mix * 0.3 + 0.5) * mask[..., None]
    real = (rng.standard_normal((L, B, C)) * 0.2 + 0.4) * mask[..., None]
    return fake.astype(np.float32), real.astype(np.float32), mask


def _graph(fake, real, mask):
    f, r, m = (nn.Variable.from_numpy_array(a) for a in (fake, real, mask))
    f.need_grad = True
    loss = moment_loss(f, r, m)
    return f, loss


@pytest.mark.parametrize("padded", [False, True])
def test_moment_loss_equals_numpy(padded):
    fake, real, mask = _data(np.random.default_rng(0), padded=padded)
    _, loss = _graph(fake, real, mask)
    loss.forward()
    assert abs(float(loss.d) - _reference(fake, real, mask)) < 1e-5


def test_moment_loss_is_zero_for_the_same_batch_and_grows_with_a_shift():
    fake, real, mask = _data(np.random.default_rng(1), padded=False)
    values = []
    for shift in (0.0, 0.1, 0.3):
        _, loss = _graph(fake + shift, fake, mask)
        loss.forward()
        values.append(float(loss.d))
    assert values[0] < 1e-5 and values[0] < values[1] < values[2]


def test_moment_loss_gradient_matches_finite_differences():
    fake, real, mask = _data(np.random.default_rng(2))
    f, loss = _graph(fake, real, mask)
    f.grad.zero()
    loss.forward()
    loss.backward()
    grad = f.g.copy()
    x = fake.astype(np.float64)
    rng = np.random.default_rng(3)
    valid = np.argwhere(mask.astype(bool))
    for k in rng.choice(len(valid), 8, replace=False):
        t, b = valid[k]
        idx = (t, b, int(rng.integers(fake.shape[2])))
        num = numeric_grad(lambda: _reference(x, real, mask), x, idx)
        assert max_rel_err(grad[idx], num) < 2e-2 or abs(grad[idx] - num) < 1e-4, (idx, grad[idx], num)
