"""Length buckets and time-major training batches: x (L, B, C) zero-padded, mask (L, B), lengths (B,)."""
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gan_sru import DataError

_BATCH_STREAM = 0xBA7C


@dataclass(frozen=True)
class BucketSpec:
    """Length buckets. boundaries: sorted tuple of ints; bucket k holds lengths in (boundaries[k-1], boundaries[k]]
    and its batches are padded to boundaries[k]."""
    boundaries: tuple

    def __post_init__(self):
        b = tuple(int(v) for v in self.boundaries)
        if not b or list(b) != sorted(set(b)) or b[0] < 1:
            raise ValueError(f"bucket boundaries must be increasing positive integers, got {self.boundaries}")
        object.__setattr__(self, "boundaries", b)

    @classmethod
    def from_lengths(cls, lengths, num_buckets):
        """Boundaries at the 1/k, 2/k, ... quantiles of `lengths` (deduplicated), the longest length last.
        Build it from every sequence's length so that any subset fits."""
        lengths = np.asarray(lengths)
        quantiles = [np.quantile(lengths, k / num_buckets, method="higher") for k in range(1, num_buckets)]
        return cls(tuple(sorted({int(q) for q in quantiles} | {int(lengths.max())})))

    @property
    def num_buckets(self):
        return len(self.boundaries)

    def buckets_of(self, lengths):
        """(N,) lengths -> (N,) bucket indices (the first boundary >= length)."""
        lengths = np.asarray(lengths)
        index = np.searchsorted(self.boundaries, lengths, side="left")
        if np.any(index == len(self.boundaries)):
            longest = int(lengths.max())
            raise DataError(f"sequence length {longest} exceeds the longest bucket ({self.boundaries[-1]})")
        return index

    def to_dict(self):
        return {"boundaries": list(self.boundaries)}

    @classmethod
    def from_dict(cls, d):
        return cls(tuple(d["boundaries"]))


class Batch(NamedTuple):
    """x: float32 (L, B, C) time-major, zero-padded; mask: float32 (L, B) 1 valid / 0 pad;
    lengths: int64 (B,); bucket: index of the bucket whose boundary is L; attrs: float32 (B, W) the encoded
    attributes of a conditional dataset, else None."""
    x: np.ndarray
    mask: np.ndarray
    lengths: np.ndarray
    bucket: int
    attrs: np.ndarray = None


def pad_batch(sequences, length=None):
    """List of B arrays (L_i, C) -> x (L, B, C) float32 zero-padded on the right, mask (L, B), lengths (B,).
    L = `length`, or the longest sequence."""
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    length = int(lengths.max()) if length is None else length
    x = np.zeros((length, len(sequences), sequences[0].shape[1]), dtype=np.float32)
    mask = np.zeros((length, len(sequences)), dtype=np.float32)
    for j, s in enumerate(sequences):
        x[:len(s), j] = s
        mask[:len(s), j] = 1.0
    return x, mask, lengths


def sample_batch(dataset, spec, batch_size, seed, step, shard=(0, 1)):
    """A training batch; a pure function of (seed, step).

    Picks a bucket with probability proportional to its number of sequences, then batch_size of its
    sequences (with replacement only when the bucket holds fewer), padded to the bucket's boundary.
    shard=(rank, world_size): only that rank's contiguous slice of those batch_size sequences (the global
    batch is drawn the same on every rank, so the shards are disjoint and together make the global batch).
    """
    if len(dataset) == 0:
        raise ValueError("sample_batch: the dataset holds no sequences")
    rng = np.random.default_rng([seed, step, _BATCH_STREAM])
    buckets = spec.buckets_of(dataset.lengths)
    counts = np.bincount(buckets, minlength=spec.num_buckets)
    bucket = int(rng.choice(spec.num_buckets, p=counts / counts.sum()))
    members = np.flatnonzero(buckets == bucket)
    picked = rng.choice(members, size=batch_size, replace=len(members) < batch_size)
    rank, size = shard
    if size > 1:
        if batch_size % size:
            raise ValueError(f"sample_batch: batch_size {batch_size} is not divisible by the world size {size}")
        local = batch_size // size
        picked = picked[rank * local:(rank + 1) * local]
    x, mask, lengths = pad_batch([dataset.sequences[i] for i in picked], spec.boundaries[bucket])
    attrs = getattr(dataset, "attributes", None)
    return Batch(x, mask, lengths, bucket, None if attrs is None else attrs[picked])
