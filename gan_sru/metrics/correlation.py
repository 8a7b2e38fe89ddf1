"""Diffusion-TS's correlational score: how far the generated features' lag-0 cross-correlations are from
the real ones.

Mixed data: a categorical feature's one-hot columns enter as 0/1 features, so their entries are point-biserial
(with a numeric feature) and phi (with another category) correlations; a category that never occurs in a set is
a constant column and correlates 0 there.
"""
import numpy as np

from gan_sru import DataError

from .common import as_padded, paired

CORRELATION_FIFTHS = 5


def correlation_matrix(seqs, name="correlation_matrix: seqs"):
    """Lag-0 cross-correlation of the features, as Diffusion-TS computes it: each feature standardised over
    every valid (sequence, step) of the set (mean, std with ddof 1, as torch's default), then entry (i, j)
    is the mean of z_i * z_j over those steps. The diagonal is (n - 1) / n, n the number of steps.

    A constant feature (std 0) is standardised to 0 (Diffusion-TS's code would give NaN).

    Args:
        seqs: sequence set (list of ``(L_i, C)`` or ``(N, L, C)``) with 2 or more steps in all.

    Returns:
        float64 ``(C, C)``, symmetric.
    """
    x, lengths = as_padded(seqs, name)
    return _correlation(x, lengths, name)


def _correlation(x, lengths, name):
    valid = np.arange(x.shape[1])[None, :] < lengths[:, None]
    flat = x[valid].astype(np.float64)  # (n, C): every valid step of every sequence
    if len(flat) < 2:
        raise DataError(f"{name}: {len(flat)} step in all; expected at least 2 to standardise the features")
    std = flat.std(axis=0, ddof=1)
    z = (flat - flat.mean(axis=0)) / np.where(std > 0, std, 1.0)
    z[:, std == 0] = 0.0
    return z.T @ z / len(flat)


def correlation_difference(real, fake):
    """One draw of the score: sum over the lower triangle, diagonal included (as Diffusion-TS), of
    |corr(fake) - corr(real)|, divided by 10."""
    xr, lr_, xf, lf = paired(real, fake, "correlational_score")
    diff = _correlation(xf, lf, "correlational_score: fake") - _correlation(xr, lr_, "correlational_score: real")
    return float(np.abs(diff[np.tril_indices(diff.shape[0])]).sum() / 10.0)


def correlational_score(real, fake, draws=CORRELATION_FIFTHS, seed=0):
    """Diffusion-TS's correlational score (its metric notebook): ``draws`` times, draw a fifth of the real
    set's size from each set (indices with replacement, as its ``random_choice``) and take
    ``correlation_difference`` of the two draws; mean and std over the draws. 0 is best.

    Args:
        real, fake: sequence sets with the same C.
        draws: number of draws (Diffusion-TS: 5); each draws max(1, len(real) // 5) sequences per set.
        seed: seed of the draws (numpy RandomState).

    Returns:
        dict(mean=float, std=float, scores=list of floats).
    """
    xr, lr_, xf, lf = paired(real, fake, "correlational_score")
    if draws < 1:
        raise DataError(f"correlational_score: draws={draws}; expected at least 1")
    rng = np.random.RandomState([seed, 0xC0AA])
    size = max(1, len(xr) // 5)
    scores = []
    for _ in range(draws):
        ir, jf = rng.randint(0, len(xr), size), rng.randint(0, len(xf), size)
        scores.append(correlation_difference([xr[i, :lr_[i]] for i in ir], [xf[j, :lf[j]] for j in jf]))
    return dict(mean=float(np.mean(scores)), std=float(np.std(scores)), scores=[float(s) for s in scores])
