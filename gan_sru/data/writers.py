"""Writing sequences to .npy, .npz or long-format .csv / .csv.gz / .parquet, atomically, in a form the readers
read back."""
import csv
import gzip
import io

import numpy as np

from gan_sru.files import atomic_write

from .readers import SUFFIXES, suffix_of


def save_sequences(sequences, path, feature_names=None, ids=None):
    """Write (L_i, C) sequences to .npy, .npz or a long-format table (atomically) in a form read_sequences reads.

    .npy: (N, L, C) when all lengths are equal, else a 1-D object array. .npz: 'data' (N, L_max, C)
    zero-padded plus 'lengths' (N,). .csv, .csv.gz, .parquet: columns id, time, feature_names (default
    f0, f1, ...), one row per step.
    """
    path = str(path)
    suffix = suffix_of(path)
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
        elif suffix == ".parquet":
            _long_frame(sequences, feature_names, ids).to_parquet(f, index=False)
        elif suffix == ".csv.gz":
            f.write(gzip.compress(_csv_text(sequences, feature_names, ids).encode("utf-8"), mtime=0))
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


def _long_frame(sequences, feature_names, ids):
    import pandas as pd

    num_features = sequences[0].shape[1]
    names = feature_names or [f"f{k}" for k in range(num_features)]
    ids = list(ids) if ids is not None else list(range(len(sequences)))
    frame = {"id": np.repeat(ids, [len(s) for s in sequences]),
             "time": np.concatenate([np.arange(len(s)) for s in sequences])}
    values = np.concatenate(sequences)
    frame.update({name: values[:, k] for k, name in enumerate(names)})
    return pd.DataFrame(frame)
