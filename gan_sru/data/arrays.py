"""Reading NumPy files (.npy, .npz) and in-memory arrays into RawData, with errors that name the place.

Files are read with allow_pickle=False: a pickled object array can run code when loaded, so a file that
holds one is refused before anything is unpickled. Ragged data goes in an .npz of 'data' (N, L_max, C)
zero-padded and 'lengths' (N,), the layout gan_sru.data.save_sequences writes.
"""
import os

import numpy as np

from gan_sru import DataError

from .raw import ArrayPlace, RawData, one_line

RAGGED_HINT = ("save ragged sequences as .npz with 'data' (N, L_max, C) zero-padded and 'lengths' (N,) "
               "instead: gan_sru.data.save_sequences(sequences, 'data.npz') writes it")


def read_npy(path):
    """(N, L, C) numeric array. An object array (pickled Python objects) is refused unread."""
    if _magic(path, 6) != b"\x93NUMPY":
        raise DataError(f"{path}: not a .npy file (no NumPy header)")
    try:
        with open(path, "rb") as f:
            _check_npy_size(f, path)
            array = np.load(f, allow_pickle=False)
    except DataError:
        raise
    except ValueError as e:
        if "allow_pickle" in str(e):  # an object array in a header version _check_npy_size does not parse
            raise _pickled(path, "the array") from None
        raise DataError(f"{path}: cannot read .npy file (ValueError: {one_line(e)})") from None
    except Exception as e:  # NumPy reports bad headers and truncation in many types
        raise DataError(f"{path}: cannot read .npy file ({type(e).__name__}: {one_line(e)})") from None
    return array_sequences(array, None, path, "the array")


def read_npz(path):
    """The array named 'data' or 'sequences', else the first; with a 'lengths' (N,) array beside
    'data'/'sequences', sequence i is data[i, :lengths[i]]."""
    if _magic(path, 2) != b"PK":
        raise DataError(f"{path}: not a .npz file (not a zip archive)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            names = list(archive.files)
            if not names:
                raise DataError(f"{path}: the .npz archive holds no arrays")
            key = "data" if "data" in names else "sequences" if "sequences" in names else names[0]
            array = _npz_member(archive, key, path)
            lengths = _npz_member(archive, "lengths", path) \
                if key in ("data", "sequences") and "lengths" in names else None
    except DataError:
        raise
    except Exception as e:  # zipfile and NumPy raise many types on damaged archives
        raise DataError(f"{path}: cannot read .npz file ({type(e).__name__}: {one_line(e)})") from None
    return array_sequences(array, lengths, path, f"array {key!r}")


def _npz_member(archive, key, path):
    """archive[key] read without pickle; an object member is refused with how to store ragged data."""
    try:
        return archive[key]
    except ValueError as e:
        if "allow_pickle" in str(e):
            raise _pickled(path, f"array {key!r}") from None
        raise


def _pickled(path, what):
    return DataError(f"{path}: {what} holds Python objects (a pickled object array), which gan_sru does not load "
                     f"because unpickling can run code; {RAGGED_HINT}")


def _magic(path, size):
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from None


def _check_npy_size(f, path):
    """Refuse a .npy whose header promises more bytes than the file holds (before NumPy allocates them)."""
    version = np.lib.format.read_magic(f)
    if version in ((1, 0), (2, 0)):
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f)
        if dtype.hasobject:
            raise _pickled(path, "the array")
        needed = int(np.prod(shape, dtype=object)) * dtype.itemsize
        available = os.fstat(f.fileno()).st_size - f.tell()
        if available < needed:
            raise DataError(f"{path}: truncated .npy file: header says shape {shape} {dtype} "
                            f"({needed} bytes) but {available} bytes follow")
    f.seek(0)


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
        raise DataError(f"{where} holds values that are not numbers ({type(e).__name__}: {one_line(e)})") from None


def array_sequences(array, lengths, path, what="the array"):
    """(N, L, C) array or 1-D object array of (L_i, C) arrays (+ optional (N,) lengths) -> RawData.
    NaN values are missing values."""
    if not isinstance(array, np.ndarray):
        raise DataError(f"{path}: {what} is a {type(array).__name__}; expected an array")
    if array.dtype.kind == "O" and array.ndim == 1:
        sequences = []
        for i, item in enumerate(array):
            s = _as_float(item, f"{path}: sequence {i}")
            if s.ndim != 2:
                raise DataError(f"{path}: sequence {i} has shape {s.shape}; expected (steps, features)")
            sequences.append(s)
    elif array.ndim != 3:
        raise DataError(f"{path}: {what} has shape {array.shape}; expected rank 3 (sequences, steps, features) "
                        f"or a 1-D object array of (steps, features) arrays; one sequence is shape (1, L, C), "
                        f"univariate data is (N, L, 1)")
    else:
        array = _as_float(array, f"{path}: {what}")
        if lengths is None:
            sequences = list(array)
        else:
            lengths = np.asarray(lengths)
            if lengths.shape != (array.shape[0],) or lengths.dtype.kind not in "iu":
                raise DataError(f"{path}: array 'lengths' has shape {lengths.shape} and dtype {lengths.dtype}; "
                                f"expected {array.shape[0]} integers")
            bad = np.flatnonzero((lengths < 0) | (lengths > array.shape[1]))
            if len(bad):
                raise DataError(f"{path}: lengths[{bad[0]}] = {lengths[bad[0]]}; expected 0..{array.shape[1]}")
            sequences = [array[i, :n] for i, n in enumerate(lengths)]
    places = [ArrayPlace(str(path), i) for i in range(len(sequences))]
    return RawData(sequences, places, None, None, {"layout": "array", "notes": []})
