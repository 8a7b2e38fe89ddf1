"""The batch's pooled moments as fused host functions: `losses.moment_loss` (`batch_moments`) and
`losses.innovation_loss` (`step_change_moments`), each the same loss as its plain-ops form in a few NumPy
passes and one C x C product (gan_sru/ops/moments.py says why; the plain form stays the reference).

    loss = batch_moments(fake, mask, pooled_reference(x, m))               # mean, std, correlations, lag-1
    loss = step_change_moments(fake, mask, step_change_reference(x, m))   # std, correlations of x_t - x_(t-1)

fake (L, B, C) and mask (L, B); the references are the real data's statistics, computed once from x (L, N, C)
and m (L, N). The innovation term in plain ops costs a quarter of a training step at 24 steps and 28 features.
The gradient flows to `fake` only (the real statistics are constants).
"""
import numpy as np

from gan_sru.ops import blas
from gan_sru.ops.moments import HostMomentLoss, check_shapes


def pooled_statistics(x, m, lag1=True):
    """x (L, B, C), 0 at padded steps, m (L, B, 1) -> ([mean (C,), std (C,), correlations (C, C), lag-1
    autocorrelation (C,) or None when L < 2 or not lag1], intermediates): `losses._masked_stats` over every
    valid step."""
    L, B, C = x.shape
    n = max(float(m.sum()), 1.0)
    mean = x.reshape(-1, C).sum(axis=0) / n
    c = (x - mean) * m
    flat = c.reshape(-1, C)
    cov = blas.product(np.ascontiguousarray(flat.T), flat) / n
    var = np.diag(cov) + 1e-8
    std = np.sqrt(var)
    corr = cov / np.outer(std, std)
    cache = dict(n=n, c=c, std=std, var=var, corr=corr)
    acf = None
    if lag1 and L >= 2:
        pairs = max(float(m[1:].sum()), 1.0)
        acf = (c[1:] * c[:-1]).reshape(-1, C).sum(axis=0) / pairs / var
        cache.update(pairs=pairs, acf=acf)
    return [mean, std, corr, acf], cache


def pooled_reference(x, mask):
    """`pooled_statistics` of real sequences x (L, N, C), 0 at padded steps, mask (L, N), in float64."""
    x, m = np.asarray(x, np.float64), np.asarray(mask, np.float64)[:, :, None]
    return pooled_statistics(x, m)[0]


def step_change_reference(x, mask):
    """[None, std, correlations, None] of the step changes of real sequences x (L, N, C), mask (L, N), L >= 2."""
    x, m = np.asarray(x, np.float64), np.asarray(mask, np.float64)[:, :, None]
    pair = m[1:] * m[:-1]
    _, std, corr, _ = pooled_statistics((x[1:] - x[:-1]) * pair, pair, lag1=False)[0]
    return [None, std, corr, None]


def pooled_loss_and_grads(fake_stats, real_stats):
    """mean |fake - real| over each statistic's entries, summed, and its gradient w.r.t. each fake statistic
    (None for a statistic given as None)."""
    total, grads = 0.0, []
    for sf, sr in zip(fake_stats, real_stats):
        if sf is None:
            grads.append(None)
            continue
        total += np.abs(sf - sr).mean()
        grads.append((np.sign(sf - sr) / sf.size).astype(sf.dtype))  # float64 here would widen the backward
    return total, grads


def pooled_backward(x, m, cache, grads):
    """d loss / dx (L, B, C) from the gradients of `pooled_statistics`' statistics (the mean's and the lag-1
    autocorrelation's may be None: no gradient)."""
    L, B, C = x.shape
    n, c, std, var, corr = cache["n"], cache["c"], cache["std"], cache["var"], cache["corr"]
    g_mean, g_std, g_corr, g_acf = grads
    g_mean = np.zeros(C, x.dtype) if g_mean is None else g_mean
    g_cov = g_corr / np.outer(std, std)
    g_std = g_std - ((g_corr + g_corr.T) * corr).sum(axis=1) / std  # corr_ij = cov_ij / (std_i std_j)
    g_var = g_std / (2 * std)
    gc = np.zeros_like(c)
    if g_acf is not None:  # acf_i = sum_t c_t,i c_t-1,i / pairs / var_i
        g_lag = g_acf / (cache["pairs"] * var)
        g_var = g_var - g_acf * cache["acf"] / var
        gc[1:] += g_lag * c[:-1]
        gc[:-1] += g_lag * c[1:]
    g_cov = g_cov + np.diag(g_var)  # var_i = cov_ii + eps
    gc += blas.product(c.reshape(-1, C), ((g_cov + g_cov.T) / n).astype(c.dtype)).reshape(L, B, C)  # cov = c^T c / n
    gcm = gc * m  # c = (x - mean) m, mean = sum x / n
    return gcm + m * (g_mean - gcm.reshape(-1, C).sum(axis=0)) / n


class BatchMoments(HostMomentLoss):
    """`losses.moment_loss` fused."""

    def compute(self, fake, m):
        fs, cache = pooled_statistics(fake, m)
        loss, grads = pooled_loss_and_grads(fs, self.reference)
        return loss, (fake, m, cache, grads)

    def gradient(self, state):
        return pooled_backward(*state)


class StepChangeMoments(HostMomentLoss):
    """`losses.innovation_loss` fused: the pooled std and correlations of the step changes."""

    def compute(self, fake, m):
        pair = m[1:] * m[:-1]  # (L - 1, B, 1): the pairs of consecutive valid steps; changes are 0 elsewhere
        d = (fake[1:] - fake[:-1]) * pair
        fs, cache = pooled_statistics(d, pair, lag1=False)
        loss, grads = pooled_loss_and_grads([None, fs[1], fs[2], None], self.reference)
        return loss, (d, pair, cache, grads, fake.shape)

    def gradient(self, state):
        d, pair, cache, grads, shape = state
        gd = pooled_backward(d, pair, cache, grads)  # 0 outside the pairs
        g = np.zeros(shape, gd.dtype)
        g[1:] += gd
        g[:-1] -= gd
        return g


def _call(cls, fake, mask, reference):
    import nnabla as nn

    check_shapes(cls.__name__, fake, mask)
    return cls(nn.get_current_context(), reference)(fake, mask)


def batch_moments(fake, mask, reference):
    """The fused `losses.moment_loss` (a scalar) of fake (L, B, C) and mask (L, B) against `pooled_reference`."""
    return _call(BatchMoments, fake, mask, reference)


def step_change_moments(fake, mask, reference):
    """The fused `losses.innovation_loss` (a scalar) of fake (L, B, C) and mask (L, B), L >= 2, against
    `step_change_reference`."""
    return _call(StepChangeMoments, fake, mask, reference)
