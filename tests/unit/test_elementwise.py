"""The host forms of the networks' elementwise parts (gan_sru/ops/elementwise.py) against their plain-ops forms,
and their gradients against finite differences in float64 NumPy."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from conftest import max_rel_err

from gan_sru.ops.elementwise import mask_steps, oscillator_bank, time_sum


def _forward_backward(out, weights, *leaves):
    """out's values and the gradients of sum(out * weights) w.r.t. each leaf (zeroed first)."""
    loss = F.sum(out * nn.Variable.from_numpy_array(weights))
    for v in leaves:
        v.grad.zero()
    loss.forward()
    loss.backward()
    return out.d.copy(), [v.g.copy() for v in leaves]


def _mask(L, B, rng):
    lengths = rng.integers(1, L + 1, B)
    return (np.arange(L)[:, None] < lengths[None, :]).astype(np.float32)


def test_mask_steps_equals_the_plain_form_and_its_gradient_is_the_mask():
    rng = np.random.default_rng(0)
    L, B, C = 9, 5, 3
    x0 = rng.standard_normal((L, B, C)).astype(np.float32)
    mask = _mask(L, B, rng)
    w = rng.standard_normal((L, B, C)).astype(np.float32)
    out = {}
    for impl in ("auto", "ref"):
        x = nn.Variable.from_numpy_array(x0, need_grad=True)
        m = nn.Variable.from_numpy_array(mask)
        y = mask_steps(x, m, impl)
        assert (y.parent.name == "Callback") == (impl == "auto")  # the host function is a Python callback
        out[impl] = _forward_backward(y, w, x)
    np.testing.assert_array_equal(out["auto"][0], x0 * mask[:, :, None])
    np.testing.assert_array_equal(out["auto"][0], out["ref"][0])
    np.testing.assert_array_equal(out["auto"][1][0], w * mask[:, :, None])  # d sum(w * x * m) / dx = w m
    np.testing.assert_array_equal(out["auto"][1][0], out["ref"][1][0])


def test_mask_steps_accumulates_its_gradient_as_nnabla_asks():
    rng = np.random.default_rng(1)
    x = nn.Variable.from_numpy_array(rng.standard_normal((4, 3, 2)).astype(np.float32), need_grad=True)
    mask = _mask(4, 3, rng)
    y = mask_steps(x, nn.Variable.from_numpy_array(mask))
    loss = F.sum(y)
    x.grad.zero()
    loss.forward()
    loss.backward()
    loss.backward()
    np.testing.assert_array_equal(x.g, 2 * np.broadcast_to(mask[:, :, None], x.shape))


def _bank_numpy(freq, phase, L):
    arg = np.arange(L)[:, None, None] * freq[None] + phase[None]
    return np.concatenate([np.sin(arg), np.cos(arg)], axis=2)


def test_the_oscillator_bank_equals_numpy_and_the_plain_form_with_gradients_from_finite_differences():
    rng = np.random.default_rng(2)
    L, B, S = 12, 3, 4
    f0 = rng.uniform(0.05, 1.0, (B, S)).astype(np.float32)
    p0 = rng.uniform(0, 2 * np.pi, (B, S)).astype(np.float32)
    w = rng.standard_normal((L, B, 2 * S)).astype(np.float32)
    out = {}
    for impl in ("auto", "ref"):
        freq, phase = (nn.Variable.from_numpy_array(a, need_grad=True) for a in (f0, p0))
        y = oscillator_bank(freq, phase, L, impl)
        assert y.shape == (L, B, 2 * S)
        out[impl] = _forward_backward(y, w, freq, phase)
    np.testing.assert_allclose(out["auto"][0], _bank_numpy(f0, p0, L), atol=2e-5)
    np.testing.assert_allclose(out["auto"][0], out["ref"][0], atol=2e-5)
    f64, p64, w64 = (a.astype(np.float64) for a in (f0, p0, w))
    eps = 1e-6
    for which, base in ((0, f64), (1, p64)):
        fd = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            up, down = base.copy(), base.copy()
            up[idx] += eps
            down[idx] -= eps
            args = [(up, p64), (down, p64)] if which == 0 else [(f64, up), (f64, down)]
            fd[idx] = ((_bank_numpy(*args[0], L) * w64).sum() - (_bank_numpy(*args[1], L) * w64).sum()) / (2 * eps)
        assert max_rel_err(out["auto"][1][which], fd) < 1e-4
        assert max_rel_err(out["ref"][1][which], out["auto"][1][which]) < 1e-5


def test_the_oscillator_bank_without_gradients_to_a_constant_frequency():
    """A fixed grid (no tuning): the frequency is a constant leaf; the phase still gets its gradient."""
    rng = np.random.default_rng(3)
    freq = nn.Variable.from_numpy_array(np.full((2, 3), 0.3, np.float32))
    phase = nn.Variable.from_numpy_array(rng.standard_normal((2, 3)).astype(np.float32), need_grad=True)
    y = oscillator_bank(freq, phase, 5)
    _, (g,) = _forward_backward(y, np.ones((5, 2, 6), np.float32), phase)
    arg = np.arange(5)[:, None, None] * 0.3 + phase.d[None]
    np.testing.assert_allclose(g, (np.cos(arg) - np.sin(arg)).sum(axis=0), atol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda: mask_steps(nn.Variable((4, 3, 2)), nn.Variable((4, 2))),
     r"mask_steps expects x \(L, B, C\) and mask \(L, B\); got \(4, 3, 2\) and \(4, 2\)"),
    (lambda: oscillator_bank(nn.Variable((3, 2)), nn.Variable((3, 4)), 5),
     r"oscillator_bank expects freq and phase \(B, S\); got \(3, 2\) and \(3, 4\)"),
    (lambda: mask_steps(nn.Variable((4, 3, 2)), nn.Variable((4, 3)), impl="fast"),
     "unknown impl 'fast'; expected 'auto' or 'ref'"),
    (lambda: time_sum(nn.Variable((4, 3))), r"time_sum expects h \(L, B, H\); got \(4, 3\)"),
])
def test_bad_shapes_and_impls_are_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_time_sum_equals_the_plain_form_and_spreads_its_gradient_over_every_step():
    rng = np.random.default_rng(4)
    h0 = rng.standard_normal((7, 3, 5)).astype(np.float32)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    out = {}
    for impl in ("auto", "ref"):
        h = nn.Variable.from_numpy_array(h0, need_grad=True)
        y = time_sum(h, impl)
        assert y.shape == (3, 5) and (y.parent.name == "Callback") == (impl == "auto")
        out[impl] = _forward_backward(y, w, h)
    np.testing.assert_allclose(out["auto"][0], h0.sum(axis=0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out["auto"][0], out["ref"][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out["auto"][1][0], np.broadcast_to(w, h0.shape))  # d sum(w * sum_t h) / dh
    np.testing.assert_allclose(out["auto"][1][0], out["ref"][1][0], rtol=1e-6)
    h = nn.Variable.from_numpy_array(h0, need_grad=True)
    loss = F.sum(time_sum(h))
    h.grad.zero()
    loss.forward()
    loss.backward()
    loss.backward()
    np.testing.assert_array_equal(h.g, np.full(h0.shape, 2.0, np.float32))  # accumulated as nnabla asks
