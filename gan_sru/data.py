"""Sequence data: built-in sines, user files (.npy/.npz/.csv), min-max scaling, length buckets, batches.

A sequence is an array (L_i, C): L_i time steps of C features. A batch is time-major:
x (L, B, C) float32 padded on the right with zeros to its bucket's length L, mask (L, B) float32
(1 valid, 0 padding), lengths (B,) int64.

    ds = load_dataset(cfg["data"], cfg["seed"])          # scaled to [0, 1]
    train, holdout = ds.split(cfg["data"]["holdout_fraction"], cfg["seed"])
    spec = BucketSpec.from_lengths(ds.lengths, cfg["data"]["num_buckets"])
    batch = sample_batch(train, spec, batch_size, seed, step)

Unusable data files raise gan_sru.DataError naming the file and the first offending place.
"""
import csv
import datetime
import io
import os
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gan_sru import DataError
from gan_sru.files import atomic_write

# Mixed into RNG seeds so that the data, the split and the batches draw independent streams.
_SINES_STREAM, _SPLIT_STREAM, _BATCH_STREAM = 0x5135, 0x5917, 0xBA7C
SUFFIXES = (".npy", ".npz", ".csv")


# ---------------------------------------------------------------- built-in data

def make_sines(num_sequences, seq_len, num_features, seed, min_len=None):
    """TimeGAN's sine data: x_t = sin(freq * t + phase), freq and phase ~ U(0, 0.1) per sequence and feature.

    Returns a list of num_sequences float64 arrays (L_i, num_features), values in [-1, 1], not scaled.
    L_i = seq_len, or drawn uniformly from {min_len..seq_len} when min_len is given (each such sequence
    is a prefix of the fixed-length sequence with the same seed). Deterministic in `seed`.
    """
    rng = np.random.default_rng([seed, _SINES_STREAM])
    freq = rng.uniform(0, 0.1, size=(num_sequences, 1, num_features))
    phase = rng.uniform(0, 0.1, size=(num_sequences, 1, num_features))
    t = np.arange(seq_len, dtype=np.float64)[None, :, None]
    x = np.sin(freq * t + phase)  # (N, L, C)
    if min_len is None:
        return list(x)
    lengths = rng.integers(min_len, seq_len + 1, size=num_sequences)
    return [x[i, :n] for i, n in enumerate(lengths)]


# ---------------------------------------------------------------- scaling

class MinMaxScaler:
    """Per-feature min-max scaling to [0, 1]: y = (x - min) / (max - min); a constant feature maps to 0.

    Works on any array whose last axis holds the C features: (L, C), (N, L, C), (L, B, C).
    """

    def __init__(self, data_min=None, data_max=None):
        self.min = None if data_min is None else np.asarray(data_min, dtype=np.float64)
        self.max = None if data_max is None else np.asarray(data_max, dtype=np.float64)

    def fit(self, sequences):
        """Fit min and max of each feature over all steps of all sequences (list of (L_i, C))."""
        self.min = np.min([np.min(s, axis=0) for s in sequences], axis=0).astype(np.float64)
        self.max = np.max([np.max(s, axis=0) for s in sequences], axis=0).astype(np.float64)
        return self

    @property
    def scale(self):
        """(C,) max - min, with 1 where a feature is constant (so nothing divides by zero)."""
        span = self.max - self.min
        return np.where(span > 0, span, 1.0)

    def transform(self, a):
        """Scale to [0, 1] (on the fitted data). Float input keeps its dtype; other input gives float64."""
        a = np.asarray(a)
        return ((a - self.min) / self.scale).astype(_float_dtype(a), copy=False)

    def inverse(self, a):
        """Map scaled values back to the data's units."""
        a = np.asarray(a)
        return (a * self.scale + self.min).astype(_float_dtype(a), copy=False)

    def to_dict(self):
        """Plain lists, for JSON."""
        return {"min": self.min.tolist(), "max": self.max.tolist()}

    @classmethod
    def from_dict(cls, d):
        if len(d["min"]) != len(d["max"]):
            raise ValueError(f"scaler: {len(d['min'])} minima but {len(d['max'])} maxima")
        return cls(d["min"], d["max"])


def _float_dtype(a):
    return a.dtype if a.dtype.kind == "f" else np.float64


# ---------------------------------------------------------------- datasets

