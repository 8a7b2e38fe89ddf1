"""The encoding of per-sequence attributes and per-step categorical features, and the way back.

    enc = Encoding.fit(raw.extras, num_continuous=C, max_categories=50, source=name)
    attrs = enc.encode_attributes(rows)      # (N, W) float32: one-hot blocks and min-max scaled numbers
    onehot = enc.encode_steps(cat_arrays)    # list of (L_i, K) float32: one one-hot block per categorical feature
    labels = enc.decode_steps(x)             # (..., J) object: each block's argmax as its original label

A sequence of a conditional run is (L, C + K): the C continuous features (min-max scaled) and then one one-hot
block per categorical feature (K = the sum of their category counts). Attributes travel beside it, (W,) per
sequence. The encoding is JSON-able (`to_dict`): the checkpoint and the run folder keep it, so that samples decode
to the training labels and conditions are checked against the categories seen in training.

Attribute kinds (categorical.is_categorical_attribute): text, booleans and integers with at most 10 distinct
values are categorical (one-hot); floats and integers with more values are numeric (min-max to [0, 1]).
"""
import numpy as np

from gan_sru import DataError

from .categorical import Categories


class MissingAttribute(DataError):
    """A missing attribute value that data.missing does not allow."""


def drop_missing_attributes(raw, policy, source):
    """Sequences whose attribute is missing: refused under data.missing error or interpolate (an attribute has no
    neighbours to interpolate from), left out under drop. Returns the RawData and a note (or None)."""
    if raw.extras is None or not raw.extras["attributes"]["names"]:
        return raw, None
    import pandas as pd

    rows = raw.extras["attributes"]["rows"]
    gone = pd.isna(pd.DataFrame(rows)).to_numpy()
    if not gone.any():
        return raw, None
    i, j = np.argwhere(gone)[0]
    name = raw.extras["attributes"]["names"][j]
    if policy != "drop":
        place = raw.places[i]
        raise MissingAttribute(f"{place.file}: attribute column {name!r} is missing for {place.label()} "
                               f"({int(gone.any(axis=1).sum())} sequences in all); data.missing is {policy!r}: an "
                               "attribute cannot be interpolated; set data.missing: drop, or fill it in the data")
    keep = np.flatnonzero(~gone.any(axis=1))
    if not len(keep):
        raise MissingAttribute(f"{source}: every sequence misses an attribute (column {name!r}); data.missing: drop "
                               "leaves no sequence")
    return raw.subset(keep), f"dropped {len(raw) - len(keep)} sequences whose attributes are missing"


