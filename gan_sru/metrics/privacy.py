"""Does a generated set give away who was in the training data? A membership-inference attack and
nearest-neighbour adversarial accuracy, both using the training / held-out split.

Sequences are compared as flat vectors: every sequence is cut to the shortest length among the sets compared
(variable-length data loses its tails here) and flattened to (length * C,); distances are Euclidean, in the
[0, 1] training scale.

- ``membership_inference``: a distance attack (as in Chen et al. 2020, GAN-Leaks, "full black-box"): each
  training and each held-out sequence is scored by its distance to the nearest generated sequence; the closer,
  the likelier a member. AUC of that score telling training (members) from held-out (non-members) sequences, and
  its advantage over guessing, AUC - 0.5, with a bootstrap interval. Floor: AUC 0.5 (the generated set says
  nothing about membership); a generator that returns its training sequences gives AUC near 1. Also the share
  of members flagged at a 1% false-positive rate (Carlini et al. 2022): a generator that copies a few training
  sequences out of many barely moves the AUC but exposes those few with certainty, which this rate shows.
- ``adversarial_accuracy``: nearest-neighbour adversarial accuracy (Yale et al. 2020). AA_TS = 1/2 (share of
  training sequences whose nearest generated one is farther than their nearest other training one + share of
  generated sequences whose nearest training one is farther than their nearest other generated one); AA_HS the
  same with held-out sequences in place of training ones. About 0.5 when the sets are indistinguishable by
  nearest neighbours; privacy loss = AA_HS - AA_TS, about 0 for a generator that does not copy, up to 0.5 for
  one that returns its training data.
"""
import numpy as np

from gan_sru import DataError

BOOTSTRAP = 200  # bootstrap resamples of the attack's AUC
INTERVAL = 0.95  # two-sided bootstrap interval
LOW_FPR = 0.01  # the false-positive rate at which the attack's true-positive rate is read
MIN_PER_SIDE = 10  # fewer training or held-out sequences than this: no attack (the interval would say nothing)


def flatten_common(*sets):
    """Each set as float64 (N_i, L * C), every sequence cut to the shortest length L over all sets.

    sets: lists of (L_i, C) arrays or (N, L, C) arrays, same C."""
    sets = [list(s) for s in sets]
    for i, s in enumerate(sets):
        if not s:
            raise DataError(f"privacy: set {i} has no sequences; expected at least one")
    widths = {np.shape(x)[1] for s in sets for x in s}
    if len(widths) != 1:
        raise DataError(f"privacy: sequences with {sorted(widths)} features; expected one feature count")
    length = min(len(x) for s in sets for x in s)
    return [np.stack([np.asarray(x[:length], np.float64).ravel() for x in s]) for s in sets]


def pairwise_distances(a, b):
    """(len(a), len(b)) Euclidean distances between the rows of a (N, D) and b (M, D)."""
    d2 = np.einsum("ij,ij->i", a, a)[:, None] + np.einsum("ij,ij->i", b, b)[None, :] - 2.0 * a @ b.T
    return np.sqrt(np.maximum(d2, 0.0))


def _nearest(a, b, same=False):
    """(len(a),) distance of each row of a to its nearest row of b; same: b is a, a row's own entry skipped."""
    d = pairwise_distances(a, b)
    if same:
        np.fill_diagonal(d, np.inf)
    return d.min(axis=1)