class Dataset:
    """N sequences scaled to [0, 1].

    sequences: list of float32 arrays (L_i, C); lengths: int64 (N,); num_features: C;
    scaler: the MinMaxScaler that maps data units to [0, 1]; source: 'sines', 'sines_varlen' or the file path.
    """

    def __init__(self, sequences, scaler, source, num_features=None):
        self.sequences = sequences
        self.lengths = np.array([len(s) for s in sequences], dtype=np.int64)
        self.num_features = int(num_features if num_features is not None else sequences[0].shape[1])
        self.scaler = scaler
        self.source = source

    def __len__(self):
        return len(self.sequences)

    def subset(self, indices):
        """The sequences at `indices`, same scaler and source."""
        return Dataset([self.sequences[i] for i in indices], self.scaler, self.source, self.num_features)

    def split(self, holdout_fraction, seed):
        """Deterministic random split -> (train, holdout). At least one sequence stays in train;
        a positive fraction holds out at least one sequence when there are two or more."""
        if not 0 <= holdout_fraction < 1:
            raise ValueError(f"holdout_fraction must be in [0, 1), got {holdout_fraction}")
        n = len(self)
        n_hold = round(n * holdout_fraction)
        if holdout_fraction > 0:
            n_hold = max(n_hold, 1)
        n_hold = max(0, min(n_hold, n - 1))
        order = np.random.default_rng([seed, _SPLIT_STREAM]).permutation(n)
        return self.subset(np.sort(order[n_hold:])), self.subset(np.sort(order[:n_hold]))


def load_dataset(data_cfg, seed):
    """The dataset that the `data` section of a resolved config describes, scaled to [0, 1]."""
    source = data_cfg["source"]
    if source in ("sines", "sines_varlen"):
        min_len = data_cfg["min_len"] if source == "sines_varlen" else None
        raw = make_sines(data_cfg["num_sequences"], data_cfg["seq_len"], data_cfg["num_features"], seed, min_len)
        name = source
    else:
        name = str(data_cfg["path"])
        raw = read_sequences(name, data_cfg["csv_id_column"], data_cfg["csv_time_column"],
                             data_cfg["csv_feature_columns"])
    scaler = MinMaxScaler().fit(raw)
    with np.errstate(over="ignore", invalid="ignore"):
        sequences = [scaler.transform(s).astype(np.float32) for s in raw]
    for i, s in enumerate(sequences):
        if not np.all(np.isfinite(s)):  # only when max - min overflows float64
            raise DataError(f"{name}: sequence {i}: values span a range too wide to scale to [0, 1] "
                            f"(min {scaler.min.tolist()}, max {scaler.max.tolist()})")
    if source == "file" and data_cfg.get("window"):
        sequences = make_windows(sequences, data_cfg["window"], data_cfg.get("window_stride", 1))
    return Dataset(sequences, scaler, name)


def make_windows(sequences, window, stride=1):
    """Cut each (L_i, C) sequence into windows (window, C) starting every `stride` steps.
    A sequence shorter than `window` is kept whole."""
    out = []
    for s in sequences:
        if len(s) <= window:
            out.append(s)
        else:
            out.extend(s[start:start + window] for start in range(0, len(s) - window + 1, stride))
    return out


# ---------------------------------------------------------------- reading files

def read_sequences(path, id_column="id", time_column="time", feature_columns=None):
    """Read sequences from a .npy, .npz or long-format .csv file, unscaled.

    .npy: an (N, L, C) numeric array, or a 1-D object array of (L_i, C) arrays (unpickled: trusted files only).
    .npz: the array named 'data' or 'sequences', else the first; with a 'lengths' (N,) array beside
          'data'/'sequences', sequence i is data[i, :lengths[i]].
    .csv: a header row, then one row per time step: id column, time column (numbers or ISO dates),
          feature columns (feature_columns, or all other columns). Rows are sorted by time within a sequence.
    Returns a list of float64 arrays (L_i, C). Raises DataError naming the file and the first bad place.
    """
    path = str(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in SUFFIXES:
        raise DataError(f"{path}: unsupported file type {suffix or '(none)'!r}; expected {', '.join(SUFFIXES)}")
    if not os.path.exists(path):
        raise DataError(f"{path}: data file not found")
    if os.path.isdir(path):
        raise DataError(f"{path}: is a folder; expected a data file")
    if suffix == ".csv":
        sequences, labels = _read_csv(path, id_column, time_column, feature_columns)
    else:
        array, lengths, what = _read_npy(path) if suffix == ".npy" else _read_npz(path)
        sequences = _array_to_sequences(array, lengths, path, what)
        labels = None
    _check_sequences(sequences, path, labels)
    return sequences


def _magic(path, size):
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from None


def _read_npy(path):
    if _magic(path, 6) != b"\x93NUMPY":
        raise DataError(f"{path}: not a .npy file (no NumPy header)")
    try:
        with open(path, "rb") as f:
            _check_npy_size(f, path)
            array = np.load(f, allow_pickle=True)  # pickle only for object arrays of ragged sequences
    except DataError:
        raise
    except Exception as e:  # NumPy reports bad headers, truncation, bad pickles in many types
        raise DataError(f"{path}: cannot read .npy file ({type(e).__name__}: {e})") from None
    return array, None, "the array"


def _check_npy_size(f, path):
    """Refuse a .npy whose header promises more bytes than the file holds (before NumPy allocates them)."""
    version = np.lib.format.read_magic(f)
    if version in ((1, 0), (2, 0)):
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f)
        if not dtype.hasobject:
            needed = int(np.prod(shape, dtype=object)) * dtype.itemsize
            available = os.fstat(f.fileno()).st_size - f.tell()
            if available < needed:
                raise DataError(f"{path}: truncated .npy file: header says shape {shape} {dtype} "
                                f"({needed} bytes) but {available} bytes follow")
    f.seek(0)


