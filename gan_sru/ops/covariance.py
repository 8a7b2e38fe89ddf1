"""G's window covariance term: the joint second moments of k + 1 consecutive steps, in the data's whitened axes.

It compares every entry of the windows' covariance, weighting the directions along which real windows
barely vary as much as the others (entry-by-entry moment terms weigh them as little as the data varies).

From real windows v = (x_t, x_t-1, ..., x_t-k) (D = (k + 1) C values each, every step valid), the reference
is their mean mu and a whitening matrix W = V diag(max(lambda, floor x mean(lambda)))^(-1/2) of their
covariance's eigenvectors V and eigenvalues lambda (the floor keeps collinear or constant features from
being amplified without bound). For generated windows u = (v - mu) W, M = E[u u^T] is I when the mean and
the covariance both match, and the term is |M - I|_F^2 / D. The batch's estimate of M is noisy, and the
square of a noisy estimate is biased by its variance, whose gradient would favour lighter tails; the term
uses the unbiased product of two independent halves of the batch (sequences 0 .. B/2 - 1 and B/2 .. B - 1):
trace((M_a - I)(M_b - I)) / D, whose expectation is exactly |M - I|_F^2 / D.

The per-step whitening (`whitening="step"`, train.window_covariance_whitening: step) whitens each step of a
window alone, with the principal axes of the data's steps: W = I_(k+1) (x) P, P = V diag(lambda)^(-1/2) of the
steps' covariance (floored as above), mu the steps' mean repeated. Real windows then do not give I (the data's
own autocorrelation stays), so the term compares M with the real windows' own T = E[u u^T] instead:
trace((M_a - T)(M_b - T)) / D.

    mu, W, T = reference(x, m, lags)                # real x (N, L, C), mask m (N, L) -> (D,), (D, D), (D, D)
    loss = losses.window_covariance_loss(fake, mask, mu, W, lags, T)   # fake (L, B, C), mask (L, B) -> ()
"""
import numpy as np

FLOOR = 1e-3  # the smallest eigenvalue the whitening keeps, relative to the mean eigenvalue
MAX_WINDOWS = 200_000  # windows used for the reference (at random, seeded) from a larger set


def windows(x, m, lags):
    """The windows (x_t, x_t-1, ..., x_t-lags) of x (N, L, C) whose steps are all valid under m (N, L):
    (n, (lags + 1) C), the current step's features first."""
    N, L, C = x.shape
    if L <= lags:
        return np.zeros((0, (lags + 1) * C), x.dtype)
    parts = [x[:, lags - j:L - j] for j in range(lags + 1)]
    valid = np.prod([m[:, lags - j:L - j] for j in range(lags + 1)], axis=0) > 0
    return np.concatenate(parts, axis=2)[valid]


def sampled_windows(x, m, lags, need, seed, what):
    """`windows(x, m, lags)`, at most MAX_WINDOWS of them (at random, seeded); ValueError naming `what` when
    they are no more than `need`."""
    v = windows(x, m, lags)
    if len(v) <= need:
        raise ValueError(f"{what} needs more than {need} windows of {lags + 1} valid steps; the real sequences "
                         f"hold {len(v)}")
    if len(v) > MAX_WINDOWS:
        v = v[np.random.default_rng(seed).permutation(len(v))[:MAX_WINDOWS]]
    return v


def reference(x, m, lags=1, floor=FLOOR, seed=0, whitening="window"):
    """The mean mu (D,), the whitening matrix W (D, D) and the real windows' target T = E[u u^T] (D, D; the
    identity with whitening "window") of the real windows of x (N, L, C) with mask m (N, L). whitening:
    "window" (the windows' own covariance) or "step" (each step by the steps' covariance). Needs more windows
    than D."""
    if whitening not in ("window", "step"):
        raise ValueError(f"whitening {whitening!r}: expected 'window' or 'step'")
    x, m = np.asarray(x, np.float64), np.asarray(m)
    D = (lags + 1) * x.shape[2]
    v = sampled_windows(x, m, lags, D, seed, f"the window covariance term with {lags} lag(s)")
    if whitening == "window":
        mu, W = _whitening(v, floor)
        return mu, W, np.eye(D)
    step_mu, P = _whitening(x[m > 0], floor)
    mu, W = np.tile(step_mu, lags + 1), np.kron(np.eye(lags + 1), P)
    u = (v - mu) @ W
    return mu, W, u.T @ u / len(u)


def _whitening(v, floor):
    """The mean of the rows of v (n, D) and V diag(max(lambda, floor x mean(lambda)))^(-1/2) of their
    covariance."""
    mu = v.mean(axis=0)
    c = v - mu
    lam, vec = np.linalg.eigh(c.T @ c / len(c))
    lam = np.maximum(lam, floor * max(lam.mean(), 1e-12))
    return mu, vec / np.sqrt(lam)
