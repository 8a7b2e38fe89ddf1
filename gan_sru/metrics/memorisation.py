"""Does the generator copy its training data? Each sequence's distance to its nearest training sequence.

A generator that reproduces training sequences scores well on every quality score: its samples are real data.
The check (the distance to the closest record of tabular synthetic-data tools, for sequences): for each
generated sequence the RMS distance, over its steps and features, to the nearest training sequence; the same
for held-out real sequences, which the generator never saw, is the floor. Generated sequences much closer to
the training data than held-out ones are (a median ratio well below 1, or many closer than nearly every held-out
one) are copies or near-copies.
"""
import numpy as np

from gan_sru import DataError

CHUNK = 256  # queries per distance block
REF_CHUNK = 4096  # references stacked at a time: memory stays bounded for large training sets
CLOSE_QUANTILE = 0.05  # "close": nearer than this quantile of the held-out sequences' distances


def nearest_distances(queries, references):
    """(len(queries),) float64: each query's RMS distance (over steps and features) to its nearest reference.

    queries, references: lists of (L_i, C) arrays, same C. A query of length l is compared with the references of
    at least l steps, cut to l; where no reference is that long, the query is cut to the longest reference length.
    """
    if not len(queries) or not len(references):
        raise DataError(f"nearest_distances: {len(queries)} queries and {len(references)} references; expected at "
                        "least one of each")
    ref_len = np.array([len(r) for r in references])
    out = np.empty(len(queries))
    q_len = np.array([len(q) for q in queries])
    for length in np.unique(np.minimum(q_len, ref_len.max())):
        idx = np.flatnonzero(np.minimum(q_len, ref_len.max()) == length)
        qs = np.stack([np.asarray(queries[i][:length], np.float64).ravel() for i in idx])
        q2 = np.einsum("ij,ij->i", qs, qs)
        best = np.full(len(idx), np.inf)
        usable = np.flatnonzero(ref_len >= length)
        for r0 in range(0, len(usable), REF_CHUNK):
            refs = np.stack([np.asarray(references[j][:length], np.float64).ravel()
                             for j in usable[r0:r0 + REF_CHUNK]])
            if qs.shape[1] != refs.shape[1]:
                raise DataError(f"nearest_distances: queries have {qs.shape[1] // length} features, references "
                                f"{refs.shape[1] // length}; expected the same")
            r2 = np.einsum("ij,ij->i", refs, refs)
            for s in range(0, len(idx), CHUNK):
                d2 = q2[s:s + CHUNK, None] + r2[None, :] - 2.0 * qs[s:s + CHUNK] @ refs.T
                best[s:s + CHUNK] = np.minimum(best[s:s + CHUNK], d2.min(axis=1))
        out[idx] = np.sqrt(np.maximum(best, 0.0) / qs.shape[1])
    return out


def memorisation(training, generated, holdout):
    """Nearest-training distances of the generated and held-out sequences, and what they say.

    Returns {"generated": {"median", "q05"}, "holdout": {"median", "q05"} or None, "median_ratio":
    generated / held-out median (1: as far from the training data as unseen real data; well below 1: copying),
    "closer_than_holdout_q05": share of generated sequences nearer than the held-out 5% quantile (about 0.05
    for a generator that does not copy), "distances": {"generated", "holdout"} lists}. Without at least 2
    held-out sequences the held-out parts and ratios are None.
    """
    gen = nearest_distances(generated, training)
    out = {"generated": {"median": float(np.median(gen)), "q05": float(np.quantile(gen, CLOSE_QUANTILE))},
           "holdout": None, "median_ratio": None, "closer_than_holdout_q05": None,
           "distances": {"generated": gen.tolist(), "holdout": None}}
    if len(holdout) >= 2:
        held = nearest_distances(holdout, training)
        q05 = float(np.quantile(held, CLOSE_QUANTILE))
        out.update(holdout={"median": float(np.median(held)), "q05": q05},
                   median_ratio=float(np.median(gen) / max(np.median(held), 1e-12)),
                   closer_than_holdout_q05=float(np.mean(gen < q05)))
        out["distances"]["holdout"] = held.tolist()
    return out
