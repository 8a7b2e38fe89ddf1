"""Context-FID (Jeha et al., ICLR 2022), as Diffusion-TS computes it: the Fréchet distance between TS2Vec
embeddings of real and generated sequences, the encoder trained on the real ones.

Mixed data: the encoder reads categorical features as their one-hot columns, numeric ones as they are.
"""
import numpy as np

from gan_sru import DataError

from .common import as_padded
from .ts2vec import default_iterations, embed, train_encoder

_STREAM = 0x7520  # the encoder's random stream, apart from the other metrics'


def frechet_distance(a, b):
    """Fréchet distance between Gaussians fitted to two embedding sets ``a`` (N, D) and ``b`` (M, D):
    ``|mu_a - mu_b|^2 + tr(S_a) + tr(S_b) - 2 tr sqrtm(S_a S_b)``, sample covariances (ddof 1).

    ``tr sqrtm(S_a S_b)`` is the sum of the square roots of the eigenvalues of S_a S_b, which are those
    of the symmetric ``S_a^1/2 S_b S_a^1/2``: two symmetric eigendecompositions give it. Diffusion-TS takes
    the same trace from ``scipy.linalg.sqrtm(S_a S_b)``, whose Schur decomposition took 2-5 s for the
    rank-deficient 320 x 320 products of small sets here; the tests check that both agree."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if len(a) < 2 or len(b) < 2:
        raise DataError(f"frechet_distance: {len(a)} and {len(b)} embeddings; expected at least 2 in each set "
                        "(a covariance needs two)")
    s_a, s_b = np.atleast_2d(np.cov(a, rowvar=False)), np.atleast_2d(np.cov(b, rowvar=False))
    w, v = np.linalg.eigh(s_a)
    root_a = (v * np.sqrt(np.maximum(w, 0.0))) @ v.T
    lam = np.linalg.eigvalsh(root_a @ s_b @ root_a)
    trace_sqrt = float(np.sum(np.sqrt(np.maximum(lam, 0.0))))  # rounding leaves tiny negative eigenvalues
    return float(np.sum((a.mean(axis=0) - b.mean(axis=0)) ** 2) + np.trace(s_a) + np.trace(s_b) - 2.0 * trace_sqrt)


def context_fids(real, others, iterations=None, seed=0, progress=True):
    """Context-FID of each set in ``others`` against ``real``, all with one encoder.

    A TS2Vec encoder (``gan_sru.metrics.ts2vec``: 320 output dimensions, batch 8, lr 1e-3) is trained on
    ``real``; every sequence is embedded by max-pooling its encoder output over the whole sequence; the
    score is ``frechet_distance(real embeddings, other embeddings)``. 0 is best. The encoder is NumPy
    (``gan_sru.metrics.ts2vec``) with its own RandomState: no nnabla or global RNG state is touched.

    Args:
        real: sequence set (list of ``(L_i, C)`` or ``(N, L, C)``), at least 2 sequences.
        others: list of sequence sets with the same C, at least 2 sequences each.
        iterations: encoder training steps; None: TS2Vec's default, 200 for data of at most 100,000
            values, else 600 (600 for 1000 sequences of 24 x 28).
        seed: seed of the encoder's initialisation and training.
        progress: tqdm bar over the training steps.

    Returns:
        list of floats, one per set of ``others``.
    """
    xr, lr_ = as_padded(real, "context_fid: real")
    sets = [_cut(xr, lr_)]
    for k, other in enumerate(others):
        x, lengths = as_padded(other, f"context_fid: others[{k}]")
        if x.shape[2] != xr.shape[2]:
            raise DataError(f"context_fid: others[{k}] has {x.shape[2]} features; expected {xr.shape[2]} like real")
        sets.append(_cut(x, lengths))
    train = [s for s in sets[0] if len(s) >= 2]
    if not train:
        raise DataError("context_fid: real has no sequence of 2 or more steps; expected some to train the "
                        "TS2Vec encoder on")
    if iterations is None:
        iterations = default_iterations(sum(s.size for s in train))
    encoder = train_encoder(train, int(iterations), np.random.RandomState([seed, _STREAM]), progress=progress)
    emb = [embed(encoder, s) for s in sets]
    return [frechet_distance(emb[0], e) for e in emb[1:]]


def _cut(x, lengths):
    """Padded (N, L, C) -> list of float32 (L_i, C)."""
    return [x[i, :n] for i, n in enumerate(lengths)]


def context_fid(real, fake, iterations=None, seed=0, progress=True):
    """Context-FID of ``fake`` against ``real`` (see ``context_fids``); a float, 0 is best."""
    return context_fids(real, [fake], iterations=iterations, seed=seed, progress=progress)[0]
