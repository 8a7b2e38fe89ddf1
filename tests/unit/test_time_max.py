"""gan_sru.ops.time_max: the host function against NumPy and the plain-ops form, forward and backward."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest

from gan_sru.ops.time_max import time_max


def _inputs(L=9, B=4, H=5, seed=0):
    rng = np.random.default_rng(seed)
    h = rng.standard_normal((L, B, H)).astype(np.float32)
    lengths = np.array([L, 5, 1, 3])[:B]
    mask = (np.arange(L)[:, None] < lengths[None, :]).astype(np.float32)
    h[:, 3] -= 10.0  # every valid value below the zeros of padded steps: padding must not win
    return h * mask[:, :, None], mask, lengths


def _numpy(h, lengths):
    return np.stack([h[:n, b].max(axis=0) for b, n in enumerate(lengths)])


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_time_max_is_the_max_over_valid_steps_and_its_gradient_goes_to_the_arg_max(impl):
    h, mask, lengths = _inputs()
    hv = nn.Variable.from_numpy_array(h, need_grad=True)
    y = time_max(hv, nn.Variable.from_numpy_array(mask), impl)
    w = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
    loss = F.sum(y * nn.Variable.from_numpy_array(w))
    hv.grad.zero()
    loss.forward()
    loss.backward()
    np.testing.assert_allclose(y.d, _numpy(h, lengths), rtol=0, atol=1e-6)
    expected = np.zeros_like(h)
    for b, n in enumerate(lengths):
        arg = h[:n, b].argmax(axis=0)
        expected[arg, b, np.arange(h.shape[2])] = w[b]
    np.testing.assert_allclose(hv.g, expected, rtol=0, atol=1e-6)


def test_time_max_gradient_accumulates():
    h, mask, _ = _inputs()
    hv = nn.Variable.from_numpy_array(h, need_grad=True)
    y = time_max(hv, nn.Variable.from_numpy_array(mask))
    loss = F.sum(y) + F.sum(hv)  # two consumers of h: the host function must add to the other's gradient
    hv.grad.zero()
    loss.forward()
    loss.backward()
    assert hv.g.sum() == pytest.approx(h.size + y.size)


def test_time_max_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match=r"time_max expects h \(L, B, H\) and mask \(L, B\), got \(4, 3, 2\) and "
                                         r"\(4, 2\)"):
        time_max(nn.Variable((4, 3, 2)), nn.Variable((4, 2)))
