"""Straight-through Gumbel-softmax (Jang et al. 2017; Maddison et al. 2017) in plain nnabla ops, and its NumPy
reference.

    y = softmax((logits + g) / tau)          over the last axis; g: Gumbel(0, 1) noise given as an input
    hard = one_hot(argmax y)                 (= a draw from softmax(logits): the Gumbel-max trick)
    out = y + stop_gradient(hard - y)        forward: hard (exactly one-hot); backward: d out / d logits = that of y

The noise is an input (drawn by the caller from a seeded NumPy stream), so a step is a pure function of
(seed, step) and the op can be checked against the reference with fixed noise. tau is a (1,) Variable fed each
step (the temperature schedule); the forward value of `out` does not depend on it, only the gradient does.
"""
import nnabla.functions as F
import numpy as np


def gumbel_noise(rng, shape):
    """Gumbel(0, 1) float32 noise: -log(-log U), U in (0, 1)."""
    u = rng.random(shape)
    u = np.clip(u, 1e-12, 1.0 - 1e-7)
    return (-np.log(-np.log(u))).astype(np.float32)


def tau_at(step, steps, tau_start, tau_end):
    """The temperature at `step` of `steps`: tau_start * (tau_end / tau_start) ** (step / steps), exponential decay
    from tau_start at step 0 to tau_end at the last step (held there beyond it)."""
    frac = min(max(step / max(steps, 1), 0.0), 1.0)
    return float(tau_start * (tau_end / tau_start) ** frac)


def gumbel_softmax(logits, noise, tau, hard=True):
    """logits, noise: (..., K) Variables; tau: a (1,) Variable (or a float). Returns (..., K): the soft sample y
    (hard=False) or the straight-through one-hot (hard=True)."""
    shape = logits.shape
    z = logits + noise
    z = z / (F.broadcast(F.reshape(tau, (1,) * len(shape)), shape) if hasattr(tau, "shape") else tau)
    y = F.softmax(z, axis=len(shape) - 1)
    if not hard:
        return y
    top = F.broadcast(F.max(y, axis=len(shape) - 1, keepdims=True), shape)
    delta = F.greater_equal(y, top) - y
    delta.need_grad = False  # the straight-through estimator: the backward pass goes through y only
    return y + delta


def gumbel_softmax_ref(logits, noise, tau, hard=True):
    """NumPy reference of gumbel_softmax's forward."""
    z = (np.asarray(logits, np.float64) + noise) / tau
    z = z - z.max(axis=-1, keepdims=True)
    y = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    if not hard:
        return y
    return (y == y.max(axis=-1, keepdims=True)).astype(np.float64)


def gumbel_softmax_grad_ref(logits, noise, tau, grad_out):
    """NumPy reference of d(sum(out * grad_out)) / d logits, the same for hard (straight-through) and soft."""
    y = gumbel_softmax_ref(logits, noise, tau, hard=False)
    g = np.asarray(grad_out, np.float64)
    return y * (g - (g * y).sum(axis=-1, keepdims=True)) / tau


def categorical_draw(logits, noise):
    """NumPy: the index a hard Gumbel-softmax picks, argmax(logits + noise) (a draw from softmax(logits))."""
    return np.argmax(np.asarray(logits) + noise, axis=-1)
