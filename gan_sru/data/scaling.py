"""Per-feature min-max scaling to [0, 1] (the generator's output range) and back to data units."""
import numpy as np


class MinMaxScaler:
    """Per-feature min-max scaling to [0, 1]: y = (x - min) / (max - min); a constant feature maps to 0 and
    back to exactly its constant, whatever the generator made of it.

    Works on any array whose last axis holds the C features: (L, C), (N, L, C), (L, B, C).
    """

    def __init__(self, data_min=None, data_max=None):
        self.min = None if data_min is None else np.asarray(data_min, dtype=np.float64)
        self.max = None if data_max is None else np.asarray(data_max, dtype=np.float64)

    def fit(self, sequences):
        """Fit min and max of each feature over all steps of all sequences (list of (L_i, C)); NaN (missing
        values) are ignored, and a feature with no value at all is refused."""
        # fmin/fmax skip NaN without the warnings of nanmin
        self.min = np.fmin.reduce(np.stack([np.fmin.reduce(s, axis=0) for s in sequences]), axis=0).astype(np.float64)
        self.max = np.fmax.reduce(np.stack([np.fmax.reduce(s, axis=0) for s in sequences]), axis=0).astype(np.float64)
        if np.isnan(self.min).any():
            raise ValueError(f"feature {int(np.flatnonzero(np.isnan(self.min))[0])} has no value (all missing)")
        return self

    @property
    def scale(self):
        """(C,) max - min, with 1 where a feature is constant (so nothing divides by zero)."""
        span = self.max - self.min
        return np.where(span > 0, span, 1.0)

    @property
    def inverse_scale(self):
        """(C,) max - min, with 0 where a feature is constant: inverse() returns min there exactly."""
        return np.where(self.max > self.min, self.max - self.min, 0.0)

    def transform(self, a):
        """Scale to [0, 1] (on the fitted data). Float input keeps its dtype; other input gives float64."""
        a = np.asarray(a)
        return ((a - self.min) / self.scale).astype(_float_dtype(a), copy=False)

    def inverse(self, a):
        """Map scaled values back to the data's units: y * (max - min) + min; min itself for a constant feature."""
        a = np.asarray(a)
        dtype = _float_dtype(a)
        with np.errstate(invalid="ignore"):  # inf * 0 on a constant feature: that value becomes min below
            out = a * self.inverse_scale + self.min
        return np.where(self.max > self.min, out, self.min).astype(dtype, copy=False)

    def to_dict(self):
        """Plain lists, for JSON."""
        return {"min": self.min.tolist(), "max": self.max.tolist()}

    @classmethod
    def from_dict(cls, d):
        if len(d["min"]) != len(d["max"]):
            raise ValueError(f"scaler: {len(d['min'])} minima but {len(d['max'])} maxima")
        return cls(d["min"], d["max"])


def _float_dtype(a):
    return a.dtype if a.dtype.kind == "f" else np.float64