def _read_npz(path):
    if _magic(path, 2) != b"PK":
        raise DataError(f"{path}: not a .npz file (not a zip archive)")
    try:
        with np.load(path, allow_pickle=True) as archive:
            names = list(archive.files)
            if not names:
                raise DataError(f"{path}: the .npz archive holds no arrays")
            key = "data" if "data" in names else "sequences" if "sequences" in names else names[0]
            array = archive[key]
            lengths = archive["lengths"] if key in ("data", "sequences") and "lengths" in names else None
    except DataError:
        raise
    except Exception as e:  # zipfile and NumPy raise many types on damaged archives
        raise DataError(f"{path}: cannot read .npz file ({type(e).__name__}: {e})") from None
    return array, lengths, f"array {key!r}"


def _as_float(a, where):
    """Array-like -> float64 ndarray, or DataError naming `where`."""
    try:
        a = np.asarray(a)
        if a.dtype.kind not in "biufO":
            raise DataError(f"{where} holds {a.dtype} values; expected numbers")
        with np.errstate(over="ignore", invalid="ignore"):
            return a.astype(np.float64)
    except DataError:
        raise
    except Exception as e:  # ragged nested lists, objects that are not numbers, ...
        raise DataError(f"{where} holds values that are not numbers ({type(e).__name__}: {e})") from None


def _array_to_sequences(array, lengths, path, what):
    """(N, L, C) array or 1-D object array of (L_i, C) arrays -> list of float64 (L_i, C)."""
    if not isinstance(array, np.ndarray):
        raise DataError(f"{path}: {what} is a {type(array).__name__}; expected an array")
    if array.dtype.kind == "O" and array.ndim == 1:
        sequences = []
        for i, item in enumerate(array):
            s = _as_float(item, f"{path}: sequence {i}")
            if s.ndim != 2:
                raise DataError(f"{path}: sequence {i} has shape {s.shape}; expected (steps, features)")
            sequences.append(s)
        return sequences
    if array.ndim != 3:
        raise DataError(f"{path}: {what} has shape {array.shape}; expected rank 3 (sequences, steps, features) "
                        f"or a 1-D object array of (steps, features) arrays; one sequence is shape (1, L, C), "
                        f"univariate data is (N, L, 1)")
    array = _as_float(array, f"{path}: {what}")
    if lengths is None:
        return list(array)
    lengths = np.asarray(lengths)
    if lengths.shape != (array.shape[0],) or lengths.dtype.kind not in "iu":
        raise DataError(f"{path}: array 'lengths' has shape {lengths.shape} and dtype {lengths.dtype}; "
                        f"expected {array.shape[0]} integers")
    bad = np.flatnonzero((lengths < 0) | (lengths > array.shape[1]))
    if len(bad):
        raise DataError(f"{path}: lengths[{bad[0]}] = {lengths[bad[0]]}; expected 0..{array.shape[1]}")
    return [array[i, :n] for i, n in enumerate(lengths)]


