"""Attribute and categorical columns of a table, read beside the numeric features.

    extra = read_extra(df, names, file, wanted, order, bounds, seq_ids, rownames)

wanted: {"attributes": [...], "categorical": [...]} (data.attributes, data.categorical). An attribute is
constant within a sequence: one value per sequence (refused, naming the sequence and steps, where it varies).
A categorical column holds one label per step. Labels stay as read (text, integers, booleans); missing cells
are None. Returns the RawData `extras` dict:

    {"attributes": {"names", "dtypes", "categorical": [bool], "rows": (N, A) object array},
     "categorical": {"names", "dtypes", "arrays": list of N (L_i, J) object arrays}}
"""
import numpy as np
import pandas as pd

from gan_sru import DataError

from .categorical import is_categorical_attribute


class AttributeVaries(DataError):
    """An attribute column that takes two values within one sequence."""


def wanted_columns(attributes=None, categorical=None):
    """The `extra` argument of the readers, or None when neither is asked for."""
    if not attributes and not categorical:
        return None
    return {"attributes": list(attributes or []), "categorical": list(categorical or [])}


def extra_names(extra):
    return [] if not extra else [*extra["attributes"], *extra["categorical"]]


def check_present(extra, names, header, features):
    """Refuse asked-for columns that the table lacks, or that are also listed as features."""
    for key in ("attributes", "categorical"):
        for name in (extra or {}).get(key, []):
            if name not in names:
                raise DataError(f"{header}: missing column {name!r} (data.{key}); found columns {names}")
            if name in (features or []):
                raise DataError(f"{header}: column {name!r} is in both data.{key} and data.csv_feature_columns; "
                                "expected it in one of them")


def _cells(col):
    """A column as an object array with None for missing cells."""
    values = col.astype(object).to_numpy()
    values[col.isna().to_numpy()] = None
    return values


def read_extra(column, wanted, file, order, bounds, seq_ids, where):
    """column: {name: Series}; order: the rows in (sequence, time) order; bounds: where each sequence starts
    in `order` (after the first); seq_ids: each sequence's id (None in wide format); where(row, name): the
    place of a cell for messages."""
    starts = np.concatenate([[0], bounds]).astype(np.int64)
    lengths = np.diff(np.concatenate([starts, [len(order)]]))
    attrs = {"names": [], "dtypes": [], "categorical": [], "rows": np.empty((len(starts), 0), dtype=object)}
    rows = []
    for name in wanted["attributes"]:
        col = column[name]
        codes = pd.factorize(col, use_na_sentinel=True)[0][order]
        first = np.repeat(codes[starts], lengths)
        bad = np.flatnonzero(codes != first)
        if len(bad):
            seq = int(np.searchsorted(starts, bad[0], side="right") - 1)
            step, row_a, row_b = int(bad[0] - starts[seq]), order[starts[seq]], order[bad[0]]
            label = "the table's one sequence" if seq_ids[seq] is None else f"sequence {seq_ids[seq]!r}"
            def cell(row, name=name):  # "line 4, column 'kind'" (the sequence is named once, before)
                return where(row, name).split(": ", 1)[1].split(" (sequence ")[0]

            raise AttributeVaries(
                f"{file}: attribute column {name!r} varies within {label}: {col.iloc[row_a]!r} at step 0 "
                f"({cell(row_a)}) but {col.iloc[row_b]!r} at step {step} ({cell(row_b)}); expected one value per "
                "sequence (list per-step columns in data.categorical or as features)")
        rows.append(_cells(col)[order[starts]])
        attrs["names"].append(name)
        attrs["dtypes"].append(str(col.dtype))
        attrs["categorical"].append(bool(is_categorical_attribute(col)))
    if rows:
        attrs["rows"] = np.stack(rows, axis=1)
    cats = {"names": list(wanted["categorical"]), "dtypes": [str(column[n].dtype) for n in wanted["categorical"]],
            "arrays": []}
    if wanted["categorical"]:
        table = np.stack([_cells(column[n])[order] for n in wanted["categorical"]], axis=1)
        cats["arrays"] = np.split(table, bounds)
        missing = np.argwhere(pd.isna(table))
        if len(missing):
            r, j = missing[0]
            raise DataError(f"{where(order[r], wanted['categorical'][j])}: missing category; expected a label on "
                            "every step of a categorical column (fill it in, e.g. with its own label 'unknown')")
    return {"attributes": attrs, "categorical": cats}


def concat_extra(parts):
    """Several files' extras -> one (the same columns in every file)."""
    if not parts or parts[0] is None:
        return None
    attrs = dict(parts[0]["attributes"], rows=np.concatenate([p["attributes"]["rows"] for p in parts]))
    cats = dict(parts[0]["categorical"], arrays=[a for p in parts for a in p["categorical"]["arrays"]])
    return {"attributes": attrs, "categorical": cats}


def subset_extra(extra, keep):
    if extra is None:
        return None
    keep = list(keep)
    attrs = dict(extra["attributes"], rows=extra["attributes"]["rows"][keep])
    cats = dict(extra["categorical"], arrays=[extra["categorical"]["arrays"][i] for i in keep]
                if extra["categorical"]["arrays"] else [])
    return {"attributes": attrs, "categorical": cats}
