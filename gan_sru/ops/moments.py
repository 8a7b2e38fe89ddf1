"""G's sequence-moment term (`gan_sru.train.losses.sequence_moment_loss`) as a fused function on the host, and
the base of the fused moment terms (`HostMomentLoss`; the pooled ones are in gan_sru/ops/pooled_moments.py).

The sequence term's plain-ops form is dozens of nnabla CPU elementwise ops (about 15 ns per element) over
(B, L, C) arrays: with the real batch's statistics also computed in every step, it cost about a third of a
training step at 256 steps and 28 features (361 ms at batch 64, more than D's and G's recurrences together).
Here the fake batch's statistics and their gradient are a few NumPy array passes and matmuls. The plain-ops
form stays the reference (`impl="ref"`, and on CUDA contexts, where this would copy to the host); the tests
tie the two together and this gradient to finite differences.

    ref = sequence_reference(x, m)                 # the real data's, once: x (L, N, C), m (L, N)
    loss = sequence_moments(fake, mask, ref)       # fake (L, B, C), mask (L, B) -> ()

The gradient flows to `fake` only (the real statistics are constants, as in the plain form).
"""
import functools

import numpy as np
from nnabla.function import PythonFunction

from gan_sru.ops import blas
from gan_sru.ops.matmul import host_array, write_grad

SPREAD_EPS = 1e-8  # inside the spread's square root, as the plain form
VAR_EPS = 1e-6  # a sequence can be flat
SPEC_EPS = 1e-3  # log(|X_f| / n + SPEC_EPS)


@functools.lru_cache(maxsize=16)
def _spectrum_basis(L, dtype):
    """[cos | sin] of w_f t, (L, 2 (L // 2)), w_f = pi f / (L // 2), f = 1..L // 2 (as `centred_spectra`);
    read-only, computed once per length and dtype."""
    K = L // 2
    arg = np.arange(L)[:, None] * (np.pi * np.arange(1, K + 1) / K)[None, :]
    basis = np.concatenate([np.cos(arg), np.sin(arg)], axis=1).astype(dtype)
    basis.flags.writeable = False
    return basis


def _time_rows(x):
    """(B, L, C) -> a contiguous (L, B C): time on the rows, so one GEMM serves every sequence and feature."""
    B, L, C = x.shape
    return np.ascontiguousarray(x.transpose(1, 0, 2)).reshape(L, B * C)


def _lag_pairs(m, k):
    """(B, 1): each sequence's pairs of valid steps k apart (at least 1)."""
    return np.maximum((m[:, k:] * m[:, :-k]).sum(axis=1), 1.0)


def _autocorrelation(z, pairs, k):
    """(B, C): each feature's lag-k autocorrelation from its standardised values z (B, L, C), 0 at padding."""
    return (z[:, k:] * z[:, :-k]).sum(axis=1) / pairs


def _autocorrelation_backward(gz, z, g, pairs, k):
    """Adds to gz (B, L, C) the gradient through `_autocorrelation` of g, d loss / d acf (B, C)."""
    g = g[:, None, :] / pairs[:, None, :]
    gz[:, k:] += g * z[:, :-k]
    gz[:, :-k] += g * z[:, k:]


