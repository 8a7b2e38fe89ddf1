"""G's step-profile term: at every position of the window, the samples' mean and spread along the data's
whitened axes are the data's.

The moment terms compare statistics pooled over the window's steps, or each sequence's own; none says where in the
window a value lies, and G's samples drift along the window where the data do not. Windows cut from one long series
are alike at every position; sequences that start at an event (a start-up, a session) are not, and the reference
keeps each position's own values.

From real sequences (`reference`): the mean mu and the whitening W = V diag(lambda)^(-1/2) of all their valid
steps (C features; an eigenvalue under FLOOR x the mean is raised to it), and at each position t the mean of
u = (x_t - mu) W and of u^2 over the sequences valid there. For generated u, with a_t, b_t those means over the
batch's first and second half of sequences less the reference's (both the first and the second moments, 2 C
values per position), the product

    sum_t w_t a_t . b_t / (2 C sum_t w_t)

is an unbiased estimate of the mean squared distance between the samples' profile and the data's (as
ops/predictor.py, the two halves' product removes the estimate's variance from the square). w_t is 1 where the
reference has at least MIN_COUNT sequences, else 0; a position that no sequence of a half reaches counts 0
there. G's term is its square root, floored like the predictor
term's.

    ref = reference(x, m)                        # real x (N, L, C), mask (N, L) -> StepProfile
    loss = step_profile_loss(fake, mask, ref)    # fake (L', B, C), mask (L', B), L' <= L -> ()
"""
from dataclasses import dataclass

import nnabla as nn
import nnabla.functions as F
import numpy as np

from .covariance import FLOOR

MAX_REFERENCE = 20000  # real sequences of a bucket the reference reads at most
MIN_COUNT = 4  # a position the reference holds fewer valid sequences at goes without the term


@dataclass(frozen=True)
class StepProfile:
    """mu (C,), whiten (C, C): the data's steps' mean and whitening; first, second (L, C): each position's mean
    of u and of u^2; weight (L,): 1 where at least MIN_COUNT sequences are valid, else 0."""
    mu: np.ndarray
    whiten: np.ndarray
    first: np.ndarray
    second: np.ndarray
    weight: np.ndarray


def reference(x, m, floor=FLOOR):
    """The step profile of real x (N, L, C) with mask m (N, L); needs more valid steps than features."""
    x, m = np.asarray(x, np.float64), np.asarray(m, np.float64)
    C = x.shape[2]
    steps = x[m > 0]
    if len(steps) <= C:
        raise ValueError(f"the step-profile term needs more than {C} valid steps; the real sequences hold "
                         f"{len(steps)}")
    mu = steps.mean(axis=0)
    lam, vec = np.linalg.eigh(np.cov(steps.T, bias=True).reshape(C, C))
    whiten = vec / np.sqrt(np.maximum(lam, floor * max(lam.mean(), 1e-12)))
    first, second, count = _position_moments(x, m, mu, whiten)
    return StepProfile(mu, whiten, first, second, (count >= MIN_COUNT).astype(np.float64))


def _position_moments(x, m, mu, whiten):
    """Each position's mean of u = (x - mu) whiten and of u^2 over the sequences valid there, (L, C) each, and
    their count (L,), for x (N, L, C) with mask m (N, L)."""
    u = (x - mu) @ whiten * m[:, :, None]
    count = m.sum(axis=0)
    n = np.maximum(count, 1.0)[:, None]
    return u.sum(axis=0) / n, (u * u).sum(axis=0) / n, count


def profile_distance(x, m, ref):
    """NumPy: the mean squared distance between the step profile of x (N, L', C) with mask m (N, L') and the
    reference's first L' positions (the whole set's means, no halves): what the term estimates."""
    x, m = np.asarray(x, np.float64), np.asarray(m, np.float64)
    L = x.shape[1]
    first, second, count = _position_moments(x, m, ref.mu, ref.whiten)
    d = np.concatenate([first - ref.first[:L], second - ref.second[:L]], axis=1)
    w = ref.weight[:L] * (count > 0)
    return float((w[:, None] * d * d).sum() / (d.shape[1] * max(w.sum(), 1.0)))


def step_profile_loss(fake, mask, ref):
    """G's term (this module's docstring): the square root of `step_profile_product` floored at 1e-4."""
    return F.pow_scalar(F.maximum_scalar(step_profile_product(fake, mask, ref), 1e-4), 0.5)


def step_profile_product(fake, mask, ref):
    """The unbiased two-halves estimate of `profile_distance` for fake (L, B, C), 0 at padded steps, with mask
    (L, B); L at most the reference's length, B >= 2."""
    L, B, C = fake.shape
    if L > len(ref.first) or B < 2:
        raise ValueError(f"the step-profile term needs 2 sequences and at most {len(ref.first)} steps; got "
                         f"{L} x {B}")
    W = ref.whiten.astype(np.float32)
    u = F.affine(F.reshape(fake, (L * B, C)), nn.Variable.from_numpy_array(W),
                 nn.Variable.from_numpy_array((-ref.mu @ ref.whiten).astype(np.float32)))
    m = F.reshape(mask, (L, B, 1))
    u = F.reshape(u, (L, B, C)) * m
    target = nn.Variable.from_numpy_array(np.concatenate([ref.first[:L], ref.second[:L]], axis=1).astype(np.float32))
    w = ref.weight[:L]
    half = B // 2

    def deviation(start, stop):
        part = F.slice(u, start=(0, start, 0), stop=(L, stop, C))
        count = F.sum(F.slice(m, start=(0, start, 0), stop=(L, stop, 1)), axis=1)  # (L, 1)
        moments = F.concatenate(F.sum(part, axis=1), F.sum(part * part, axis=1), axis=1)  # (L, 2C)
        present = F.minimum_scalar(count, 1.0)  # a position no sequence of this half reaches says nothing
        return (moments / F.maximum_scalar(count, 1.0) - target) * present * \
            nn.Variable.from_numpy_array(w[:, None].astype(np.float32))

    return F.sum(deviation(0, half) * deviation(half, 2 * half)) / float(2 * C * max(w.sum(), 1.0))
