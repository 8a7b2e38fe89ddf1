"""Unbiased MMD^2 with an RBF kernel (median-heuristic bandwidth) on flattened sequences."""

import numpy as np

from gan_sru import DataError

from .common import flatten_pair

MEDIAN_MAX_POINTS = 1000  # pooled points used by the median bandwidth heuristic
KERNEL_BLOCK = 1 << 22  # kernel entries computed at once by mmd2 (32 MiB of float64)


def median_bandwidth(a, b, max_points=MEDIAN_MAX_POINTS, seed=0):
    """Median heuristic: the median pairwise Euclidean distance of the pooled flattened sets.

    ``a``, ``b``: matrices ``(N, D)`` (see ``flatten_pair``). Uses a random subset of
    ``max_points`` pooled rows (RandomState(seed)) when there are more. Returns a positive
    float; 1.0 when every distance is zero.
    """
    pooled = np.concatenate([np.asarray(a, np.float64), np.asarray(b, np.float64)])
    if len(pooled) > max_points:
        pooled = pooled[np.random.RandomState(seed).choice(len(pooled), max_points, replace=False)]
    sq = np.sum(pooled ** 2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * pooled @ pooled.T, 0.0)
    dist = np.sqrt(d2[np.triu_indices(len(pooled), k=1)])
    med = float(np.median(dist)) if len(dist) else 0.0
    return med if med > 0 else 1.0


def _kernel_sum(x, y, gamma, same):
    """Sum of exp(-gamma * |x_i - y_j|^2) over all pairs (over i != j when ``same``); blocked rows."""
    sx, sy = np.sum(x ** 2, axis=1), np.sum(y ** 2, axis=1)
    rows = max(1, KERNEL_BLOCK // max(1, len(y)))
    total = 0.0
    for i in range(0, len(x), rows):
        d2 = np.maximum(sx[i:i + rows, None] + sy[None, :] - 2.0 * x[i:i + rows] @ y.T, 0.0)
        k = np.exp(-gamma * d2)
        if same:
            k[np.arange(len(k)), np.arange(i, i + len(k))] = 0.0
        total += float(k.sum())
    return total


def mmd2(a, b, bandwidth=None):
    """Unbiased squared maximum mean discrepancy with an RBF kernel.

    ``k(x, y) = exp(-|x - y|^2 / (2 * bandwidth^2))`` on flattened sequences (see
    ``flatten_pair``: variable lengths are resampled to a common length).

    Args:
        a, b: sequence sets, same C, at least 2 sequences each.
        bandwidth: RBF sigma; default ``median_bandwidth`` of the pooled sets.

    Returns:
        float: the unbiased estimate (can be slightly negative when a and b match).
    """
    x, y = flatten_pair(a, b, "mmd2", ("a", "b"))
    for name, m in (("a", x), ("b", y)):
        if len(m) < 2:
            raise DataError(f"mmd2: {name} has {len(m)} sequence; expected at least 2")
    if bandwidth is None:
        bandwidth = median_bandwidth(x, y)
    if not bandwidth > 0:
        raise DataError(f"mmd2: bandwidth {bandwidth}; expected a positive number")
    gamma = 1.0 / (2.0 * float(bandwidth) ** 2)
    n, m = len(x), len(y)
    kxx = _kernel_sum(x, x, gamma, True) / (n * (n - 1))
    kyy = _kernel_sum(y, y, gamma, True) / (m * (m - 1))
    kxy = _kernel_sum(x, y, gamma, False) / (n * m)
    return float(kxx + kyy - 2.0 * kxy)
