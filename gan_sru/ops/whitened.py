"""G's whitened sequence term: each sequence's own statistics, compared in the data's principal axes.

`train.sequence_moment_loss` compares each per-sequence statistic (a feature's mean, std, lag-1
autocorrelation, the correlation of a pair of features, ...) one entry at a time: the mean and the spread of
each entry over the batch. It met those (measured on the wide set: every entry's mean within 0.04 of the
data's spread, every spread within 10%), and a logistic regression on a sequence's own feature correlations
still told generated from real sequences at 0.72-0.77 accuracy. The statistics of real sequences are tied to
each other (28 features driven by a few factors: most combinations of the 378 correlations barely vary
between sequences), and the samples drifted along exactly those combinations: the squared Mahalanobis
distance between the generated and real mean statistics was 7-9 where two real sets are 0.7-0.8 apart, and a
generated sequence's statistics varied 1.2-1.6x more than a real one's along the data's 10% least varying
axes. A per-entry comparison weighs those axes as little as the data varies along them.

A second giveaway no per-feature statistic shows: the data's own noise. Past its 9 leading principal
directions the wide set holds each feature's white measurement noise (lag-1 autocorrelation -0.02 along
them); the samples' noise there was smooth (0.23-0.30; at 128 steps 0.50 against 0.03), and a logistic
regression on those directions' lag-1 autocorrelations told the sets apart at 0.99. A feature's own lag-1
autocorrelation mixes that noise with the slow factors, and G matched it with slightly rougher factors and
smooth noise.

A third: the values' distribution within a sequence. The samples were flatter than the data (a feature's
excess kurtosis within a sequence -0.54 against -0.37 at 64 steps, -0.40 against -0.18 at 256: closer to a
sine's), which the separability's "shape" group told apart at 0.29 and 0.46 after every other statistic here
was met; the per-entry term's tails fixed it (0.006) at the cost of the rest.

This term compares them where they are tied. From real sequences (`reference`): the statistics s (per-feature
mean, std, lag-1 autocorrelation, the feature correlations, the log magnitude spectrum averaged in `BANDS`
bands (`moments.statistics`' L / 2 frequencies per feature would outnumber the sequences of a long set) and
the third and fourth standardised moments, and the mean, std and lag-1 autocorrelation of each coordinate
along the data's minor directions (`metrics.separability.minor_directions`: past those holding 95% of the
variance), standardised, and rotated onto the principal axes of their covariance, each axis divided by its
spread (floored at ``floor`` of the average variance, so that an axis along which the data does not vary at
all is not amplified without bound): w = ((s - mu) / scale) P. In those coordinates the term is

    |mean_fake(w) - mean_real(w)|^2 / d  (unbiased: the U-statistic over pairs of distinct fake sequences)
    + mean over axes of |spread_fake(w_k) - spread_real(w_k)|

The real mean and spreads of w come from the other half of the reference sequences than the axes (estimated
on the same half, the least varying axes' spreads would be underestimated: a covariance's small eigenvalues
are biased low). The U-statistic keeps the batch's own sampling noise out of the mean part: |batch mean - m|^2
is |E - m|^2 plus the batch's variance over B, whose gradient would shrink the samples' variety.

    ref = reference(x, m)                      # real x (B, L, C), mask m (B, L, 1) -> WhitenedReference
    loss = whitened_moments(fake, mask, ref)   # fake (L, B, C), mask (L, B) -> ()
"""
from dataclasses import dataclass

import numpy as np

from .moments import HostMomentLoss, check_shapes, statistics, statistics_backward

BANDS = 8  # the spectrum's bands
FLOOR = 1e-2  # the smallest axis variance, relative to the standardised statistics' (1 each)
MAX_REFERENCE = 8192  # reference sequences kept (at random) from a larger set


@dataclass(frozen=True)
class WhitenedReference:
    """mu, scale (d,): the statistics' mean and std; axes (d, d): P, the scaled principal axes (w = ((s - mu) /
    scale) @ axes); mean, spread (d,): the real w's mean and std over the other half of the sequences;
    minor_mean (C,), minor (C, k): the data's minor directions (`metrics.separability.minor_directions`; k = 0:
    none), whose coordinates' mean, std and lag-1 autocorrelation are statistics too."""
    mu: np.ndarray
    scale: np.ndarray
    axes: np.ndarray
    mean: np.ndarray
    spread: np.ndarray
    minor_mean: np.ndarray
    minor: np.ndarray

    @property
    def dim(self):
        return len(self.mu)


