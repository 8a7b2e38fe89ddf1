"""Categorical values (per-step features and per-sequence attributes): their category lists, one-hot codes and
the way back to the original labels.

    cats = Categories.fit("state", values, max_categories=50)    # sorted distinct labels, refused over the max
    onehot = cats.one_hot(values)                               # (..., K) float32
    labels = cats.decode(onehot.argmax(-1))                     # the original labels (str, int or bool)

The category list is JSON-able (`to_dict`) and travels in the checkpoint and the run folder, so samples decode
to the training data's labels and a generator can only emit categories it was trained on.
"""
import numpy as np

from gan_sru import DataError

# integers with at most this many distinct values are categorical attributes; more are numeric
INT_CATEGORICAL_MAX = 10


def plain(label):
    """A label as JSON keeps it: numpy scalars become Python bool / int / float / str."""
    if isinstance(label, (bool, np.bool_)):
        return bool(label)
    if isinstance(label, (int, np.integer)):
        return int(label)
    if isinstance(label, (float, np.floating)):
        return int(label) if float(label).is_integer() else float(label)
    return str(label)


def _sort_key(label):
    return (0, label, "") if isinstance(label, (bool, int, float)) else (1, 0, str(label))


class TooManyCategories(DataError):
    """A categorical column with more distinct values than data.max_categories."""


class Categories:
    """name: the column; labels: the K distinct labels, sorted (numbers first, then text); dtype: the
    column's pandas dtype as text (to give decoded labels back in it)."""

    def __init__(self, name, labels, dtype="object"):
        self.name, self.labels, self.dtype = name, [plain(v) for v in labels], str(dtype)
        self._index = {self._key(v): k for k, v in enumerate(self.labels)}

    @staticmethod
    def _key(label):
        label = plain(label)
        return (type(label).__name__ if isinstance(label, (bool, str)) else "num", label)

    @classmethod
    def fit(cls, name, values, max_categories, dtype="object", where=None):
        """The sorted distinct labels of `values` (any iterable of labels); refused over `max_categories`."""
        distinct = {cls._key(v): plain(v) for v in values}
        if len(distinct) > max_categories:
            shown = sorted(distinct.values(), key=_sort_key)[:5]
            raise TooManyCategories(f"{where or 'data'}: column {name!r} holds {len(distinct)} distinct values "
                                    f"(e.g. {shown}); expected at most data.max_categories = {max_categories} for a "
                                    "categorical column (raise data.max_categories, or leave the column out)")
        return cls(name, sorted(distinct.values(), key=_sort_key), dtype)

    def __len__(self):
        return len(self.labels)

    def codes(self, values, where=None):
        """Labels -> int64 codes (0..K-1); a label outside the list is a DataError naming the allowed ones."""
        flat = np.asarray(values, dtype=object).ravel()
        out = np.empty(len(flat), np.int64)
        for i, v in enumerate(flat):
            k = self._index.get(self._key(v))
            if k is None:
                raise DataError(f"{where or 'data'}: column {self.name!r}: value {plain(v)!r} was never seen in "
                                f"training; expected one of {self.labels}")
            out[i] = k
        return out.reshape(np.shape(values))

    def one_hot(self, values, where=None):
        """Labels (...) -> float32 (..., K)."""
        return np.eye(len(self), dtype=np.float32)[self.codes(values, where)]

    def decode(self, codes):
        """int codes (...) -> an object array (...) of the labels."""
        table = np.empty(len(self), dtype=object)
        table[:] = self.labels
        return table[np.asarray(codes, np.int64)]

    def to_dict(self):
        return {"name": self.name, "labels": self.labels, "dtype": self.dtype}

    @classmethod
    def from_dict(cls, d):
        return cls(d["name"], d["labels"], d.get("dtype", "object"))


def is_categorical_attribute(series):
    """The rule for attributes: text, booleans and pandas categoricals are categorical; integers with at most
    INT_CATEGORICAL_MAX distinct values too; other numbers (floats, integers with more values) are numeric."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(series) or isinstance(series.dtype, pd.CategoricalDtype):
        return True
    if pd.api.types.is_integer_dtype(series):
        return series.nunique(dropna=True) <= INT_CATEGORICAL_MAX
    if pd.api.types.is_numeric_dtype(series):
        return False
    numbers = pd.to_numeric(series.dropna().astype(object), errors="coerce")
    return bool(numbers.isna().any()) or len(numbers) == 0