def auc(positive, negative):
    """Area under the ROC curve of scores, higher meaning positive: P(pos > neg) + P(pos == neg) / 2
    (the Mann-Whitney statistic, ties counted half)."""
    positive, negative = np.asarray(positive, np.float64), np.asarray(negative, np.float64)
    allv = np.concatenate([positive, negative])
    order = np.argsort(allv, kind="mergesort")
    ranks = np.empty(len(allv))
    sorted_v = allv[order]
    # average ranks of ties
    _, first, counts = np.unique(sorted_v, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    n_p, n_n = len(positive), len(negative)
    return float((ranks[:n_p].sum() - n_p * (n_p + 1) / 2.0) / (n_p * n_n))


def tpr_at_fpr(positive, negative, fpr=LOW_FPR):
    """(tpr, achieved fpr) at the threshold of the k-th highest negative score, k = max(1, floor(fpr * N)):
    scores strictly above it are flagged, so fewer than k negatives are. Higher scores mean positive."""
    negative = np.sort(np.asarray(negative, np.float64))
    k = max(1, int(np.floor(fpr * len(negative))))  # negatives allowed above the threshold, at least one
    threshold = negative[len(negative) - k]  # the k-th highest: strictly above it, fewer than k negatives
    return float(np.mean(np.asarray(positive) > threshold)), float(np.mean(negative > threshold))


def membership_inference(training, holdout, generated, seed=0, bootstrap=BOOTSTRAP):
    """Distance attack on membership: AUC of -(distance to the nearest generated sequence) telling training from
    held-out sequences.

    training, holdout, generated: lists of (L_i, C) arrays. The larger of training / held-out is subsampled to the
    smaller's size (a balanced attack, so AUC and advantage read alike for any split).
    Returns {"auc", "advantage": AUC - 0.5, "interval": [lo, hi] of the advantage (bootstrap over both sides),
    "tpr_at_low_fpr", "low_fpr": the share of members flagged where at most LOW_FPR of non-members are (its
    floor: about low_fpr), "n_members", "n_nonmembers", "n_generated", "floor": 0.0, "warning": None or why the
    interval is weak}, or None with fewer than 2 sequences on a side.
    """
    rng = np.random.default_rng([seed, 0x5EC])
    n = min(len(training), len(holdout))
    if n < 2:
        return None
    train = [training[i] for i in np.sort(rng.choice(len(training), n, replace=False))]
    held = [holdout[i] for i in np.sort(rng.choice(len(holdout), n, replace=False))]
    t, h, g = flatten_common(train, held, generated)
    member, nonmember = -_nearest(t, g), -_nearest(h, g)
    a = auc(member, nonmember)
    boots = np.array([auc(member[rng.integers(0, n, n)], nonmember[rng.integers(0, n, n)])
                      for _ in range(bootstrap)])
    tail = (1.0 - INTERVAL) / 2.0
    warning = None
    if n < MIN_PER_SIDE:
        warning = (f"{n} training and held-out sequences per side; at least {MIN_PER_SIDE} are needed for the "
                   "interval to mean anything")
    tpr, fpr = tpr_at_fpr(member, nonmember)
    return {"auc": a, "advantage": a - 0.5,
            "interval": [float(np.quantile(boots, tail) - 0.5), float(np.quantile(boots, 1 - tail) - 0.5)],
            "tpr_at_low_fpr": tpr, "low_fpr": fpr,
            "n_members": n, "n_nonmembers": n, "n_generated": len(generated), "floor": 0.0, "warning": warning}


def _aa(real, fake):
    """Nearest-neighbour adversarial accuracy of two equal-size flat sets (Yale et al. 2020, eq. 5)."""
    d_rf, d_fr = _nearest(real, fake), _nearest(fake, real)
    d_rr, d_ff = _nearest(real, real, same=True), _nearest(fake, fake, same=True)
    return 0.5 * (float(np.mean(d_rf > d_rr)) + float(np.mean(d_fr > d_ff)))


def adversarial_accuracy(training, holdout, generated, seed=0):
    """AA_TS (training vs generated), AA_HS (held-out vs generated) and privacy loss = AA_HS - AA_TS.

    All three sets are subsampled to one size n (the smallest), as the definition needs equal sizes.
    Returns {"aa_train_synthetic", "aa_holdout_synthetic", "privacy_loss", "n", "floor": 0.0} or None with
    fewer than 2 sequences in a set.
    """
    rng = np.random.default_rng([seed, 0xAA])
    n = min(len(training), len(holdout), len(generated))
    if n < 2:
        return None
    pick = [[s[i] for i in np.sort(rng.choice(len(s), n, replace=False))] for s in (training, holdout, generated)]
    t, h, g = flatten_common(*pick)
    aa_ts, aa_hs = _aa(t, g), _aa(h, g)
    return {"aa_train_synthetic": aa_ts, "aa_holdout_synthetic": aa_hs, "privacy_loss": aa_hs - aa_ts, "n": n,
            "floor": 0.0}


def privacy_scores(training, holdout, generated, seed=0):
    """The privacy section: {"membership_inference": ..., "adversarial_accuracy": ...} (each None where the
    held-out set is too small), with "note" saying what is missing."""
    out = {"membership_inference": membership_inference(training, holdout, generated, seed),
           "adversarial_accuracy": adversarial_accuracy(training, holdout, generated, seed), "note": None}
    if out["membership_inference"] is None:
        out["note"] = (f"{len(holdout)} held-out sequence(s); the attack and the adversarial accuracy need at least 2 "
                       f"(better {MIN_PER_SIDE}+)")
    return out
