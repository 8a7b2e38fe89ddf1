"""The layout of the user's data (DataFrame columns and dtypes, or array dtype), captured when training and
used to give generated sequences back in the same layout, column names, dtypes and units.

    layout = frame_layout(table, dataset.info, index_columns)   # JSON-able
    synthetic = to_layout(sequences, layout, time)              # DataFrame (or array) like the input
"""
import numpy as np

from gan_sru import DataError


def _label(label):
    """A column label as JSON keeps it (str, int, float, bool stay; anything else becomes its str)."""
    if isinstance(label, (bool, np.bool_)):
        return bool(label)
    if isinstance(label, (int, np.integer)):
        return int(label)
    if isinstance(label, (float, np.floating)):
        return float(label)
    return str(label)


def storable_table(df):
    """The DataFrame with meaningful index levels as columns and str column names (what Parquet needs),
    plus the labels the index levels got. Refuses column names that are equal as text."""
    import pandas as pd

    from .tables import as_table

    table = as_table(df)
    index_columns = [c for c in table.columns if c not in df.columns]
    names = [str(c).strip() for c in table.columns]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise DataError(f"DataFrame: column {dup!r} appears {names.count(dup)} times (as text); expected unique "
                        "column names")
    labels = list(table.columns)
    table = pd.DataFrame({n: table.iloc[:, k] for k, n in enumerate(names)})
    return table, labels, index_columns


def frame_layout(table, labels, index_columns, info):
    """JSON-able layout of a DataFrame input: which str-named columns of `table` were the key, time and
    features (from the reader's info), their original labels and dtypes, and which were the index."""
    names = list(table.columns)

    def column(name):
        if name is None:
            return None
        return {"name": name, "label": _label(labels[names.index(name)]), "dtype": str(table[name].dtype)}

    used = [n for n in names if n in (info.get("id_column"), info.get("time_column"), *info["feature_columns"])]
    return {"kind": "dataframe", "columns": [column(n) for n in used],
            "id": column(info.get("id_column")), "time": column(info.get("time_column")),
            "time_kind": info.get("time_kind"),
            "index": [_label(c) for c in index_columns if str(c).strip() in used]}


def table_layout(summary):
    """Layout of a run trained on a table file (from its data summary): float64 features, text ids."""
    def column(name, dtype):
        return None if name is None else {"name": name, "label": name, "dtype": dtype}

    kind = summary["time"].get("kind")
    time_dtype = "datetime64[ns, UTC]" if kind == "dates" else "float64"
    cols = [column(summary["id_column"], "object"), column(summary["time_column"], time_dtype)]
    cols += [column(f["name"], "float64") for f in summary["features"]]
    return {"kind": "dataframe", "columns": [c for c in cols if c], "id": cols[0], "time": cols[1],
            "time_kind": kind, "index": []}


def array_layout(data):
    """Layout of an (N, L, C) array or a list of (L_i, C) arrays."""
    if isinstance(data, np.ndarray):
        return {"kind": "array", "dtype": str(data.dtype), "ragged": False}
    dtypes = {str(np.asarray(s).dtype) for s in data}
    return {"kind": "array", "dtype": dtypes.pop() if len(dtypes) == 1 else "float64", "ragged": True}


def _cast(values, dtype):
    """float64 values -> a pandas Series of `dtype`: integers rounded and clipped to the type's range,
    booleans true from 0.5."""
    import pandas as pd

    dtype = pd.api.types.pandas_dtype(dtype)
    if pd.api.types.is_bool_dtype(dtype):
        return pd.Series(values >= 0.5).astype(dtype)
    if pd.api.types.is_integer_dtype(dtype):
        info = np.iinfo(getattr(dtype, "numpy_dtype", dtype))
        values = np.clip(np.rint(values), info.min, info.max)
    return pd.Series(values).astype(dtype)


def _ids(seq, dtype):
    """Sequence numbers 0..N-1 as the key column's dtype (as text where the key was text)."""
    import pandas as pd

    dtype = pd.api.types.pandas_dtype(dtype)
    numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    return pd.Series(seq if numeric else seq.astype(str)).astype(dtype)


def _times(lengths, layout, time):
    """Time values for generated sequences: from the data's earliest time, one median step per row."""
    import pandas as pd

    first, step = time.get("first", 0.0), time.get("step", 1.0)
    offsets = np.concatenate([np.arange(n, dtype=np.float64) for n in lengths]) * step + first
    dtype = pd.api.types.pandas_dtype(layout["time"]["dtype"])
    if layout.get("time_kind") != "dates":
        return _cast(offsets, dtype)
    stamps = pd.Series(pd.to_datetime(np.rint(offsets * 1e9).astype(np.int64), unit="ns", utc=True))
    if isinstance(dtype, pd.DatetimeTZDtype):
        return stamps.dt.tz_convert(dtype.tz)
    return stamps.dt.tz_localize(None)  # naive datetimes, and dates that were text, as naive UTC


def to_layout(sequences, layout, time):
    """Generated sequences (list of float (L_i, C) in data units) -> the input's layout.

    array: (N, L, C) in the input's dtype when the input was one array, else a list of (L_i, C) arrays.
    dataframe: one row per step, the input's columns (key, time, features) with their labels and dtypes;
    long format: key values 0..N-1 (as text where the key was text); wide format (no key): a
    (sequence, step) MultiIndex. A time column counts from the data's earliest time in its median step.
    Columns that were the input's index are the index again."""
    import pandas as pd

    if layout["kind"] == "array":
        dtype = np.dtype(layout["dtype"])
        out = [_cast(np.asarray(s, np.float64).ravel(), dtype).to_numpy().reshape(np.shape(s)) for s in sequences]
        if not layout["ragged"] and len({len(s) for s in out}) == 1:
            return np.stack(out)
        return out
    lengths = [len(s) for s in sequences]
    values = np.concatenate([np.asarray(s, np.float64) for s in sequences])
    seq = np.repeat(np.arange(len(sequences)), lengths)
    features = [c for c in layout["columns"] if c not in (layout["id"], layout["time"])]
    data = {}
    for col in layout["columns"]:
        if col == layout["id"]:
            data[col["name"]] = _ids(seq, col["dtype"])
        elif col == layout["time"]:
            data[col["name"]] = _times(lengths, layout, time)
        else:
            data[col["name"]] = _cast(values[:, features.index(col)], col["dtype"])
    df = pd.DataFrame(data)
    df.columns = [c["label"] for c in layout["columns"]]
    index = list(layout.get("index") or [])
    if layout["id"] is None:
        df.index = pd.MultiIndex.from_arrays([seq, np.concatenate([np.arange(n) for n in lengths])],
                                             names=["sequence", "step"])
        if index:
            df = df.set_index(index, append=True).droplevel("step")
    elif index:
        df = df.set_index(index)
    return df
