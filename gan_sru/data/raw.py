"""Sequences as read from the user's data, before the missing-value policy, and where each value came from.

Every reader (tables, arrays) returns a RawData: N float64 arrays (L_i, C) in the data's own units with NaN
where a value is missing, optional time values, feature names, and for every sequence a Place that names
it in messages ("sequence 'q' (first row at line 4)") and names any of its values ("line 5, column 'a'").
"""
import numpy as np

from gan_sru import DataError

FLOAT32_MAX = float(np.finfo(np.float32).max)


def one_line(error):
    """A library's error message on one line (Arrow and Thrift messages span several), for a DataError."""
    return " ".join(str(error).split())


class ArrayPlace:
    """Sequence `index` of an array file: values are named by step and feature."""

    def __init__(self, file, index):
        self.file, self.index = file, index

    def label(self):
        return f"sequence {self.index}"

    def at(self, step, feature):
        return f"sequence {self.index}, step {step}, feature {feature}"


class RowNames:
    """Names positional data rows in messages: 'line N' in a CSV file (blank lines skipped, as the reader
    does), 'row N' in a Parquet file or DataFrame (N = the position, from 0)."""

    def __init__(self, kind, header="columns", line_of=None):
        self.kind, self.header, self._line_of = kind, header, line_of

    def number(self, row):
        return self._line_of(int(row)) if self._line_of else int(row)

    def __call__(self, row):
        return f"{self.kind} {self.number(row)}"

    def pair(self, a, b):
        a, b = sorted((self.number(a), self.number(b)))
        return f"{self.kind}s {a} and {b}"


class TablePlace:
    """One sequence of a table: `seq_id` (None for a file that is one sequence), `rows` (L_i,) positional rows
    in time order, `columns` the C feature names."""

    def __init__(self, file, seq_id, rows, rownames, columns):
        self.file, self.seq_id, self.rows, self.rownames, self.columns = file, seq_id, rows, rownames, columns

    def label(self):
        if self.seq_id is None:
            return "the table's one sequence (no id column)"
        return f"sequence {self.seq_id!r} (first row at {self.rownames(min(self.rows)) if len(self.rows) else '-'})"

    def at(self, step, feature):
        seq = "" if self.seq_id is None else f" (sequence {self.seq_id!r})"
        return f"{self.rownames(self.rows[step])}, column {self.columns[feature]!r}{seq}"


class RawData:
    """arrays: list of N float64 (L_i, C), NaN = missing. places: N Places. times: list of N (L_i,) float64
    (numbers, or seconds since 1970-01-01 UTC for dates) or None (row order). feature_names: C names or None.
    info: what the reader found and decided (layout, columns, time kind, notes), for the data summary.
    extras: attribute and categorical columns (gan_sru.data.columns), or None."""

    def __init__(self, arrays, places, times=None, feature_names=None, info=None, extras=None):
        self.arrays, self.places, self.times = arrays, places, times
        self.feature_names = feature_names
        self.info = dict(info or {})
        self.extras = extras

    def __len__(self):
        return len(self.arrays)

    def subset(self, keep):
        """The sequences at indices `keep`, same names and info."""
        keep = list(keep)
        times = None if self.times is None else [self.times[i] for i in keep]
        from .columns import subset_extra

        return RawData([self.arrays[i] for i in keep], [self.places[i] for i in keep], times,
                       self.feature_names, self.info, subset_extra(self.extras, keep))

    def check(self, source):
        """Refuse no sequences, no features, mixed feature counts, sequences under 2 steps, inf values and
        values beyond float32's range (they would become inf in training and in the samples)."""
        if not self.arrays:
            raise DataError(f"{source}: holds no sequences")
        num_features = self.arrays[0].shape[1]
        if num_features == 0:
            raise DataError(f"{source}: sequences have 0 features")
        for a, place in zip(self.arrays, self.places):
            if a.shape[1] != num_features:
                raise DataError(f"{place.file}: {place.label()} has {a.shape[1]} features; the first sequence "
                                f"has {num_features}")
            if a.shape[0] < 2:
                raise DataError(f"{place.file}: {place.label()} has {a.shape[0]} step(s); expected at least 2")
            with np.errstate(invalid="ignore"):
                bad = np.argwhere(np.abs(a) > FLOAT32_MAX)  # inf too; NaN (missing) compares False
            if len(bad):
                step, feature = bad[0]
                value = a[step, feature]
                what = "is not finite" if np.isinf(value) else \
                    f"is outside float32's range (+-{FLOAT32_MAX:.4g}), in which the model computes"
                raise DataError(f"{place.file}: {place.at(step, feature)}: value {value} {what}")
        return self


def merge(parts, source):
    """Several files' RawData -> one. Table files must hold the same feature columns (reordered to the
    first file's order); array files the same number of features."""
    first = next((p for p in parts if p.feature_names is not None), parts[0])
    names = first.feature_names
    arrays, places, times = [], [], []
    for part in parts:
        file = part.places[0].file if part.places else "?"
        if names is not None and part.feature_names is not None and part.feature_names != names:
            if sorted(part.feature_names) != sorted(names):
                missing = sorted(set(names) - set(part.feature_names))
                extra = sorted(set(part.feature_names) - set(names))
                raise DataError(f"{file}: feature columns {part.feature_names} differ from those of "
                                f"{first.places[0].file} {names} (missing {missing}, extra {extra}); every file "
                                "must hold the same features, or list them in data.csv_feature_columns")
            order = [part.feature_names.index(n) for n in names]
            part = RawData([a[:, order] for a in part.arrays], part.places, part.times, names, part.info,
                           part.extras)
            for place in part.places:
                place.columns = names
        if arrays and part.arrays and part.arrays[0].shape[1] != arrays[0].shape[1]:
            raise DataError(f"{file}: sequences have {part.arrays[0].shape[1]} features; {places[0].file} has "
                            f"{arrays[0].shape[1]}")
        arrays += part.arrays
        places += part.places
        times += part.times if part.times is not None else [None] * len(part.arrays)
    info = dict(parts[0].info)
    layouts = sorted({p.info.get("layout") for p in parts})
    info["layout"] = layouts[0] if len(layouts) == 1 else "mixed (" + ", ".join(layouts) + ")"
    info["notes"] = sorted({n for p in parts for n in p.info.get("notes", [])})
    kinds = {p.info.get("time_kind") for p in parts}
    if len(kinds) > 1:
        raise DataError(f"{source}: some files have times as numbers, others as dates or none "
                        f"({sorted(str(k) for k in kinds)}); expected the same kind in every file")
    has_times = all(t is not None for t in times)
    from .columns import concat_extra

    return RawData(arrays, places, times if has_times else None, names, info, concat_extra([p.extras for p in parts]))
