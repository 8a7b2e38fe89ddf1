"""The numbers behind the evaluation pictures: PCA projection, t-SNE embedding and autocorrelation."""

import numpy as np

from gan_sru import DataError

from .common import as_padded, flatten_pair


def pca_projection(real, fake, n=2):
    """Project both sets onto the first ``n`` principal components of the real set.

    Sequences are flattened as in ``flatten_pair``; the mean and components come from the
    real set alone (numpy SVD). Each component's sign is fixed so that its largest-magnitude
    loading is positive.

    Returns:
        (real_proj ``(N_real, n)``, fake_proj ``(N_fake, n)``), float64.
    """
    x, y = flatten_pair(real, fake, "pca_projection", ("real", "fake"))
    if not 1 <= n <= min(x.shape):
        raise DataError(f"pca_projection: n={n}; expected 1..{min(x.shape)} (real set is {x.shape[0]} x {x.shape[1]})")
    mean = x.mean(axis=0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    comps = vt[:n]
    signs = np.sign(comps[np.arange(n), np.argmax(np.abs(comps), axis=1)])
    comps = comps * np.where(signs == 0, 1.0, signs)[:, None]
    return (x - mean) @ comps.T, (y - mean) @ comps.T


TSNE_MAX_POINTS = 500  # of each set: t-SNE's cost grows with the points; 2 x 500 take seconds on one core


def tsne_perplexity(n, perplexity=30.0):
    """The perplexity ``tsne_projection`` uses for n points: ``min(perplexity, (n - 1) / 3)``, at least 1."""
    return min(float(perplexity), max(1.0, (n - 1) / 3))


def tsne_projection(real, fake, seed=0, max_points=TSNE_MAX_POINTS, perplexity=30.0):
    """Embed both sets together in 2-D with t-SNE (scikit-learn's ``sklearn.manifold.TSNE``).

    At most ``max_points`` sequences of each set, drawn without replacement with ``seed`` and kept in their
    order, are flattened as in ``flatten_pair`` and embedded in one fit (t-SNE cannot place new points in an
    existing embedding, so a shared picture needs both sets at once): PCA initialisation, learning rate
    "auto", ``random_state=seed``, perplexity ``tsne_perplexity(n, perplexity)`` for n points in all (t-SNE
    needs fewer neighbours than points). The same inputs and seed give the same embedding.

    Returns:
        (real_emb ``(min(N_real, max_points), 2)``, fake_emb ``(min(N_fake, max_points), 2)``), float64; all
        zeros when every drawn sequence is the same (t-SNE's PCA start is undefined there).
    """
    from sklearn.manifold import TSNE

    if max_points < 1:
        raise DataError(f"tsne_projection: max_points={max_points}; expected at least 1")
    x, y = flatten_pair(real, fake, "tsne_projection", ("real", "fake"))
    rng = np.random.default_rng([seed, 0x75E])
    x, y = (a if len(a) <= max_points else a[np.sort(rng.choice(len(a), max_points, replace=False))] for a in (x, y))
    both = np.concatenate([x, y])
    if len(both) < 2 or np.all(both == both[0]):
        emb = np.zeros((len(both), 2))
    else:
        emb = TSNE(n_components=2, perplexity=tsne_perplexity(len(both), perplexity), init="pca",
                   learning_rate="auto", random_state=seed).fit_transform(both).astype(np.float64)
    return emb[:len(x)], emb[len(x):]


def autocorrelation(seqs, max_lag):
    """Mean autocorrelation function per feature.

    For each sequence and feature, ``r_k = sum_t (x_t - m)(x_{t+k} - m) / sum_t (x_t - m)^2``
    (the standard biased ACF estimator, m the sequence's own mean); the result averages
    ``r_k`` over sequences with ``L_i > k`` and non-constant values in that feature.

    Args:
        seqs: sequence set.
        max_lag: largest lag, ``0 <= max_lag < longest length``.

    Returns:
        float64 ``(max_lag + 1, C)``; row 0 is 1. NaN where no sequence contributes.
    """
    x, lengths = as_padded(seqs, "autocorrelation: seqs")
    N, L, C = x.shape
    if not 0 <= max_lag < L:
        raise DataError(f"autocorrelation: max_lag={max_lag}; expected 0..{L - 1} (longest sequence has {L} steps)")
    x = x.astype(np.float64)
    valid = (np.arange(L)[None, :] < lengths[:, None])[:, :, None]  # (N, L, 1)
    mean = x.sum(axis=1, keepdims=True) / lengths[:, None, None]
    xc = np.where(valid, x - mean, 0.0)
    denom = np.sum(xc ** 2, axis=1)  # (N, C)
    out = np.full((max_lag + 1, C), np.nan)
    for k in range(max_lag + 1):
        num = np.sum(xc[:, :L - k] * xc[:, k:], axis=1)  # padded steps are 0
        ok = (lengths[:, None] > k) & (denom > 1e-12 * np.maximum(1.0, np.sum(x ** 2, axis=1)))
        cnt = ok.sum(axis=0)
        r = np.where(ok, num / np.where(ok, denom, 1.0), 0.0)
        out[k] = np.where(cnt > 0, r.sum(axis=0) / np.maximum(cnt, 1), np.nan)
    return out
