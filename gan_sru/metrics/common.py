"""Shared pieces of the metrics: sequence sets as padded arrays, batches and splits of the learned scores."""
import numpy as np

from gan_sru import DataError

LEARNING_RATE = 1e-2  # TimeGAN uses Adam's 1e-3 with 2000 / 5000 iterations
EVAL_BATCH = 512


# ----------------------------------------------------------------------------- input

def as_padded(seqs, name="seqs"):
    """Validate a sequence set and pad it on the right with zeros.

    Args:
        seqs: list of float arrays ``(L_i, C)`` or one ``(N, L, C)`` array.
        name: how error messages call this argument.

    Returns:
        x: float32 ``(N, L_max, C)``, zero after each sequence's end.
        lengths: int64 ``(N,)``, each >= 1.

    Raises:
        gan_sru.DataError: empty set, wrong rank, mixed feature counts, empty or
            non-finite sequences.
    """
    if isinstance(seqs, np.ndarray):
        if seqs.ndim != 3:
            raise DataError(f"{name}: array of shape {seqs.shape}; expected (N, L, C) or a list of (L_i, C) arrays")
        seqs = list(seqs)
    seqs = list(seqs)
    if not seqs:
        raise DataError(f"{name}: no sequences; expected at least one (L_i, C) array")
    arrays = []
    for i, s in enumerate(seqs):
        a = np.asarray(s, dtype=np.float32)
        if a.ndim != 2:
            raise DataError(f"{name}[{i}]: shape {a.shape}; expected (L_i, C)")
        if a.shape[0] < 1 or a.shape[1] < 1:
            raise DataError(f"{name}[{i}]: shape {a.shape}; expected at least one step and one feature")
        if arrays and a.shape[1] != arrays[0].shape[1]:
            raise DataError(f"{name}[{i}]: {a.shape[1]} features; expected {arrays[0].shape[1]} like {name}[0]")
        if not np.all(np.isfinite(a)):
            t, c = np.argwhere(~np.isfinite(a))[0]
            raise DataError(f"{name}[{i}]: value {a[t, c]} at step {t}, feature {c}; expected finite values")
        arrays.append(a)
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    x = np.zeros((len(arrays), int(lengths.max()), arrays[0].shape[1]), np.float32)
    for i, a in enumerate(arrays):
        x[i, :len(a)] = a
    return x, lengths


def paired(a, b, fn, names=("real", "fake")):
    """Pad two sets to one common length; check they have the same feature count."""
    xa, la = as_padded(a, f"{fn}: {names[0]}")
    xb, lb = as_padded(b, f"{fn}: {names[1]}")
    if xa.shape[2] != xb.shape[2]:
        raise DataError(f"{fn}: {names[1]} has {xb.shape[2]} features; expected {xa.shape[2]} like {names[0]}")
    L = max(xa.shape[1], xb.shape[1])
    xa = np.pad(xa, ((0, 0), (0, L - xa.shape[1]), (0, 0)))
    xb = np.pad(xb, ((0, 0), (0, L - xb.shape[1]), (0, 0)))
    return xa, la, xb, lb


def _resample(x, lengths, length):
    """Linearly resample each padded sequence's valid part to ``length`` steps: (N, length, C)."""
    N, _, C = x.shape
    out = np.empty((N, length, C), np.float64)
    grid = np.linspace(0.0, 1.0, length)
    for i, n in enumerate(lengths):
        src = np.linspace(0.0, 1.0, n) if n > 1 else np.zeros(1)
        for c in range(C):
            out[i, :, c] = np.interp(grid, src, x[i, :n, c])
    return out


def flatten_pair(a, b, fn="flatten_pair", names=("a", "b")):
    """Two sets as matrices ``(N_a, L*C)``, ``(N_b, L*C)`` (float64) of one common width.

    Equal lengths everywhere: each sequence is flattened as it is. Otherwise every
    sequence is linearly resampled over its own duration to the longest length of
    both sets before flattening, so the comparison is of shapes and ignores length.
    """
    xa, la, xb, lb = paired(a, b, fn, names)
    L = xa.shape[1]
    if np.all(la == L) and np.all(lb == L):
        return xa.reshape(len(xa), -1).astype(np.float64), xb.reshape(len(xb), -1).astype(np.float64)
    ra, rb = _resample(xa, la, L), _resample(xb, lb, L)
    return ra.reshape(len(ra), -1), rb.reshape(len(rb), -1)


# ----------------------------------------------------------------------------- learned scores (GRU in gru.py)

def default_hidden(num_features):
    # Twice TimeGAN's C/2, at least 4: with 300 iterations instead of 2000, a width-3 GRU scored
    # two close sets of 5-feature sines 0.15-0.26 across repeats, a width-6 GRU 0.27-0.28.
    return max(4, 2 * ((num_features + 1) // 2))


def batch_index(rng, n, batch_size):
    """A batch of row indices: without replacement when the set is large enough."""
    if n >= batch_size:
        return rng.permutation(n)[:batch_size]
    return rng.randint(0, n, batch_size)


def split_80_20(rng, n, what):
    if n < 2:
        raise DataError(f"discriminative_score: {what} has {n} sequence; expected at least 2 for a train/test split")
    perm = rng.permutation(n)
    n_train = min(n - 1, max(1, int(round(0.8 * n))))
    return perm[:n_train], perm[n_train:]