def statistics(x, m):
    """x (B, L, C), 0 at padded steps, m (B, L, 1) the mask -> (list of per-sequence statistics, each
    (B, k), in the plain form's order; the intermediates the gradient needs)."""
    B, L, C = x.shape
    n = np.maximum(m.sum(axis=1, keepdims=True), 1.0)  # (B, 1, 1)
    mean = (x * m).sum(axis=1, keepdims=True) / n
    c = (x - mean) * m
    var = (c * c).sum(axis=1, keepdims=True) / n + VAR_EPS
    sd = np.sqrt(var)
    z = c / sd
    stats = [mean[:, 0], sd[:, 0]]
    cache = dict(n=n, c=c, sd=sd, z=z)
    if C >= 2:
        iu = np.triu_indices(C, 1)
        corr = np.matmul(z.transpose(0, 2, 1), z) / n  # (B, C, C)
        stats.append(corr[:, iu[0], iu[1]])
    if L >= 2:
        pairs = _lag_pairs(m, 1)
        stats.append(_autocorrelation(z, pairs, 1))
        basis = _spectrum_basis(L, np.dtype(x.dtype))
        K = L // 2
        parts = blas.product(np.ascontiguousarray(basis.T), _time_rows(c)).reshape(2 * K, B, C)  # real, imaginary
        re, im = parts[:K], parts[K:]  # (K, B, C)
        amp = np.sqrt(re * re + im * im + SPREAD_EPS)
        spec = np.log(amp / n[:, 0] + SPEC_EPS)  # n (B, 1, 1) -> (B, 1) against (K, B, C)
        stats.append(np.ascontiguousarray(spec.transpose(1, 2, 0)).reshape(B, -1))  # (B, C K), feature-major
        cache.update(pairs=pairs, re=re, im=im, amp=amp, basis=basis)
    return stats, cache


def _spread(s):
    """The spread over the batch of s (B, k): sqrt(max(E s^2 - (E s)^2, 0) + eps), where the max passed its
    argument (q > 0: the gradient flows there), and the mean."""
    mean = s.mean(axis=0)
    q = (s * s).mean(axis=0) - mean * mean
    return np.sqrt(np.maximum(q, 0.0) + SPREAD_EPS), q > 0, mean


def sequence_reference(x, mask, chunk=256):
    """The sequence term's reference from real sequences x (L, N, C), 0 at padded steps, and mask (L, N): for
    each statistic of `statistics`, its mean and spread over the N sequences (as `_spread`), a pair of (k,)
    arrays. Float64, `chunk` sequences at a time (the statistics' intermediates are a few (N, L, C) arrays)."""
    sums = None
    for start in range(0, x.shape[1], chunk):
        xs = np.ascontiguousarray(np.asarray(x[:, start:start + chunk], np.float64).transpose(1, 0, 2))
        ms = np.ascontiguousarray(np.asarray(mask[:, start:start + chunk], np.float64).T[:, :, None])
        parts = [(s.sum(axis=0), (s * s).sum(axis=0)) for s in statistics(xs, ms)[0]]
        sums = parts if sums is None else [(a + c, b + d) for (a, b), (c, d) in zip(sums, parts)]
    n = x.shape[1]
    return [(s1 / n, np.sqrt(np.maximum(s2 / n - (s1 / n) ** 2, 0.0) + SPREAD_EPS)) for s1, s2 in sums]


def loss_and_grads(fake_stats, reference):
    """The loss (a float) and its gradient w.r.t. each fake statistic (B, k), against the reference's (mean,
    spread) of each statistic."""
    total, grads = 0.0, []
    for sf, (mr, dr) in zip(fake_stats, reference):
        B, k = sf.shape
        df, open_, mf = _spread(sf)
        total += np.abs(mf - mr).mean() + np.abs(df - dr).mean()
        g = np.broadcast_to(np.sign(mf - mr) / (k * B), sf.shape).copy()
        g += np.sign(df - dr) * open_ / k * (sf - mf) / (B * df)
        grads.append(g.astype(sf.dtype, copy=False))  # the fake's dtype: float64 here would widen the backward
    return total, grads


