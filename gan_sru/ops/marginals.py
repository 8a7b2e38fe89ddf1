"""G's marginal term (`gan_sru.train.losses.marginal_loss`) as a fused function on the host.

Each feature's values over the batch (every valid step of every sequence) form a distribution; the term is the
1-D Wasserstein-1 distance between the generated and the real batch's distribution of each feature, divided by
the real values' std and averaged over the features:

    mean_c  sum_k |sort(fake_c)_k - sort(real_c)_k| / (n std(real_c))     n valid steps, the same for both

An absolute difference, as the moment terms': its gradient does not fade as the distributions near each other.

Why: the moment terms hold means, spreads, correlations and each sequence's statistics, and the samples'
values were still distributed unlike the data's. On the factors set (Gaussian factors: each feature's pooled
excess kurtosis 0.00 +- 0.05) the samples' was -0.3 at 24 steps and -0.4 at 64, on every one of the 28
features: their tails were short (the 0.5% and 99.5% quantiles 0.02-0.03 inside the data's on the [0, 1]
scale). A sorted comparison holds the whole marginal: the tails, the skewness, a second mode. Measured at weight
1 on long64 (docs/quality_log.md): the pooled kurtosis -0.42 -> -0.35, the extremes' separability 0.135 ->
0.100, the discriminative score as before (0.112 against 0.108); most of the short tails come from the output
sigmoid's compression (docs/results/2026-11-28-wide-diagnostics.md), which a term on the pooled values does not
undo within a sequence.

The gradient flows to `fake` only, through the sort's permutation (each value's gradient is its distance to
the real value of the same rank). nnabla's `F.sort` is not used for the plain form's gradient: its backward
(nnabla 1.39) gathers the output's gradient with the permutation instead of scattering it; the plain form
takes the sort's indices and `F.gather`, whose backward scatters.

    loss = marginals(fake, real, mask)   # fake, real (L, B, C), mask (L, B) -> ()
"""
import numpy as np

from .moments import HostMomentLoss, check_shapes

STD_EPS = 1e-6  # a feature can be constant over a batch


def marginal_loss_and_grad(fake, real, m):
    """The term of fake, real (L, B, C) with mask m (L, B, 1) (see the module docstring) and d loss / d fake
    (L, B, C) (0 at padded steps). float64 sums."""
    L, B, C = fake.shape
    valid = m.reshape(-1) > 0
    n = int(valid.sum())
    grad = np.zeros((L * B, C), np.float64)
    if n == 0:
        return 0.0, grad.reshape(L, B, C)
    f = fake.reshape(-1, C)[valid].astype(np.float64)
    r = np.sort(real.reshape(-1, C)[valid].astype(np.float64), axis=0)
    order = np.argsort(f, axis=0, kind="stable")
    d = np.take_along_axis(f, order, axis=0) - r
    std = r.std(axis=0) + STD_EPS
    loss = float((np.abs(d).sum(axis=0) / (n * std)).mean())
    g = np.empty_like(f)
    np.put_along_axis(g, order, np.sign(d) / (n * std * C), axis=0)
    grad[valid] = g
    return loss, grad.reshape(L, B, C)


class Marginals(HostMomentLoss):
    """`losses.marginal_loss` fused."""

    def compute(self, fake, real, m):
        return marginal_loss_and_grad(fake, real, m)  # the state is the gradient itself

    def gradient(self, state):
        return state  # written into the float32 grad by HostMomentLoss, as the other terms' float64 ones


def marginals(fake, real, mask):
    """The fused `losses.marginal_loss` (a scalar) of fake, real (L, B, C) and mask (L, B)."""
    import nnabla as nn

    check_shapes("Marginals", fake, real, mask)
    return Marginals(nn.get_current_context())(fake, real, mask)
