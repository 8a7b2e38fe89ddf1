"""A table (pandas DataFrame, one row per time step) -> sequences, for CSV and Parquet files and DataFrames.

Long format: an id column names each row's sequence; wide format: no id column, the table is one sequence.
A time column (numbers or ISO dates) orders the rows of each sequence; without one, row order is time order.
Feature columns must hold numbers; empty cells, NA and NaN are missing values (NaN in the arrays).
"""
import numpy as np
import pandas as pd

from gan_sru import DataError

from .raw import RawData, TablePlace

DEFAULT_ID, DEFAULT_TIME = "id", "time"  # the config's defaults: used where a file has them, else not


def as_table(df):
    """The DataFrame with an index that carries data (named levels, or dates) as columns; an unnamed index of
    row labels (e.g. left by shuffling or filtering) is dropped."""
    if isinstance(df.index, pd.RangeIndex) and df.index.name is None:
        return df
    if any(n is not None for n in df.index.names) or isinstance(df.index, pd.DatetimeIndex):
        return df.reset_index()
    return df.reset_index(drop=True)


def frame_sequences(df, file, id_column, time_column, feature_columns, rownames, extra=None):
    """DataFrame -> RawData (float64 arrays with NaN for missing values). rownames: a raw.RowNames.

    id_column / time_column: a column name, or None for none; the defaults 'id' / 'time' are used only
    where the table has them. feature_columns: names, or None for every other column. Raises DataError
    naming the file, the row (line) and column of the first offending cell and its value.
    extra: attribute and categorical columns to read beside the features (gan_sru.data.columns)."""
    from .columns import check_present, extra_names, read_extra

    df = as_table(df)
    names = [str(c).strip() for c in df.columns]
    header = f"{file}: {rownames.header}"
    notes = []
    used = [c for c in (id_column, time_column, *(feature_columns or []), *extra_names(extra)) if c is not None]
    for name in used:
        if names.count(name) > 1:
            raise DataError(f"{header}: column {name!r} appears {names.count(name)} times")

    def present(name, default, what):
        if name is None:
            return None
        if name in names:
            return name
        if name == default:
            return None
        raise DataError(f"{header}: missing column {name!r} (data.csv_{what}_column); found columns {names}")

    id_col = present(id_column, DEFAULT_ID, "id")
    time_col = present(time_column, DEFAULT_TIME, "time")
    if id_col is None:
        notes.append("no id column: each file is one sequence (wide format)" if id_column is None else
                     f"no column {id_column!r}: each file is one sequence (wide format)")
    if feature_columns is None:
        if "" in names:
            raise DataError(f"{header}: column {names.index('') + 1} has no name (a saved index? write the table "
                            f"without it, or list data.csv_feature_columns)")
        features = [n for n in names if n not in (id_col, time_col, *extra_names(extra))]
        for name in features:
            if features.count(name) > 1:
                raise DataError(f"{header}: column {name!r} appears {features.count(name)} times")
        if time_col is None and time_column == DEFAULT_TIME:  # a column of dates is the time, if it is the only one
            dates = [n for n in features if _all_dates(df.iloc[:, names.index(n)])]
            if len(dates) > 1:
                raise DataError(f"{header}: columns {dates} all hold dates; set data.csv_time_column to the one "
                                "that orders the rows")
            if dates:
                time_col = dates[0]
                features.remove(time_col)
                notes.append(f"no column 'time': column {time_col!r} holds dates and orders the rows")
        if not features:
            besides = " and ".join(repr(c) for c in (id_col, time_col) if c is not None)
            raise DataError(f"{header}: no feature columns{' besides ' + besides if besides else ''}")
    else:
        for name in feature_columns:
            if name not in names:
                raise DataError(f"{header}: missing column {name!r} (data.csv_feature_columns); found columns "
                                f"{names}")
        features = list(feature_columns)
    check_present(extra, names, header, feature_columns)
    if time_col is None:
        notes.append("no time column: row order is time order")
    column = {n: df.iloc[:, names.index(n)] for n in (id_col, time_col, *features, *extra_names(extra))
              if n is not None}
    rows = len(df)
    info = {"layout": "long" if id_col is not None else "wide", "id_column": id_col, "time_column": time_col,
            "time_kind": None, "feature_columns": features, "notes": notes, "rows": rows}
    if rows == 0:
        return RawData([], [], None, features, info)

    if id_col is not None:
        ids = column[id_col]
        missing = np.flatnonzero(ids.isna().to_numpy())
        if len(missing):
            raise DataError(f"{file}: {rownames(missing[0])}, column {id_col!r}: empty sequence id")
        codes, uniques = pd.factorize(ids, sort=False)
    else:
        codes, uniques = np.zeros(rows, np.int64), [None]

    def where(row, name):
        seq = "" if id_col is None else f" (sequence {uniques[codes[row]]!r})"
        return f"{file}: {rownames(row)}, column {name!r}{seq}"

    values = _feature_matrix(column, features, rows, where, file, id_col is None)
    seconds = None
    if time_col is not None:
        key, seconds, show, kind = parse_times(column[time_col], lambda row: where(row, time_col))
        order = np.lexsort((key, codes))
        same = (codes[order][1:] == codes[order][:-1]) & (key[order][1:] == key[order][:-1])
        if same.any():
            a, b = order[np.argmax(same)], order[np.argmax(same) + 1]
            seq = f"sequence {uniques[codes[a]]!r}: " if id_col is not None else ""
            raise DataError(f"{file}: {seq}time {show(a)} appears twice ({rownames.pair(a, b)})")
    else:
        kind = None
        order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    in_order = bool(np.all(np.diff(order) == 1))  # a wide file, or rows already sorted: no copy
    arrays = np.split(values if in_order else values[order], bounds)
    row_lists = np.split(order, bounds)
    places = [TablePlace(file, uniques[codes[r[0]]] if id_col is not None else None, r, rownames, features)
              for r in row_lists]
    time_lists = None if time_col is None else np.split(seconds[order], bounds)
    info["time_kind"] = kind
    extras = None if extra is None else read_extra(column, extra, file, order, bounds,
                                                   [p.seq_id for p in places], where)
    return RawData(arrays, places, time_lists, features, info, extras)