def _check_sequences(sequences, path, labels=None):
    """Refuse empty sets, featureless or too short sequences, mixed feature counts, NaN and inf."""
    if not sequences:
        raise DataError(f"{path}: holds no sequences")
    num_features = sequences[0].shape[1]
    if num_features == 0:
        raise DataError(f"{path}: sequences have 0 features")
    for i, s in enumerate(sequences):
        name = labels[i] if labels else f"sequence {i}"
        if s.shape[1] != num_features:
            raise DataError(f"{path}: {name} has {s.shape[1]} features; the first sequence has {num_features}")
        if s.shape[0] < 2:
            raise DataError(f"{path}: {name} has {s.shape[0]} step(s); expected at least 2")
        bad = np.argwhere(~np.isfinite(s))
        if len(bad):
            step, feature = bad[0]
            raise DataError(f"{path}: {name}, step {step}, feature {feature}: value {s[step, feature]} "
                            f"is not finite")


def _read_csv(path, id_column, time_column, feature_columns):
    """Long-format CSV -> (list of float64 (L_i, C) sorted by time, labels naming each sequence)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from None
    reader = csv.reader(io.StringIO(text), strict=True)
    try:
        header = next((row for row in reader if row), None)
        if header is None:
            raise DataError(f"{path}: empty file; expected a header row and one row per time step")
        names = [h.strip() for h in header]
        columns = _csv_columns(path, reader.line_num, names, id_column, time_column, feature_columns)
        rows = {}  # id -> list of (time, line, values)
        time_kind = None
        for row in reader:
            if not row:
                continue
            line = reader.line_num
            if len(row) != len(names):
                raise DataError(f"{path}: line {line}: {len(row)} cells; the header has {len(names)}")
            seq_id = row[columns[0]].strip()
            if not seq_id:
                raise DataError(f"{path}: line {line}, column {id_column!r}: empty sequence id")
            time = _parse_time(row[columns[1]], f"{path}: line {line}, column {time_column!r}")
            if time_kind is None:
                time_kind = type(time)
            elif type(time) is not time_kind:
                raise DataError(f"{path}: line {line}, column {time_column!r}: {row[columns[1]]!r} mixes "
                                f"dates and numbers in the time column")
            values = []
            for c in columns[2]:
                cell = row[c]
                try:
                    v = float(cell)
                except ValueError:
                    raise DataError(f"{path}: line {line}, column {names[c]!r}: {cell!r} is not a number") from None
                if not np.isfinite(v):
                    raise DataError(f"{path}: line {line}, column {names[c]!r} (sequence {seq_id!r}): "
                                    f"value {cell.strip()!r} is not finite")
                values.append(v)
            rows.setdefault(seq_id, []).append((time, line, values))
    except csv.Error as e:
        raise DataError(f"{path}: line {reader.line_num}: CSV error: {e}") from None
    sequences, labels = [], []
    for seq_id, steps in rows.items():
        steps.sort(key=lambda step: step[0])
        for a, b in zip(steps, steps[1:]):
            if a[0] == b[0]:
                raise DataError(f"{path}: sequence {seq_id!r}: time {a[0]} appears twice (lines {a[1]} and {b[1]})")
        sequences.append(np.array([values for _, _, values in steps], dtype=np.float64))
        labels.append(f"sequence {seq_id!r} (first row at line {min(step[1] for step in steps)})")
    return sequences, labels


def _csv_columns(path, line, names, id_column, time_column, feature_columns):
    """Header names -> (id index, time index, feature indices)."""
    where = f"{path}: line {line} (header)"
    for name in (id_column, time_column, *(feature_columns or [])):
        if name not in names:
            raise DataError(f"{where}: missing column {name!r}; found columns {names}")
        if names.count(name) > 1:
            raise DataError(f"{where}: column {name!r} appears {names.count(name)} times")
    if feature_columns is None:
        feature_columns = [n for n in names if n not in (id_column, time_column)]
        if "" in feature_columns:
            raise DataError(f"{where}: column {names.index('') + 1} has no name (a saved index? write the CSV "
                            f"without it, or list data.csv_feature_columns)")
        for name in feature_columns:
            if feature_columns.count(name) > 1:
                raise DataError(f"{where}: column {name!r} appears {feature_columns.count(name)} times")
        if not feature_columns:
            raise DataError(f"{where}: no feature columns besides {id_column!r} and {time_column!r}")
    return names.index(id_column), names.index(time_column), [names.index(n) for n in feature_columns]


def _parse_time(cell, where):
    """A time cell -> float, or a naive UTC datetime for ISO dates."""
    try:
        t = float(cell)
    except ValueError:
        try:
            t = datetime.datetime.fromisoformat(cell.strip())
        except ValueError:
            raise DataError(f"{where}: {cell!r} is not a number or an ISO date") from None
        if t.tzinfo is not None:
            t = t.replace(tzinfo=None) - t.utcoffset()  # naive UTC, comparable with other rows
        return t
    if not np.isfinite(t):
        raise DataError(f"{where}: time {cell.strip()!r} is not finite")
    return t


# ---------------------------------------------------------------- writing files

def save_sequences(sequences, path, feature_names=None, ids=None):
    """Write (L_i, C) sequences to .npy, .npz or long-format .csv (atomically) in a form read_sequences reads.

    .npy: (N, L, C) when all lengths are equal, else a 1-D object array. .npz: 'data' (N, L_max, C)
    zero-padded plus 'lengths' (N,). .csv: columns id, time, feature_names (default f0, f1, ...).
    """
    path = str(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: unsupported file type {suffix!r}; expected {', '.join(SUFFIXES)}")
    sequences = [np.asarray(s) for s in sequences]
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    def write(f):
        if suffix == ".npy":
            if len(set(lengths.tolist())) == 1:
                np.save(f, np.stack(sequences))
            else:
                ragged = np.empty(len(sequences), dtype=object)
                ragged[:] = sequences
                np.save(f, ragged, allow_pickle=True)
        elif suffix == ".npz":
            data = np.zeros((len(sequences), lengths.max(), sequences[0].shape[1]),
                            dtype=np.result_type(*sequences))
            for i, s in enumerate(sequences):
                data[i, :len(s)] = s
            np.savez(f, data=data, lengths=lengths)
        else:
            f.write(_csv_text(sequences, feature_names, ids).encode("utf-8"))

    atomic_write(path, write)


def _csv_text(sequences, feature_names, ids):
    num_features = sequences[0].shape[1]
    feature_names = feature_names or [f"f{k}" for k in range(num_features)]
    ids = ids if ids is not None else range(len(sequences))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "time", *feature_names])
    for seq_id, s in zip(ids, sequences):
        for t, step in enumerate(s):
            writer.writerow([seq_id, t, *(str(v) for v in step)])  # numpy's str: shortest exact repr
    return out.getvalue()


# ---------------------------------------------------------------- buckets and batches

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

    def bucket_of(self, length):
        """Index of the first boundary >= length."""
        return int(self.buckets_of([length])[0])

    def to_dict(self):
        return {"boundaries": list(self.boundaries)}

    @classmethod
    def from_dict(cls, d):
        return cls(tuple(d["boundaries"]))


class Batch(NamedTuple):
    """x: float32 (L, B, C) time-major, zero-padded; mask: float32 (L, B) 1 valid / 0 pad;
    lengths: int64 (B,); bucket: index of the bucket whose boundary is L."""
    x: np.ndarray
    mask: np.ndarray
    lengths: np.ndarray
    bucket: int


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


def sample_batch(dataset, spec, batch_size, seed, step):
    """A training batch; a pure function of (seed, step).

    Picks a bucket with probability proportional to its number of sequences, then batch_size of its
    sequences (with replacement only when the bucket holds fewer), padded to the bucket's boundary.
    """
    if len(dataset) == 0:
        raise ValueError("sample_batch: the dataset holds no sequences")
    rng = np.random.default_rng([seed, step, _BATCH_STREAM])
    buckets = spec.buckets_of(dataset.lengths)
    counts = np.bincount(buckets, minlength=spec.num_buckets)
    bucket = int(rng.choice(spec.num_buckets, p=counts / counts.sum()))
    members = np.flatnonzero(buckets == bucket)
    picked = rng.choice(members, size=batch_size, replace=len(members) < batch_size)
    x, mask, lengths = pad_batch([dataset.sequences[i] for i in picked], spec.boundaries[bucket])
    return Batch(x, mask, lengths, bucket)


def iterate_all(dataset, spec, batch_size):
    """Yield every sequence exactly once, bucket by bucket in dataset order, as Batches of at most
    batch_size sequences padded to the bucket's boundary (for evaluation)."""
    buckets = spec.buckets_of(dataset.lengths)
    for bucket, length in enumerate(spec.boundaries):
        members = np.flatnonzero(buckets == bucket)
        for start in range(0, len(members), batch_size):
            chunk = [dataset.sequences[i] for i in members[start:start + batch_size]]
            x, mask, lengths = pad_batch(chunk, length)
            yield Batch(x, mask, lengths, bucket)
