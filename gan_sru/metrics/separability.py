"""What tells generated sequences from real ones: one simple classifier per group of per-sequence statistics.

The discriminative score says *whether* a classifier tells the sets apart; this says *by what*. Each
sequence is summarised by groups of its own statistics (``GROUPS``), and for each group an L2-regularised
logistic regression on the standardised statistics (``conditional.LogisticClassifier``) is trained to tell
the two sets apart (two-fold: each half trains once and is tested on the other). A group's score is
|test accuracy - 0.5|, the discriminative score's scale: 0 when the group does not tell them apart, 0.5 when
it always does. Scored for generated vs real and for held-out real vs real (the floor), the groups far above
their floor are what a generator still misses (e.g. on the wide set: each sequence's own feature
correlations at 0.90 accuracy while the levels were at 0.53; later, with those matched, the minor
directions: the data's per-feature noise is white, the samples' smooth, lag-1 autocorrelation -0.02 against
0.23-0.30, told apart at 0.99).
"""
import numpy as np

from gan_sru import DataError

from .common import paired

GROUPS = ("level", "spread", "extremes", "shape", "step changes", "lag-1 autocorrelation", "autocorrelation, lags 2-12",
          "feature correlations", "spectrum", "minor directions")
MINOR_SHARE = 0.95  # the leading directions hold this share of the real set's variance; the rest are minor
MAX_LAG = 12
SPECTRUM_BANDS = 8
_EPS = 1e-8


def _moments(x, valid, n):
    """Per sequence: mean (N, C), centred values (0 at padding), std (N, C)."""
    mean = (x * valid).sum(axis=1) / n
    centred = (x - mean[:, None, :]) * valid
    std = np.sqrt((centred ** 2).sum(axis=1) / n)
    return mean, centred, std


def _autocorrelations(centred, lengths, var, lags):
    """(N, C) lag-k autocorrelation of each sequence and feature for each k in lags: sum over the pairs of valid
    steps of the centred products / (pairs x variance); 0 where a sequence has no such pair."""
    out = []
    for k in lags:
        prod = (centred[:, k:] * centred[:, :-k]).sum(axis=1)  # padded steps are 0
        pairs = np.maximum(lengths - k, 0)[:, None].astype(np.float64)
        out.append(np.where(pairs > 0, prod / np.maximum(pairs, 1.0) / (var + _EPS), 0.0))
    return out


def _band_spectrum(centred, lengths, bands):
    """(N, bands x C): each sequence's log magnitude spectrum, |sum_t x_t exp(-i w t)| / n at w = pi f / F
    (f = 1 .. F, F = L // 2: a full-length sequence's DFT bins), averaged within ``bands`` log-spaced bands."""
    N, L, C = centred.shape
    F = L // 2
    t = np.arange(L)[:, None]
    w = np.pi * np.arange(1, F + 1)[None, :] / F
    flat = np.transpose(centred, (0, 2, 1)).reshape(N * C, L)
    mag = np.hypot(flat @ np.cos(t * w), flat @ np.sin(t * w)).reshape(N, C, F) / lengths[:, None, None]
    logmag = np.log(mag + 1e-3)
    edges = np.unique(np.round(np.geomspace(1, F + 1, min(bands, F) + 1)).astype(int)) - 1
    return np.concatenate([logmag[:, :, a:b].mean(axis=2) for a, b in zip(edges[:-1], edges[1:])], axis=1)


def minor_directions(x, lengths, share=MINOR_SHARE):
    """(mean (C,), directions (C, m)): the principal directions of the valid steps of x (N, L, C) pooled, past
    the fewest leading ones that hold `share` of the variance (at most C - 1 leading: m >= 1 from 2 features).
    In sensor-like data the leading directions carry the shared signal and the minor ones each feature's own
    noise, which real data often has white (step to step independent) and a recurrent generator tends to
    draw smooth: the "minor directions" group."""
    x = np.asarray(x, np.float64)
    N, L, C = x.shape
    valid = np.arange(L)[None, :] < np.asarray(lengths)[:, None]
    v = x[valid]
    mean = v.mean(axis=0)
    lam, vec = np.linalg.eigh(np.cov(v.T, bias=True).reshape(C, C))
    lam, vec = np.maximum(lam[::-1], 0.0), vec[:, ::-1]
    lead = int(np.searchsorted(np.cumsum(lam) / max(lam.sum(), _EPS), share - 1e-12) + 1)
    return mean, vec[:, min(lead, C - 1):]


