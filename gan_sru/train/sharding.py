"""Sharding a global batch over the ranks, and packing many arrays into one flat buffer for one collective."""
import numpy as np

from gan_sru import ConfigError

from .rank_errors import on_every_rank


def pack(arrays, extras, out):
    """Copy `arrays` (any shapes), then the scalars `extras`, into the flat float32 buffer `out`, in order.
    `out` holds exactly sum(a.size) + len(extras) elements."""
    offset = 0
    for a in arrays:
        out[offset:offset + a.size] = np.asarray(a, np.float32).reshape(-1)
        offset += a.size
    if offset + len(extras) != out.size:
        raise ValueError(f"pack: {offset} array elements + {len(extras)} extras do not fill a buffer of {out.size}")
    out[offset:] = extras


def unpack(buffer, shapes):
    """The inverse of `pack`: (views of `buffer` reshaped to `shapes`, the remaining scalars as floats)."""
    views, offset = [], 0
    for shape in shapes:
        n = int(np.prod(shape, dtype=np.int64))
        views.append(buffer[offset:offset + n].reshape(shape))
        offset += n
    return views, [float(x) for x in buffer[offset:]]


def shard_slice(batch_size, rank, size):
    """This rank's contiguous slice of a global batch; ConfigError unless `size` divides `batch_size`
    (the losses are batch means: averaging per-rank means is the global mean only for equal shards)."""
    if batch_size % size:
        raise on_every_rank(ConfigError(
            f"train.batch_size {batch_size} is not divisible by the world size {size}: the batch size is the "
            f"global batch, split evenly over the ranks; use a multiple of {size} (e.g. "
            f"{size * max(1, round(batch_size / size))}) or another number of processes"))
    local = batch_size // size
    return slice(rank * local, (rank + 1) * local)


def shard_arrays(arrays, local_shapes, rank):
    """{name: global array} -> {name: this rank's slice}: along the one axis where the global shape and
    `local_shapes[name]` differ (the batch axis), the rank-th block of that axis's local length."""
    out = {}
    for name, a in arrays.items():
        local = tuple(local_shapes[name])
        axes = [i for i, (g, n) in enumerate(zip(a.shape, local)) if g != n]
        if not axes:  # world of one
            out[name] = a
            continue
        axis, n = axes[0], local[axes[0]]
        index = [slice(None)] * a.ndim
        index[axis] = slice(rank * n, (rank + 1) * n)
        out[name] = np.ascontiguousarray(a[tuple(index)])
    return out