def statistics_backward(x, m, cache, grads):
    """d loss / dx (B, L, C) from the gradients of the statistics (`statistics`' order)."""
    B, L, C = x.shape
    n, c, sd, z = cache["n"], cache["c"], cache["sd"], cache["z"]
    it = iter(grads)
    g_mean, g_sd = next(it)[:, None, :], next(it)[:, None, :].copy()
    gz = np.zeros_like(z)
    if C >= 2:
        iu = np.triu_indices(C, 1)
        full = np.zeros((B, C, C), z.dtype)
        full[:, iu[0], iu[1]] = next(it)
        gz += np.matmul(z, full + full.transpose(0, 2, 1)) / n
    gc = np.zeros_like(c)
    if L >= 2:
        _autocorrelation_backward(gz, z, next(it), cache["pairs"], 1)
        g_spec = next(it).reshape(B, C, -1).transpose(2, 0, 1)  # (K, B, C), as re and im
        re, im, amp = cache["re"], cache["im"], cache["amp"]
        # d log(a / n + e) / da = 1 / (a + e n), and d a / d re = re / a
        g_amp = g_spec / (amp + SPEC_EPS * n[:, 0]) / amp
        g_parts = np.concatenate([g_amp * re, g_amp * im]).reshape(-1, B * C)  # (2 K, B C)
        gc += blas.product(cache["basis"], g_parts).reshape(L, B, C).transpose(1, 0, 2)
    # z = c / sd
    gc += gz / sd
    g_sd -= (gz * c).sum(axis=1, keepdims=True) / (sd * sd)
    gc += g_sd * c / (n * sd)  # sd = sqrt(sum c^2 / n + eps)
    # c = (x - mean) m, mean = sum m x / n
    gcm = gc * m
    return gcm + m * (g_mean - gcm.sum(axis=1, keepdims=True)) / n


class HostMomentLoss(PythonFunction):
    """A moment term of G as one function: inputs fake (L, B, C) and mask (L, B), the real data's statistics
    (`reference`, NumPy arrays) given at construction; output the loss, a scalar; gradient to fake only. A
    subclass says how: `compute(fake, m)` on host copies of the time-major arrays (m (L, B, 1)) returns
    (loss, state), `gradient(state)` d loss / d fake (L, B, C). Forward keeps the state (the fake statistics'
    intermediates and the gradients of the statistics, a few (L, B, C) arrays), so backward computes no
    statistic again; a backward without a forward of its own first recomputes it."""

    def __init__(self, ctx, reference):
        super().__init__(ctx)
        self.reference = reference
        self._saved = None

    @property
    def name(self):
        return type(self).__name__

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):
        check_shapes(self.name, *inputs)
        outputs[0].reset_shape((), True)  # a scalar, as the plain forms' F.mean

    def _compute(self, inputs):
        L, B, C = inputs[0].shape
        fake = host_array(inputs[0].data, (L, B, C)).copy()
        m = host_array(inputs[1].data, (L, B)).reshape(L, B, 1).copy()
        loss, self._saved = self.compute(fake, m)
        return loss

    def forward_impl(self, inputs, outputs):
        host_array(outputs[0].data, (1,), write_only=True)[0] = self._compute(inputs)

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        if not propagate_down[0]:
            return
        if self._saved is None:
            self._compute(inputs)
        g = self.gradient(self._saved)
        self._saved = None
        g *= float(host_array(outputs[0].grad, (1,))[0])
        write_grad(inputs[0], g, accum[0])

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return True


class SequenceMoments(HostMomentLoss):
    """`losses.sequence_moment_loss` fused (the statistics work batch-major: (B, L, C))."""

    def compute(self, fake, m):
        fake, m = (np.ascontiguousarray(a.transpose(1, 0, 2)) for a in (fake, m))
        fs, cache = statistics(fake, m)
        loss, grads = loss_and_grads(fs, self.reference)
        return loss, (fake, m, cache, grads)

    def gradient(self, state):
        fake, m, cache, grads = state
        return statistics_backward(fake, m, cache, grads).transpose(1, 0, 2)


def check_shapes(name, fake, mask):
    """inputs fake (L, B, C), mask (L, B). A clear ValueError here (nnabla turns one raised in a function's
    setup into a SystemError)."""
    shape = tuple(fake.shape)
    if len(shape) != 3 or tuple(mask.shape) != shape[:2]:
        raise ValueError(f"{name} expects fake (L, B, C) and mask (L, B); "
                         f"got {[tuple(v.shape) for v in (fake, mask)]}")


def sequence_moments(fake, mask, reference):
    """The fused sequence-moment loss (a scalar) of fake (L, B, C) and mask (L, B) against `reference`
    (`sequence_reference` of the real data)."""
    import nnabla as nn

    check_shapes("SequenceMoments", fake, mask)
    return SequenceMoments(nn.get_current_context(), reference)(fake, mask)