def band_matrix(L):
    """(K, bands): the averages of the K = L // 2 frequencies of `moments.statistics`' spectrum within at most
    BANDS log-spaced bands (one frequency per band at the low end, more at the high end)."""
    K = L // 2
    edges = np.unique(np.round(np.geomspace(1, K + 1, min(BANDS, K) + 1)).astype(int)) - 1
    A = np.zeros((K, len(edges) - 1))
    for j, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        A[a:b, j] = 1.0 / (b - a)
    return A


def num_statistics(L, C, k):
    """d, the number of statistics of sequences of L steps and C features with k minor directions."""
    return C * (C + 3) // 2 + ((C * (3 + band_matrix(L).shape[1]) + 3 * k) if L >= 2 else 0)


def whitened_statistics(x, m, minor_mean=None, minor=None):
    """x (B, L, C), 0 at padded steps, m (B, L, 1) -> (s (B, d) float64: [mean, std, the C (C - 1) / 2 feature
    correlations, lag-1 autocorrelation, the log magnitude spectrum averaged in bands (`band_matrix`), the
    third and fourth standardised moments] of each sequence (from 2 steps on: lags, spectrum and moments),
    then (with minor directions, L >= 2) the mean, std and lag-1 autocorrelation of each minor coordinate
    y = ((x - minor_mean) @ minor) m; the intermediates)."""
    B, L, C = x.shape
    stats, cache = statistics(x, m, L >= 2)
    extra = None
    if L >= 2:
        stats[-3] = (stats[-3].reshape(B, C, L // 2) @ band_matrix(L)).reshape(B, -1)
        if minor is not None and minor.shape[1]:
            y = (((x - minor_mean.astype(x.dtype)) @ minor.astype(x.dtype)) * m).astype(x.dtype)
            ys, ycache = statistics(y, m, False)
            stats += [ys[0], ys[1], ys[-2]]  # the mean, std and lag-1 autocorrelation (before the spectrum)
            extra = (y, ycache, minor)
    return np.concatenate(stats, axis=1).astype(np.float64), (cache, extra)


def statistics_gradient_to_x(gs, x, m, caches):
    """d loss / dx (B, L, C) from d loss / d s (B, d) of `whitened_statistics` (zeros for the statistics of
    `moments.statistics` that s leaves out)."""
    B, L, C = x.shape
    cache, extra = caches
    widths = [C, C] + ([C * (C - 1) // 2] if C >= 2 else []) + ([C] if L >= 2 else [])
    grads = np.split(gs, np.cumsum(widths), axis=1)
    rest = grads.pop()
    if L >= 2:  # the spectrum's bands back to its frequencies, then the third and fourth moments
        band = band_matrix(L)
        width = C * band.shape[1]
        grads.append((rest[:, :width].reshape(B, C, -1) @ band.T).reshape(B, -1))
        grads += [rest[:, width:width + C], rest[:, width + C:width + 2 * C]]
        rest = rest[:, width + 2 * C:]
    gx = statistics_backward(x, m, L >= 2, cache, grads)
    if extra is not None:  # the minor coordinates' mean, std and lag-1 autocorrelation
        y, ycache, minor = extra
        k = minor.shape[1]
        zeros = lambda n: np.zeros((B, n), gs.dtype)  # noqa: E731
        ygrads = [rest[:, :k], rest[:, k:2 * k]] + ([zeros(k * (k - 1) // 2)] if k >= 2 else []) + \
            [rest[:, 2 * k:], zeros(k * (L // 2))]
        gx = gx + statistics_backward(y, m, False, ycache, ygrads) @ minor.T  # 0 at padded steps already
    return gx


def reference(x, m, floor=FLOOR, seed=0, rescale=False):
    """The reference of real sequences x (N, L, C) (0 at padded steps) with mask m (N, L, 1): see the module
    docstring. Needs at least 4 sequences; more than MAX_REFERENCE are subsampled (seeded).

    rescale: divide each axis once more by the real w's spread along it on the other half, so that real
    statistics have unit variance along every axis (an axis along which they do not vary keeps its scale). The
    half that finds the axes underestimates the least varying ones' variance, more so the fewer sequences per
    statistic: on the factors set (d = 771-799 statistics) the other half's spreads reach 1.35 at 64 steps
    from 4500 sequences and 2.76 at 256 steps from 1800, so the mean part weighs those axes up to 7.6 times as
    much as the rest."""
    N = len(x)
    if N < 4:
        raise ValueError(f"the whitened sequence term needs at least 4 real sequences of a length; got {N}")
    from gan_sru.metrics.separability import minor_directions

    rng = np.random.default_rng(seed)
    order = rng.permutation(N)[:MAX_REFERENCE]
    if x.shape[2] >= 2:
        minor_mean, minor = minor_directions(x[order], m[order, :, 0].sum(axis=1).astype(int))
    else:
        minor_mean, minor = np.zeros(x.shape[2]), np.zeros((x.shape[2], 0))
    s = np.concatenate([whitened_statistics(x[order[i:i + 512]], m[order[i:i + 512]], minor_mean, minor)[0]
                        for i in range(0, len(order), 512)])
    half = len(s) // 2
    a, b = s[:half], s[half:]
    mu, scale = a.mean(axis=0), a.std(axis=0) + 1e-6
    z = (a - mu) / scale
    lam, vec = np.linalg.eigh(z.T @ z / len(z))
    axes = vec / np.sqrt(np.maximum(lam, floor))
    w = ((b - mu) / scale) @ axes
    if rescale:
        spread = w.std(axis=0)
        spread = np.where(spread > 1e-6, spread, 1.0)
        axes, w = axes / spread, w / spread
    return WhitenedReference(mu, scale, axes, w.mean(axis=0), w.std(axis=0), minor_mean, minor)


def whitened_loss_and_grad(w, ref):
    """The term of whitened statistics w (B, d) and its gradient d loss / d w."""
    B, d = w.shape
    e = w - ref.mean
    total = e.sum(axis=0)
    # sum over pairs i != j of e_i . e_j = |sum e|^2 - sum |e_i|^2
    mean_part = (total @ total - (e * e).sum()) / (B * (B - 1) * d)
    g = 2.0 * (total[None, :] - e) / (B * (B - 1) * d)
    centred = w - w.mean(axis=0)
    spread = np.sqrt((centred * centred).mean(axis=0) + 1e-12)
    diff = spread - ref.spread
    g += np.sign(diff) * centred / (B * spread * d)
    return mean_part + np.abs(diff).mean(), g


class WhitenedMoments(HostMomentLoss):
    """`losses.whitened_sequence_loss` fused: inputs fake (L, B, C), mask (L, B)."""

    def __init__(self, ctx, ref):
        super().__init__(ctx)
        self.ref = ref

    def compute(self, fake, real, m):
        fake, m = (np.ascontiguousarray(a.transpose(1, 0, 2)) for a in (fake, m))
        s, caches = whitened_statistics(fake, m, self.ref.minor_mean, self.ref.minor)
        w = ((s - self.ref.mu) / self.ref.scale) @ self.ref.axes
        loss, gw = whitened_loss_and_grad(w, self.ref)
        return loss, (fake, m, caches, gw)

    def gradient(self, state):
        fake, m, caches, gw = state
        gs = (gw @ self.ref.axes.T) / self.ref.scale
        return statistics_gradient_to_x(gs, fake, m, caches).astype(np.float32).transpose(1, 0, 2)


def whitened_moments(fake, mask, ref):
    """The fused whitened sequence term (a scalar) of fake (L, B, C) and mask (L, B) against `ref`."""
    import nnabla as nn

    check_shapes("WhitenedMoments", fake, mask)
    L, C = fake.shape[0], fake.shape[2]
    if ref.minor.shape[0] != C or num_statistics(L, C, ref.minor.shape[1]) != ref.dim:
        raise ValueError(f"WhitenedMoments: a reference of {ref.dim} statistics does not fit sequences of "
                         f"{fake.shape[0]} steps and {fake.shape[2]} features")
    return WhitenedMoments(nn.get_current_context(), ref)(fake, mask)
