"""The input of SequenceGAN.fit: a DataFrame or an array checked in memory, the writer that stores it in the
run folder (Parquet, .npy, .npz), and the layout that sample() gives sequences back in."""
import os

import numpy as np

from gan_sru import DataError
from gan_sru.files import atomic_write

UNSET = object()  # an argument not given: the config's value stands


def prepare_input(data, sequence_key, sequence_index, feature_columns, data_cfg, defaults):
    """(writer(folder) -> path, layout, in-memory source for checking) of a DataFrame or array.

    data_cfg: the run's data section (its attributes and categorical columns); defaults: the data section whose
    csv_id_column / csv_time_column / csv_feature_columns stand for an UNSET argument."""
    from gan_sru.data.layout import array_layout, frame_layout, storable_table

    if isinstance(data, (np.ndarray, list, tuple)):
        layout = array_layout(data if isinstance(data, np.ndarray) else list(data))
        if isinstance(data, np.ndarray):
            return writer("training_data.npy", lambda f: np.save(f, data)), layout, data
        arrays = [np.asarray(s) for s in data]

        def save_npz(f):
            lengths = np.array([len(s) for s in arrays])
            padded = np.zeros((len(arrays), lengths.max(), arrays[0].shape[-1]), np.float64)
            for i, s in enumerate(arrays):
                padded[i, :len(s)] = s
            np.savez(f, data=padded, lengths=lengths)
        return writer("training_data.npz", save_npz), layout, arrays
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise DataError(f"SequenceGAN.fit: data is a {type(data).__name__}; expected a pandas DataFrame, a "
                        "numpy array (N, L, C), a list of (L_i, C) arrays, or a file path")
    from gan_sru.data import read_frame

    table, labels, index_columns = storable_table(data)
    for arg, name in (("sequence_key", sequence_key), ("sequence_index", sequence_index)):
        if name is not UNSET and name is not None and name not in table.columns:
            raise DataError(f"DataFrame: no column {name!r} ({arg}); found columns {list(table.columns)}")
    from gan_sru.data.columns import wanted_columns

    raw = read_frame(table, _col(defaults, sequence_key, "csv_id_column"),
                     _col(defaults, sequence_index, "csv_time_column"),
                     _col(defaults, feature_columns, "csv_feature_columns"),
                     extra=wanted_columns(data_cfg.get("attributes"), data_cfg.get("categorical")))

    def write_parquet(f):
        try:
            table.to_parquet(f, index=False)
        except Exception as e:  # pyarrow refuses columns of mixed Python types
            raise DataError(f"DataFrame: cannot store it as Parquet ({type(e).__name__}: {e})") from None

    layout = frame_layout(table, labels, index_columns, raw.info)
    return writer("training_data.parquet", write_parquet), layout, raw


def _col(defaults, value, key):
    return getattr(defaults, key) if value is UNSET else value


def writer(name, write):
    """writer(folder) -> the path of `name` in `folder`, written atomically by write(file)."""
    def into(folder):
        os.makedirs(folder, exist_ok=True)
        return atomic_write(os.path.join(folder, name), write)
    return into


def file_layout(summary):
    """The layout of a run trained on a file: a DataFrame for tables, an array otherwise."""
    from gan_sru.data.layout import table_layout

    if summary and summary.get("layout") in ("long", "wide"):
        return table_layout(summary)
    return {"kind": "array", "dtype": "float32", "ragged": False}