def _all_dates(col):
    """True when the column holds dates: a datetime column, or text whose first 100 cells are ISO dates or times
    (not numbers); parse_times then parses every cell and names any that is not."""
    if pd.api.types.is_datetime64_any_dtype(col):
        return bool(col.notna().any())
    if col.dtype != object and not pd.api.types.is_string_dtype(col):
        return False
    head = col.dropna().iloc[:100]
    if head.empty or not all(isinstance(c, str) for c in head) or pd.to_numeric(head, errors="coerce").notna().any():
        return False
    return bool(pd.to_datetime(head, format="ISO8601", utc=True, errors="coerce").notna().all())


def _feature_matrix(column, features, rows, where, file, wide):
    """(rows, C) float64 with NaN for missing cells; refuses text, dates, inf."""
    values = np.empty((rows, len(features)), np.float64)
    text = []
    for j, name in enumerate(features):
        col = column[name]
        if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
            with np.errstate(over="ignore", invalid="ignore"):
                values[:, j] = col.to_numpy(np.float64, na_value=np.nan)
            bad = np.flatnonzero(np.isinf(values[:, j]))
            if len(bad):
                raise DataError(f"{where(bad[0], name)}: value {str(col.iloc[bad[0]])!r} is not finite")
            continue
        if pd.api.types.is_datetime64_any_dtype(col) or isinstance(col.dtype, pd.PeriodDtype):
            raise DataError(f"{where(0, name)}: holds dates or times ({col.iloc[0]}); expected numbers (if it is "
                            f"the time, set data.csv_time_column: {name})")
        numbers = pd.to_numeric(col.astype(object), errors="coerce").to_numpy(np.float64, na_value=np.nan)
        bad = np.flatnonzero(np.isnan(numbers) & col.notna().to_numpy())
        if len(bad) == col.notna().sum() and len(bad):
            text.append((name, bad[0]))
            continue
        if len(bad):
            raise DataError(_not_a_number(where(bad[0], name), col.iloc[bad[0]]))
        inf = np.flatnonzero(np.isinf(numbers))
        if len(inf):
            raise DataError(f"{where(inf[0], name)}: value {str(col.iloc[inf[0]]).strip()!r} is not finite")
        values[:, j] = numbers
    if text and len(text) == len(features):
        raise DataError(f"{file}: no numeric column: {[n for n, _ in text]} hold text, not numbers; expected at "
                        "least one column of numbers")
    if text:
        name, row = text[0]
        hint = (f"; if it names the sequences, set data.csv_id_column: {name}" if wide else "")
        raise DataError(f"{_not_a_number(where(row, name), column[name].iloc[row])} (the column holds no "
                        f"numbers){hint}; if it holds categories, set data.categorical: [{name}]; to leave it "
                        "out, list the features in data.csv_feature_columns")
    return values