def sequence_statistics(x, lengths, minor=None):
    """Per-sequence statistics of a padded set x (N, L, C) with lengths (N,): {group: (N, d) float64} for each
    group of ``GROUPS`` that the data has (the shape, lags and the spectrum need 3+ steps, correlations 2+ features, the
    minor directions `minor`, a (mean, directions) of `minor_directions`).

    level: each feature's mean; spread: its std; extremes: its min and max; shape: its skewness and excess
    kurtosis (the values' distribution within the sequence; 0 where the sequence is flat); step changes: the std of
    x_t - x_(t-1); lag-1 autocorrelation; autocorrelation, lags 2-12 (up to L - 2); feature correlations: the
    correlation of each pair of features; spectrum: log magnitude spectrum in ``SPECTRUM_BANDS`` bands;
    minor directions: the std and the lag-1 autocorrelation of each minor coordinate, (x - mean) @ directions.
    All over each sequence's valid steps."""
    x = np.asarray(x, np.float64)
    N, L, C = x.shape
    valid = (np.arange(L)[None, :] < lengths[:, None])[:, :, None]
    n = lengths[:, None].astype(np.float64)
    mean, centred, std = _moments(x, valid, n)
    z = centred / (std[:, None, :] + _EPS)  # standardised, 0 at padded steps
    out = {"level": mean, "spread": std,
           "extremes": np.concatenate([np.where(valid, x, np.inf).min(axis=1),
                                       np.where(valid, x, -np.inf).max(axis=1)], axis=1)}
    if L >= 3:
        out["shape"] = np.concatenate([(z ** 3).sum(axis=1) / n, (z ** 4).sum(axis=1) / n - 3.0 * (std > _EPS)],
                                      axis=1)
        pair = valid[:, 1:] & valid[:, :-1]
        d = (x[:, 1:] - x[:, :-1]) * pair
        npair = np.maximum(pair.sum(axis=1), 1)
        out["step changes"] = np.sqrt(np.maximum((d ** 2).sum(axis=1) / npair - (d.sum(axis=1) / npair) ** 2, 0.0))
        var = std ** 2
        out["lag-1 autocorrelation"] = _autocorrelations(centred, lengths, var, [1])[0]
        lags = list(range(2, min(MAX_LAG, L - 2) + 1))
        if lags:
            out["autocorrelation, lags 2-12"] = np.concatenate(_autocorrelations(centred, lengths, var, lags), axis=1)
        out["spectrum"] = _band_spectrum(centred, lengths, SPECTRUM_BANDS)
    if C >= 2:
        corr = np.einsum("nlc,nld->ncd", z, z) / n[:, :, None]
        i, j = np.triu_indices(C, 1)
        out["feature correlations"] = corr[:, i, j]
    if minor is not None and minor[1].shape[1] and L >= 3:
        y = (x - minor[0]) @ minor[1] * valid
        ym, yc, ys = _moments(y, valid, n)
        out["minor directions"] = np.concatenate(
            [ys, _autocorrelations(yc, lengths, ys ** 2, [1])[0]], axis=1)
    return {g: out[g] for g in GROUPS if g in out}


def _accuracy(features_a, features_b, rng, l2):
    """Two-fold test accuracy of telling features_a (n, d) from features_b (n, d) with the project's logistic
    classifier (``conditional.LogisticClassifier``: standardised features, L2 ``l2``, L-BFGS)."""
    from .conditional import LogisticClassifier

    n = len(features_a)
    halves = [(o[: n // 2], o[n // 2:]) for o in (rng.permutation(n), rng.permutation(n))]
    correct = total = 0
    for fold in (0, 1):
        tr = [h[fold] for h in halves]
        te = [h[1 - fold] for h in halves]
        clf = LogisticClassifier(2, l2).fit(np.vstack([features_a[tr[0]], features_b[tr[1]]]),
                                            np.r_[np.ones(len(tr[0]), int), np.zeros(len(tr[1]), int)])
        for part, label in ((features_a[te[0]], 1), (features_b[te[1]], 0)):
            correct += int(np.sum(clf.predict(part) == label))
            total += len(part)
    return correct / total


def separability(real, other, seed=0, l2=1e-2):
    """How well each group of per-sequence statistics tells `other` from `real`.

    Args:
        real, other: sequence sets (a list of (L_i, C) arrays or an (N, L, C) array), same feature count; the
            larger set is cut to the smaller's size at random, and each needs at least 4 sequences.
        seed: the subsets and the folds.
        l2: the logistic regressions' L2 penalty (on standardised statistics, per sequence).

    Returns:
        {group: |two-fold test accuracy - 0.5|} over the groups of ``GROUPS`` the data has, in that order.
    """
    xa, la, xb, lb = paired(real, other, "separability", ("real", "other"))
    n = min(len(xa), len(xb))
    if n < 4:
        raise DataError(f"separability: {len(xa)} real and {len(xb)} other sequences; expected at least 4 of each "
                        "(two folds of two)")
    rng = np.random.default_rng([seed, 0x5E9A])
    ia, ib = rng.permutation(len(xa))[:n], rng.permutation(len(xb))[:n]
    minor = minor_directions(xa, la) if xa.shape[2] >= 2 else None
    sa, sb = sequence_statistics(xa[ia], la[ia], minor), sequence_statistics(xb[ib], lb[ib], minor)
    return {g: abs(_accuracy(sa[g], sb[g], rng, l2) - 0.5) for g in sa}
