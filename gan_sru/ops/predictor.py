"""G's predictor term: the samples' best linear next-step predictor is the data's.

TimeGAN's predictive score trains a regressor on generated sequences and tests it on real ones; a next-step
regression reads only some combinations of a window's covariance, and this term compares exactly those.

From real windows (x_t, ..., x_t-k) -> x_t+1 (`reference`, k = `lags`): the whitened principal axes of the
windows, P = V_K diag(lambda_K)^(-1/2) over the K eigen-directions of their covariance above `floor` x the mean
eigenvalue (the rest, collinear or constant combinations, are left out: on them an exact regression would
amplify the samples' least deviation without bound), the least-squares regression of the next step on those
axes, x_t+1 - ybar = (z - zbar) A + e with A = P P^T E[(z - zbar) (x_t+1 - ybar)^T], and its residuals' std
s (C,). Real windows satisfy the regression's normal equations exactly: the residual e is uncorrelated with
each axis and has mean 0. For generated windows, with u = ((z - zbar) P, 1) and r = e / s (their residuals
under the data's regression, each in its real std), the product

    |E[u r^T]|_F^2 / C

is 0 when the samples' own regression (with infinitely many samples) is the data's, and to first order it
is the mean over the C targets of the relative excess squared error that the samples' regression has on the
data: its weights are off by Sigma^-1 E[z e_c], whose excess error is E[z e_c]^T Sigma^-1 E[z e_c] =
|E[u e_c]|^2 (the intercept's by E[e_c]^2), with the samples' window covariance taken for the data's.
The batch's estimate of E[u r^T] is noisy and the square of a noisy estimate is biased by its
variance; like ops/covariance.py the product multiplies the estimates from the two halves of the batch, which
is unbiased (predictor_product).

G's term is the square root of that estimate (`predictor_loss`): the square is large far from the data and
flat near it.

    ref = reference(x, m, lags)                      # real x (N, L, C), mask m (N, L) -> PredictorReference
    loss = predictor_loss(fake, mask, ref)           # fake (L, B, C), mask (L, B) -> ()
"""
from dataclasses import dataclass

import nnabla as nn
import nnabla.functions as F
import numpy as np

from .covariance import FLOOR, sampled_windows, windows
from .matmul import matmul


@dataclass(frozen=True)
class PredictorReference:
    """lags: the window's past steps besides the current one; z_mean ((lags + 1) C,), y_mean (C,): the
    windows' and the next steps' means; weights ((lags + 1) C, C): A; scale (C,): the residuals' std;
    whiten ((lags + 1) C, K): P."""
    lags: int
    z_mean: np.ndarray
    y_mean: np.ndarray
    weights: np.ndarray
    scale: np.ndarray
    whiten: np.ndarray


def reference(x, m, lags=5, floor=FLOOR, seed=0):
    """The data's next-step regression on windows of `lags` + 1 steps, from real x (N, L, C) with mask m (N, L).
    Needs more windows (of lags + 2 valid steps) than a window has values."""
    x, m = np.asarray(x, np.float64), np.asarray(m)
    C = x.shape[2]
    # (x_t+1, x_t, ..., x_t-lags)
    v = sampled_windows(x, m, lags + 1, (lags + 1) * C, seed, f"the predictor term with {lags} lag(s)")
    y, z = v[:, :C], v[:, C:]
    z_mean, y_mean = z.mean(axis=0), y.mean(axis=0)
    zc, yc = z - z_mean, y - y_mean
    lam, vec = np.linalg.eigh(zc.T @ zc / len(zc))
    keep = lam > floor * max(lam.mean(), 1e-12)
    whiten = vec[:, keep] / np.sqrt(lam[keep])
    A = whiten @ (whiten.T @ (zc.T @ yc) / len(zc))
    e = yc - zc @ A
    std = e.std(axis=0)
    scale = np.maximum(std, np.sqrt(floor) * max(std.mean(), 1e-6))  # a feature the window predicts exactly
    return PredictorReference(lags, z_mean, y_mean, A, scale, whiten)