class Encoding:
    """attributes: list of {"name", "kind": "categorical", "categories": Categories} or {"name", "kind": "numeric",
    "min", "max", "dtype"}; categorical: list of Categories (per-step features); num_continuous: C."""

    def __init__(self, attributes, categorical, num_continuous):
        self.attributes, self.categorical, self.num_continuous = attributes, categorical, int(num_continuous)

    # ------------------------------------------------------------ sizes
    @property
    def attr_names(self):
        return [a["name"] for a in self.attributes]

    @property
    def attr_width(self):
        return sum(len(a["categories"]) if a["kind"] == "categorical" else 1 for a in self.attributes)

    @property
    def cat_sizes(self):
        return [len(c) for c in self.categorical]

    @property
    def num_features(self):
        return self.num_continuous + sum(self.cat_sizes)

    def blocks(self):
        """[(start, stop)] of each categorical feature's one-hot block in a (..., C + K) sequence."""
        out, start = [], self.num_continuous
        for k in self.cat_sizes:
            out.append((start, start + k))
            start += k
        return out

    def attr_blocks(self):
        """[(start, stop)] of each attribute in the (W,) encoded attributes."""
        out, start = [], 0
        for a in self.attributes:
            k = len(a["categories"]) if a["kind"] == "categorical" else 1
            out.append((start, start + k))
            start += k
        return out

    def class_block(self):
        """(start, stop) of the first categorical attribute (the class) in the encoded attributes, or None."""
        for a, block in zip(self.attributes, self.attr_blocks()):
            if a["kind"] == "categorical":
                return block
        return None

    # ------------------------------------------------------------ fitting
    @classmethod
    def fit(cls, extras, num_continuous, max_categories, source):
        attributes = []
        a = extras["attributes"]
        for j, name in enumerate(a["names"]):
            col = a["rows"][:, j]
            if a["categorical"][j]:
                cats = Categories.fit(name, col, max_categories, a["dtypes"][j], where=source)
                attributes.append({"name": name, "kind": "categorical", "categories": cats})
            else:
                v = col.astype(np.float64)
                attributes.append({"name": name, "kind": "numeric", "min": float(v.min()), "max": float(v.max()),
                                   "dtype": a["dtypes"][j]})
        c = extras["categorical"]
        categorical = [Categories.fit(name, np.concatenate([arr[:, j] for arr in c["arrays"]]), max_categories,
                                      c["dtypes"][j], where=source) for j, name in enumerate(c["names"])]
        return cls(attributes, categorical, num_continuous)

    # ------------------------------------------------------------ attributes
    def encode_attributes(self, rows, where=None):
        """(N, A) labels / numbers (object) -> (N, W) float32."""
        rows = np.asarray(rows, dtype=object).reshape(-1, len(self.attributes))
        parts = []
        for j, a in enumerate(self.attributes):
            if a["kind"] == "categorical":
                parts.append(a["categories"].one_hot(rows[:, j], where))
            else:
                try:
                    v = rows[:, j].astype(np.float64)
                except (TypeError, ValueError):
                    raise DataError(f"{where or 'data'}: attribute {a['name']!r}: {rows[0, j]!r} is not a number; "
                                    "expected a number (it is numeric in training)") from None
                if not np.isfinite(v).all():
                    raise DataError(f"{where or 'data'}: attribute {a['name']!r}: missing or not finite values; "
                                    "expected numbers")
                span = a["max"] - a["min"]
                parts.append(((v - a["min"]) / (span if span > 0 else 1.0)).astype(np.float32)[:, None])
        return np.concatenate(parts, axis=1) if parts else np.zeros((len(rows), 0), np.float32)

    def decode_attributes(self, encoded):
        """(N, W) -> (N, A) object: labels for categorical attributes (block argmax), numbers in data units."""
        encoded = np.asarray(encoded)
        out = np.empty((len(encoded), len(self.attributes)), dtype=object)
        for j, (a, (s, e)) in enumerate(zip(self.attributes, self.attr_blocks())):
            if a["kind"] == "categorical":
                out[:, j] = a["categories"].decode(encoded[:, s:e].argmax(axis=1))
            else:
                span = a["max"] - a["min"]
                out[:, j] = encoded[:, s].astype(np.float64) * (span if span > 0 else 1.0) + a["min"]
        return out

    # ------------------------------------------------------------ per-step categorical features
    def encode_steps(self, arrays, where=None):
        """list of (L_i, J) labels -> list of (L_i, K) float32 one-hot blocks side by side."""
        return [np.concatenate([c.one_hot(a[:, j], where) for j, c in enumerate(self.categorical)], axis=1)
                if self.categorical else np.zeros((len(a), 0), np.float32) for a in arrays]

    def step_codes(self, x):
        """(..., C + K) -> int (..., J): each block's argmax."""
        x = np.asarray(x)
        return np.stack([x[..., s:e].argmax(axis=-1) for s, e in self.blocks()], axis=-1) if self.categorical \
            else np.zeros(x.shape[:-1] + (0,), np.int64)

    def decode_steps(self, x):
        """(..., C + K) -> (..., J) object: the original labels."""
        codes = self.step_codes(x)
        out = np.empty(codes.shape, dtype=object)
        for j, c in enumerate(self.categorical):
            out[..., j] = c.decode(codes[..., j])
        return out

    # ------------------------------------------------------------ storage
    def to_dict(self):
        attrs = [dict(a, categories=a["categories"].to_dict()) if a["kind"] == "categorical" else dict(a)
                 for a in self.attributes]
        return {"attributes": attrs, "categorical": [c.to_dict() for c in self.categorical],
                "num_continuous": self.num_continuous}

    @classmethod
    def from_dict(cls, d):
        if not d:
            return None
        attrs = [dict(a, categories=Categories.from_dict(a["categories"])) if a["kind"] == "categorical" else dict(a)
                 for a in d["attributes"]]
        return cls(attrs, [Categories.from_dict(c) for c in d["categorical"]], d["num_continuous"])
