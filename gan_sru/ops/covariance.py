"""G's window covariance term: the joint second moments of k + 1 consecutive steps, in the data's whitened axes.

`train.moment_loss` matches the batch's feature means, stds, correlations and lag-1 autocorrelations entry by
entry. Met that way (benchmarks/window_covariance.py on the wide set, R1 config at 4300 steps, seeds 0 and 3),
the generated windows (x_t, x_t-1) still had 0.57 / 0.52 to 1.56 / 1.90 times the data's variance along some
directions in the real windows' whitened coordinates, where a held-out real set is 0.88-1.14 from the
training set. Those directions mix the data's minor axes: combinations of correlated features along which
real data barely varies, which entries of a correlation matrix weigh as little as the data varies along them.
A linear next-step predictor trained on the samples was 1.6% / 2.9% worse on real data than one trained on
real data (the GRU of TimeGAN's predictive score: 2.3% / 3.4%), so the term was built to see whether those
directions are what the scores still read.

Measured (docs/quality_log.md, twelfth session): at weight 0.1 the windows' mismatch fell four-fold
(|M - I|^2 / D at lag 1: 0.049-0.060 -> 0.012-0.013, held-out real 0.003), and neither the discriminative nor
the predictive score improved; at 0.3 and 1 the term held G back (at weight 1 G's loss was 18-22 at step 100,
1.4 without it: the whitening weighs the wide set's noise directions, 4% of the mean variance, 25 times). It
is off in every config.

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
trace((M_a - T)(M_b - T)) / D. Why: on the wide set the predictive score's gap is a regression that leans on
the samples' noise (benchmarks/predictive_gap.py --all-training: 40-83% of its systematic excess lies along
the windows' minor directions), and in the steps' whitened axes the samples' lagged correlations between the
minor axes and the rest are 2-4 times as far from the data's as a held-out set's (0.017-0.030 against
0.006-0.008 root mean square at lags 1-3); whitening whole windows instead also weighs the smooth factors'
step-to-step differences, which the noise does not need. Measured (fifteenth session, docs/quality_log.md):
at weight 0.1 over 6 steps it held G back (selection 0.40-0.45 at steps 1000-1250 where the config's runs
score 0.20-0.30, the samples' noise at 1.2-1.6 times the data's variance), so it is off as well.

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
