"""Reading sequences from user files (.npy, .npz, long-format .csv), unscaled, with errors that name the place."""
import csv
import datetime
import io
import os

import numpy as np

from gan_sru import DataError

SUFFIXES = (".npy", ".npz", ".csv")


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