def normal_equations(x, m, ref):
    """E[u r^T] ((lags + 1) C + 1, C) of the windows of x (N, L, C) with mask m (N, L), as the term reads them
    (NumPy; the last row is the residuals' mean): 0 for the data the reference came from."""
    C = np.asarray(x).shape[2]
    v = windows(np.asarray(x, np.float64), m, ref.lags + 1)
    y, z = v[:, :C], v[:, C:]
    zc = z - ref.z_mean
    r = (y - ref.y_mean - zc @ ref.weights) / ref.scale
    u = np.c_[zc @ ref.whiten, np.ones(len(zc))]
    return u.T @ r / max(len(u), 1)


def predictor_loss(fake, mask, ref):
    """G's term on the samples' next-step regression (this module's docstring): the square root of
    `predictor_product` floored at 1e-4 (its gradient does not fade as the samples near the data's regression)."""
    return F.pow_scalar(F.maximum_scalar(predictor_product(fake, mask, ref), 1e-4), 0.5)


def predictor_product(fake, mask, ref):
    """The square of G's predictor term (this module's docstring: why, and how the `PredictorReference` ref is
    made from real sequences): with each generated window z = (x_t, ..., x_t-lags) whose steps and next step are
    all valid, u = ((z - z_mean) whiten, 1) and r = (x_t+1 - y_mean - (z - z_mean) weights) / scale, and N_a,
    N_b the mean of u r^T over the windows of the batch's first and second half of sequences, sum(N_a * N_b) /
    C: an unbiased estimate of |E[u r^T]|_F^2 / C. fake (L, B, C), 0 at padded steps; mask (L, B); L > lags + 1,
    B >= 2."""
    L, B, C = fake.shape
    lags = ref.lags
    if L <= lags + 1 or B < 2:
        raise ValueError(f"the predictor term needs more than {lags + 1} steps and 2 sequences; got {L} x {B}")
    n, K = L - lags - 1, ref.whiten.shape[1] + 1
    # (x_t+1, x_t, ..., x_t-lags) of every t, and u, r of each in one affine map (its bias holds the means and
    # u's constant; nnabla's broadcasting arithmetic costs more than the map itself)
    parts = [F.slice(fake, start=(lags + 1 - j, 0, 0), stop=(L - j, B, C)) for j in range(lags + 2)]
    w = F.reshape(F.concatenate(*parts, axis=2), (n * B, (lags + 2) * C))
    inv = 1.0 / ref.scale
    M = np.zeros(((lags + 2) * C, K + C))
    M[C:, :K - 1] = ref.whiten
    M[:C, K:] = np.diag(inv)
    M[C:, K:] = -ref.weights * inv
    bias = np.concatenate([-ref.z_mean @ ref.whiten, [1.0], (ref.z_mean @ ref.weights - ref.y_mean) * inv])
    ur = matmul(w, nn.Variable.from_numpy_array(M.astype(np.float32)),
                nn.Variable.from_numpy_array(bias.astype(np.float32)))
    valid = F.slice(mask, start=(lags + 1, 0), stop=(L, B))
    for j in range(1, lags + 2):
        valid = valid * F.slice(mask, start=(lags + 1 - j, 0), stop=(L - j, B))
    u = F.reshape(F.slice(ur, start=(0, 0), stop=(n * B, K)), (n, B, K))
    r = F.reshape(F.slice(ur, start=(0, K), stop=(n * B, K + C)) * F.reshape(valid, (n * B, 1)), (n, B, C))
    half = B // 2

    def moments(start, stop):
        a = F.reshape(F.slice(u, start=(0, start, 0), stop=(n, stop, K)), (1, n * (stop - start), K))
        b = F.reshape(F.slice(r, start=(0, start, 0), stop=(n, stop, C)), (1, n * (stop - start), C))
        count = F.maximum_scalar(F.sum(F.slice(valid, start=(0, start), stop=(n, stop))), 1.0)
        return F.reshape(F.batch_matmul(a, b, transpose_a=True), (K, C)) / F.reshape(count, (1, 1))

    return F.sum(moments(0, half) * moments(half, 2 * half)) / float(C)
