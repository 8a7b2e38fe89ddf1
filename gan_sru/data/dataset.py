"""A dataset of scaled sequences, built from the config's `data` section, and its train/holdout split."""
import numpy as np

from gan_sru import DataError

from .builtin import make_factors, make_lorenz96, make_sines
from .readers import read_sequences
from .scaling import MinMaxScaler

_SPLIT_STREAM = 0x5917
BUILTIN_MAKERS = {"factors": make_factors, "lorenz96": make_lorenz96}  # (N, L, C, seed) -> list of (L, C)


class Dataset:
    """N sequences scaled to [0, 1].

    sequences: list of float32 arrays (L_i, C); lengths: int64 (N,); num_features: C;
    scaler: the MinMaxScaler that maps data units to [0, 1]; source: the built-in set's name ('sines',
    'sines_varlen', 'factors', 'lorenz96') or the file path.
    """

    def __init__(self, sequences, scaler, source, num_features=None):
        self.sequences = sequences
        self.lengths = np.array([len(s) for s in sequences], dtype=np.int64)
        self.num_features = int(num_features if num_features is not None else sequences[0].shape[1])
        self.scaler = scaler
        self.source = source

    def __len__(self):
        return len(self.sequences)

    def subset(self, indices):
        """The sequences at `indices`, same scaler and source."""
        return Dataset([self.sequences[i] for i in indices], self.scaler, self.source, self.num_features)

    def split(self, holdout_fraction, seed):
        """Deterministic random split -> (train, holdout). At least one sequence stays in train;
        a positive fraction holds out at least one sequence when there are two or more."""
        if not 0 <= holdout_fraction < 1:
            raise ValueError(f"holdout_fraction must be in [0, 1), got {holdout_fraction}")
        n = len(self)
        n_hold = round(n * holdout_fraction)
        if holdout_fraction > 0:
            n_hold = max(n_hold, 1)
        n_hold = max(0, min(n_hold, n - 1))
        order = np.random.default_rng([seed, _SPLIT_STREAM]).permutation(n)
        return self.subset(np.sort(order[n_hold:])), self.subset(np.sort(order[:n_hold]))


def load_dataset(data_cfg, seed):
    """The dataset that the `data` section of a resolved config describes, scaled to [0, 1]."""
    source = data_cfg["source"]
    if source in ("sines", "sines_varlen"):
        min_len = data_cfg["min_len"] if source == "sines_varlen" else None
        raw = make_sines(data_cfg["num_sequences"], data_cfg["seq_len"], data_cfg["num_features"], seed, min_len)
        name = source
    elif source in BUILTIN_MAKERS:
        raw = BUILTIN_MAKERS[source](data_cfg["num_sequences"], data_cfg["seq_len"], data_cfg["num_features"], seed)
        name = source
    else:
        name = str(data_cfg["path"])
        raw = read_sequences(name, data_cfg["csv_id_column"], data_cfg["csv_time_column"],
                             data_cfg["csv_feature_columns"])
    scaler = MinMaxScaler().fit(raw)
    with np.errstate(over="ignore", invalid="ignore"):
        sequences = [scaler.transform(s).astype(np.float32) for s in raw]
    for i, s in enumerate(sequences):
        if not np.all(np.isfinite(s)):  # only when max - min overflows float64
            raise DataError(f"{name}: sequence {i}: values span a range too wide to scale to [0, 1] "
                            f"(min {scaler.min.tolist()}, max {scaler.max.tolist()})")
    if source == "file" and data_cfg.get("window"):
        sequences = make_windows(sequences, data_cfg["window"], data_cfg.get("window_stride", 1))
    return Dataset(sequences, scaler, name)


def make_windows(sequences, window, stride=1):
    """Cut each (L_i, C) sequence into windows (window, C) starting every `stride` steps.
    A sequence shorter than `window` is kept whole."""
    out = []
    for s in sequences:
        if len(s) <= window:
            out.append(s)
        else:
            out.extend(s[start:start + window] for start in range(0, len(s) - window + 1, stride))
    return out