def _not_a_number(where, cell):
    if isinstance(cell, (bytes, bytearray)):
        return f"{where}: not UTF-8 text"
    try:
        if np.isinf(float(cell)):
            return f"{where}: value {str(cell).strip()!r} is not finite"
    except (TypeError, ValueError):
        pass
    quote = " (an unclosed quote?)" if isinstance(cell, str) and "\n" in cell else ""
    return f"{where}: {cell!r} is not a number{quote}"


def parse_times(col, where):
    """A time column -> (sort key (R,) int64 or float64, values (R,) float64 (numbers, or seconds since
    1970 UTC for dates; naive dates are taken as UTC), show(row) -> the time as text, kind 'numbers'|'dates').
    Refuses missing, non-finite, unparseable times and a mix of numbers and dates."""
    missing = np.flatnonzero(col.isna().to_numpy())
    if len(missing):
        raise DataError(f"{where(missing[0])}: missing time (the sequence index must be given on every row)")
    if pd.api.types.is_datetime64_any_dtype(col):
        return _dates(pd.to_datetime(col, utc=True), where)
    if pd.api.types.is_bool_dtype(col) or not pd.api.types.is_numeric_dtype(col):
        cells = col.astype(object)
        head = cells.iloc[:100]
        is_num = None
        if not all(isinstance(c, str) for c in head) or pd.to_numeric(head, errors="coerce").notna().any():
            numbers = pd.to_numeric(cells, errors="coerce")
            is_num = numbers.notna().to_numpy()
            if is_num.all():
                col = numbers
        if is_num is None or not is_num.all():  # dates (numbers among them are refused below)
            return _text_dates(cells, is_num, where)
    key = col.to_numpy()
    if key.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(key))
        if len(bad):
            raise DataError(f"{where(bad[0])}: time {str(col.iloc[bad[0]])!r} is not finite")
    elif key.dtype.kind not in "iu":
        key = key.astype(np.float64)
    return key, key.astype(np.float64), lambda row: str(col.iloc[row]), "numbers"


def _text_dates(cells, is_num, where):
    """Text cells -> _dates(...); is_num: which cells are numbers, or None where the column looked like dates."""
    text = cells if is_num is None else cells.where(~is_num)
    try:
        dates = pd.to_datetime(text, format="ISO8601", utc=True, errors="coerce")
        bad = dates.isna().to_numpy() if is_num is None else dates.isna().to_numpy() & ~is_num
    except (TypeError, ValueError, OverflowError):  # e.g. bytes from a file that is not UTF-8
        bad = np.ones(len(cells), bool)
    if bad.any():
        i = int(np.argmax(bad))
        cell = cells.iloc[i]
        if isinstance(cell, (bytes, bytearray)):
            raise DataError(f"{where(i)}: not UTF-8 text")
        if is_num is None and pd.notna(pd.to_numeric(pd.Series([cell], dtype=object), errors="coerce")[0]):
            raise DataError(f"{where(i)}: {cell!r} mixes dates and numbers in the time column")
        raise DataError(f"{where(i)}: {cell!r} is not a number or an ISO date")
    if is_num is not None and is_num.any():
        odd = int(np.flatnonzero(is_num != is_num[0])[0])
        raise DataError(f"{where(odd)}: {cells.iloc[odd]!r} mixes dates and numbers in the time column")
    return _dates(dates, where)


def _dates(dates, where):
    try:
        ns = dates.dt.tz_convert(None).astype("datetime64[ns]").to_numpy().view(np.int64)
    except (OverflowError, ValueError, pd.errors.OutOfBoundsDatetime) as e:
        raise DataError(f"{where(0)}: dates outside the years 1678-2261 that the reader handles ({e})") from None
    return ns, ns / 1e9, lambda row: dates.iloc[row].isoformat(), "dates"
