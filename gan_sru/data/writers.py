"""Writing sequences to .npy, .npz or long-format .csv / .csv.gz / .parquet, atomically, in a form the readers
read back."""
import csv
import gzip
import io

import numpy as np

from gan_sru.files import atomic_write, write_npz

from .readers import SUFFIXES, suffix_of


def save_sequences(sequences, path, feature_names=None, ids=None, columns=None):
    """Write (L_i, C) sequences to .npy, .npz or a long-format table (atomically) in a form read_sequences reads.

    .npy: (N, L, C), only when all lengths are equal (ragged sequences need .npz: an object array would be
    pickled, which readers refuse). .npz: 'data' (N, L_max, C)
    zero-padded plus 'lengths' (N,). .csv, .csv.gz, .parquet: columns id, time, feature_names (default
    f0, f1, ...), one row per step.
    columns: {name: list of N (L_i,) arrays} more per-step columns (a conditional run's category labels, and
    its attributes repeated on every step): after the features in a table (so data.categorical /
    data.attributes read them back), and in .npz as name (N, L_max) arrays (text as a Unicode array, no pickle).
    .npy holds numbers only: no extra columns.
    """
    columns = columns or {}
    path = str(path)
    suffix = suffix_of(path)
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: unsupported file type {suffix!r}; expected {', '.join(SUFFIXES)}")
    sequences = [np.asarray(s) for s in sequences]
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    if suffix == ".npy" and len(set(lengths.tolist())) > 1:
        raise ValueError(f"{path}: sequences of different lengths ({lengths.min()}..{lengths.max()} steps) cannot "
                         "be one .npy array without pickle; write .npz (zero-padded 'data' and 'lengths')")
    def write(f):
        if suffix == ".npy":
            np.save(f, np.stack(sequences), allow_pickle=False)
        elif suffix == ".npz":
            data = np.zeros((len(sequences), lengths.max(), sequences[0].shape[1]),
                            dtype=np.result_type(*sequences))
            for i, s in enumerate(sequences):
                data[i, :len(s)] = s
            write_npz(f, {"data": data, "lengths": lengths, **{k: _padded(v, lengths) for k, v in columns.items()}})
        elif suffix == ".parquet":
            _long_frame(sequences, feature_names, ids, columns).to_parquet(f, index=False)
        elif suffix == ".csv.gz":
            f.write(gzip.compress(_csv_text(sequences, feature_names, ids, columns).encode("utf-8"), mtime=0))
        else:
            f.write(_csv_text(sequences, feature_names, ids, columns).encode("utf-8"))

    atomic_write(path, write)


def _padded(per_sequence, lengths):
    """list of N (L_i,) arrays -> (N, L_max) array of their common type, padded with its zero / empty text."""
    flat = np.asarray(np.concatenate([np.asarray(v, dtype=object) for v in per_sequence]).tolist())
    out = np.zeros((len(lengths), int(lengths.max())), dtype=flat.dtype)
    for i, v in enumerate(per_sequence):
        out[i, :len(v)] = np.asarray(np.asarray(v, dtype=object).tolist(), dtype=flat.dtype)
    return out


def _csv_text(sequences, feature_names, ids, columns=None):
    num_features = sequences[0].shape[1]
    feature_names = feature_names or [f"f{k}" for k in range(num_features)]
    ids = ids if ids is not None else range(len(sequences))
    columns = columns or {}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "time", *feature_names, *columns])
    for i, (seq_id, s) in enumerate(zip(ids, sequences)):
        for t, step in enumerate(s):
            # numpy's str: shortest exact repr
            writer.writerow([seq_id, t, *(str(v) for v in step), *(str(c[i][t]) for c in columns.values())])
    return out.getvalue()


def _long_frame(sequences, feature_names, ids, columns=None):
    import pandas as pd

    num_features = sequences[0].shape[1]
    names = feature_names or [f"f{k}" for k in range(num_features)]
    ids = list(ids) if ids is not None else list(range(len(sequences)))
    frame = {"id": np.repeat(ids, [len(s) for s in sequences]),
             "time": np.concatenate([np.arange(len(s)) for s in sequences])}
    values = np.concatenate(sequences)
    frame.update({name: values[:, k] for k, name in enumerate(names)})
    for name, per_sequence in (columns or {}).items():
        frame[name] = np.asarray(np.concatenate([np.asarray(v, dtype=object) for v in per_sequence]).tolist())
    return pd.DataFrame(frame)


def save_table(frame, path):
    """A pandas DataFrame to .csv / .csv.gz / .parquet (by the suffix), atomically, without its index. Dates
    are written as ISO text in CSV, floats with 8 significant digits. Returns the path."""
    suffix = suffix_of(path)
    if suffix not in (".csv", ".csv.gz", ".parquet"):
        raise ValueError(f"{path}: a table is written as .csv, .csv.gz or .parquet, not {suffix!r}")

    def write(f):
        if suffix == ".parquet":
            frame.to_parquet(f, index=False)
        else:
            # 8 significant digits: the generator computes in float32 (about 7); Parquet keeps every bit
            text = frame.to_csv(index=False, lineterminator="\n", float_format="%.8g").encode("utf-8")
            f.write(gzip.compress(text, mtime=0) if suffix == ".csv.gz" else text)

    return atomic_write(str(path), write)
