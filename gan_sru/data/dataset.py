"""A dataset of scaled sequences, built from the config's `data` section, and its train/holdout split."""
from typing import NamedTuple

import numpy as np

from gan_sru import DataError

from .buckets import BucketSpec
from .builtin import make_factors, make_lorenz96, make_sines
from .conditional_data import CLASSES_DEFAULTS, encode_raw, with_encoded
from .missing import apply_missing, drop_windows
from .scaling import MinMaxScaler

_SPLIT_STREAM = 0x5917
AUTO_WINDOW = 24  # window length for one long series when data.window is unset (at most half the series)
BUILTIN_MAKERS = {"factors": make_factors, "lorenz96": make_lorenz96}  # (N, L, C, seed) -> list of (L, C)


class Dataset:
    """N sequences scaled to [0, 1].

    sequences: list of float32 arrays (L_i, C); lengths: int64 (N,); num_features: C;
    scaler: the MinMaxScaler that maps data units to [0, 1]; source: the built-in set's name ('sines',
    'sines_varlen', 'factors', 'lorenz96') or the file path; info: what was read and done on the way (layout,
    columns, missing values, time spacing, windows), a JSON-able dict that gan_sru.data.summary turns into the
    data summary.
    Conditional data (gan_sru.data.attributes): `encoding` (an Encoding, else None); sequences are (L_i, C + K),
    the continuous features then the categorical features' one-hot blocks (the scaler maps those as identity);
    `attributes` (N, W) float32 the encoded per-sequence attributes (W may be 0), else None.
    """

    def __init__(self, sequences, scaler, source, num_features=None, info=None, attributes=None, encoding=None,
                 spans=None):
        self.sequences = sequences
        self.lengths = np.array([len(s) for s in sequences], dtype=np.int64)
        self.num_features = int(num_features if num_features is not None else sequences[0].shape[1])
        self.scaler = scaler
        self.source = source
        self.info = info if info is not None else {}
        self.attributes, self.encoding = attributes, encoding
        # windows cut from longer sequences: (N, 2) int64, the source sequence's index and the window's first step
        # (their steps are [start, start + length)), so a split can tell which windows share steps; else None
        self.spans = None if spans is None else np.asarray(spans, np.int64).reshape(len(sequences), 2)

    def __len__(self):
        return len(self.sequences)

    def subset(self, indices):
        """The sequences at `indices`, same scaler, source and info."""
        indices = np.asarray(indices, np.int64)
        attrs = None if self.attributes is None else self.attributes[indices]
        spans = None if self.spans is None else self.spans[indices]
        return Dataset([self.sequences[i] for i in indices], self.scaler, self.source, self.num_features, self.info,
                       attrs, self.encoding, spans)

    def split_plan(self, holdout_fraction, seed, how="random", blocks=5):
        """Which sequences train and which are held out: a SplitPlan(train, holdout, how, blocks, left_out).

        how: "random" (a deterministic random share) or "blocks" (`blocks` contiguous runs of the sequences in
        their order, one at a random place in each of `blocks` equal stretches, so the held-out part spreads
        over the data; training windows that share a step with a held-out window are left out). At least one
        sequence stays in train; a positive fraction holds out at least one sequence when there are two or
        more."""
        if not 0 <= holdout_fraction < 1:
            raise ValueError(f"holdout_fraction must be in [0, 1), got {holdout_fraction}")
        if how not in HOLDOUT_SPLITS:
            raise ValueError(f"holdout split {how!r}: expected one of {', '.join(HOLDOUT_SPLITS)}")
        n = len(self)
        n_hold = round(n * holdout_fraction)
        if holdout_fraction > 0:
            n_hold = max(n_hold, 1)
        n_hold = max(0, min(n_hold, n - 1))
        rng = np.random.default_rng([seed, _SPLIT_STREAM])
        if how == "random" or n_hold == 0:
            order = rng.permutation(n)
            return SplitPlan(np.sort(order[n_hold:]), np.sort(order[:n_hold]), how, 0, 0)
        held = _held_blocks(n, n_hold, max(1, min(int(blocks), n_hold)), rng)
        hold = np.zeros(n, bool)
        hold[held] = True
        overlap = self._overlapping(hold) & ~hold
        train = np.flatnonzero(~hold & ~overlap)
        if not len(train):
            raise DataError(f"{self.source}: holding out {n_hold} of {n} windows in {blocks} blocks leaves no "
                            f"training window that shares no step with them; expected a longer series, a "
                            f"smaller data.holdout_fraction or data.window, or data.holdout_split: random")
        runs = int(np.sum(np.diff(np.concatenate([[0], hold.astype(np.int8)])) == 1))
        return SplitPlan(train, np.flatnonzero(hold), how, runs, int(overlap.sum()))

    def split(self, holdout_fraction, seed, how="random", blocks=5):
        """-> (train, holdout) Datasets, as split_plan chooses them."""
        plan = self.split_plan(holdout_fraction, seed, how, blocks)
        return self.subset(plan.train), self.subset(plan.holdout)

    def _overlapping(self, hold):
        """(N,) bool: the sequences that share a step of their source sequence with a sequence where `hold`."""
        if self.spans is None:
            return np.zeros(len(self), bool)
        out = np.zeros(len(self), bool)
        src, start, end = self.spans[:, 0], self.spans[:, 1], self.spans[:, 1] + self.lengths
        for s in np.unique(src[hold]):
            mine = src == s
            covered = np.zeros(int(end[mine].max()) + 1, np.int64)  # +1 at a held-out start, -1 at its end
            np.add.at(covered, start[mine & hold], 1)
            np.add.at(covered, end[mine & hold], -1)
            steps = np.concatenate([[0], np.cumsum(np.cumsum(covered) > 0)])  # held-out steps before each step
            out[mine] = steps[end[mine]] > steps[start[mine]]
        return out


HOLDOUT_SPLITS = ("random", "blocks")


class SplitPlan(NamedTuple):
    """A split's indices (sorted), its kind ("random" or "blocks"), the held-out runs (blocks) and how many
    training windows were left out for sharing steps with held-out ones."""
    train: np.ndarray
    holdout: np.ndarray
    how: str
    blocks: int
    left_out: int


def _held_blocks(n, n_hold, k, rng):
    """Indices of `n_hold` of range(n) in k contiguous blocks, block j at a random place in the j-th of k equal
    stretches (a block no longer than its stretch)."""
    edges = np.round(np.arange(k + 1) * n / k).astype(np.int64)
    sizes = np.diff(np.round(np.arange(k + 1) * n_hold / k).astype(np.int64))
    out = []
    for j in range(k):
        size = min(int(sizes[j]), int(edges[j + 1] - edges[j]))
        first = edges[j] + int(rng.integers(edges[j + 1] - edges[j] - size + 1))
        out.append(np.arange(first, first + size))
    return np.concatenate(out)


def load_dataset(data_cfg, seed, source=None):
    """The dataset that the `data` section of a resolved config describes, scaled to [0, 1].

    source: an in-memory pandas DataFrame, (N, L, C) array, list of (L_i, C) arrays or RawData read instead of
    data.path (with the same column keys, missing-value policy and windows), for the Python API to check its
    input before writing it.
    """
    kind = data_cfg["source"]
    if kind == "sines_classes" and source is None:
        from .builtin_classes import sines_classes_frame

        frame = sines_classes_frame(data_cfg["num_sequences"], data_cfg["seq_len"], data_cfg["num_features"],
                                    data_cfg["num_classes"], seed)
        source = frame
        data_cfg = dict(data_cfg, csv_id_column="id", csv_time_column="time", csv_feature_columns=None,
                        attributes=data_cfg.get("attributes") or CLASSES_DEFAULTS["attributes"],
                        categorical=data_cfg.get("categorical") or CLASSES_DEFAULTS["categorical"])
    if kind in ("sines", "sines_varlen") and source is None:
        min_len = data_cfg["min_len"] if kind == "sines_varlen" else None
        raw = make_sines(data_cfg["num_sequences"], data_cfg["seq_len"], data_cfg["num_features"], seed, min_len)
        return _scaled(raw, kind, None, {"layout": "built-in", "source": kind, "notes": []})
    if kind in BUILTIN_MAKERS and source is None:
        raw = BUILTIN_MAKERS[kind](data_cfg["num_sequences"], data_cfg["seq_len"], data_cfg["num_features"], seed)
        return _scaled(raw, kind, None, {"layout": "built-in", "source": kind, "notes": []})
    name, raw = _read(data_cfg, source)
    if kind == "sines_classes":
        name = kind
    raw, encoding = encode_raw(raw, data_cfg, name)
    window, stride = data_cfg.get("window"), data_cfg.get("window_stride", 1)
    reason = "data.window"
    if window is None and raw.info.get("layout") == "wide" and len(raw) == 1:
        # one long series is no training set: cut it into windows, and say so in the summary
        window = max(2, min(AUTO_WINDOW, len(raw.arrays[0]) // 2))
        reason = (f"data.window unset, one series of {len(raw.arrays[0])} steps: cut automatically; set data.window "
                  "to choose the length")
    missing = apply_missing(raw, data_cfg.get("missing", "error"), name, windows=window is not None)
    raw = missing.raw
    if raw.info.get("layout") == "wide":
        short = [i for i, a in enumerate(raw.arrays) if window is not None and len(a) < window]
        if short:
            place = raw.places[short[0]]
            raise DataError(f"{place.file}: the file is one sequence of {len(raw.arrays[short[0]])} rows (wide "
                            f"format), shorter than data.window ({window}); expected at least {window} rows, or "
                            "a smaller data.window")
    info = dict(raw.info, source=name, feature_names=raw.feature_names, missing=missing.report,
                sequences_read=len(raw), lengths_read=[len(a) for a in raw.arrays], time=time_spacing(raw))
    if kind == "sines_classes":
        info["layout"] = "built-in"
    dataset = _scaled(raw.arrays, name, raw, info, window, stride, missing.report, encoding)
    if window:
        dataset.info["window"]["reason"] = reason
    return dataset


def _read(data_cfg, source):
    from .columns import wanted_columns
    from .raw import RawData
    from .readers import MAX_FILE_BYTES, read_data, read_frame

    columns = (data_cfg["csv_id_column"], data_cfg["csv_time_column"], data_cfg["csv_feature_columns"])
    extra = wanted_columns(data_cfg.get("attributes"), data_cfg.get("categorical"))
    if source is None:
        return str(data_cfg["path"]), read_data(data_cfg["path"], *columns, extra=extra,
                                                max_file_bytes=data_cfg.get("max_file_bytes", MAX_FILE_BYTES))
    if isinstance(source, RawData):
        return source.places[0].file if source.places else "DataFrame", source
    if isinstance(source, np.ndarray) or isinstance(source, (list, tuple)):
        from .arrays import array_sequences

        if extra:
            raise DataError("array: data.attributes and data.categorical name columns of a table (a DataFrame, "
                            ".csv, .parquet); an array has none")
        if isinstance(source, (list, tuple)):  # ragged: a list of (L_i, C) arrays
            ragged = np.empty(len(source), dtype=object)
            ragged[:] = [np.asarray(s) for s in source]
            source = ragged
        return "array", array_sequences(source, None, "array").check("array")
    return "DataFrame", read_frame(source, *columns, extra=extra)


def _scaled(raw_arrays, name, raw, info, window=None, stride=1, report=None, encoding=None):
    """Fit the scaler (ignoring missing values), scale, cut windows, drop windows that hold NaN.
    encoding: the categorical features' one-hot blocks and the attributes ride along as columns (so windows and
    their drops keep them aligned); the attributes are split off again at the end."""
    try:
        scaler = MinMaxScaler().fit(raw_arrays)
    except ValueError as e:  # a feature whose every value is missing
        raise DataError(f"{name}: {e}; expected at least one value per feature") from None
    with np.errstate(over="ignore", invalid="ignore"):
        sequences = [scaler.transform(s).astype(np.float32) for s in raw_arrays]
    for i, (s, r) in enumerate(zip(sequences, raw_arrays)):
        if not np.all(np.isfinite(s) | np.isnan(r)):  # only when max - min overflows float64
            raise DataError(f"{name}: sequence {i}: values span a range too wide to scale to [0, 1] "
                            f"(min {scaler.min.tolist()}, max {scaler.max.tolist()})")
    if encoding is not None:
        sequences, scaler = with_encoded(sequences, scaler, raw, encoding, name)
    spans = None
    if window:
        sequences, spans = make_windows(sequences, window, stride, return_spans=True)
        if report is not None and report["policy"] == "drop" and report["values"]:
            kept = drop_windows(sequences, spans[:, 0], raw, report, window)
            sequences, spans = [sequences[k] for k in kept], spans[kept]
        info["window"] = {"length": window, "stride": stride}
    if encoding is None:
        return Dataset(sequences, scaler, name, info=info, spans=spans)
    width = encoding.num_features
    attributes = np.stack([s[0, width:] for s in sequences]).astype(np.float32)
    info["encoding"] = encoding.to_dict()
    return Dataset([np.ascontiguousarray(s[:, :width]) for s in sequences], scaler, name, info=info,
                   attributes=attributes, encoding=encoding, spans=spans)


def make_windows(sequences, window, stride=1, return_spans=False):
    """Cut each (L_i, C) sequence into windows (window, C) starting every `stride` steps.
    A sequence shorter than `window` is kept whole. return_spans: also an (N, 2) int64 array of each window's
    source index and first step."""
    out, spans = [], []
    for i, s in enumerate(sequences):
        starts = [0] if len(s) <= window else range(0, len(s) - window + 1, stride)
        for start in starts:
            out.append(s[start:start + window])
            spans.append((i, start))
    return (out, np.asarray(spans, np.int64).reshape(-1, 2)) if return_spans else out


def time_spacing(raw):
    """Steps between consecutive times: {'kind', 'first', 'step', 'min_step', 'max_step', 'irregular',
    'irregular_gaps', 'gaps'} (seconds for dates), or {'kind': None} without a time column."""
    kind = raw.info.get("time_kind")
    if raw.times is None or kind is None:
        return {"kind": None}
    diffs = np.concatenate([np.diff(t) for t in raw.times]) if raw.times else np.zeros(0)
    first = float(min(t[0] for t in raw.times))
    out = {"kind": kind, "first": first, "gaps": int(len(diffs))}
    if len(diffs):
        step = float(np.median(diffs))
        odd = np.abs(diffs - step) > 1e-9 * max(abs(step), 1e-300)
        out.update(step=step, min_step=float(diffs.min()), max_step=float(diffs.max()),
                   irregular=bool(odd.any()), irregular_gaps=int(odd.sum()))
    return out


class TrainingData(NamedTuple):
    """The data of a run as training sees it: all sequences (scaled), the train/holdout split, the buckets."""
    dataset: Dataset
    train: Dataset
    holdout: Dataset
    spec: BucketSpec


def training_data(cfg):
    """Load -> scale -> split -> buckets, from a resolved config: the one recipe used by the trainer, sampling,
    evaluation, the profiler, the benchmarks and the tests. Buckets come from every sequence's length, so
    any subset fits them."""
    dataset = load_dataset(cfg["data"], cfg["seed"])
    train, holdout = dataset.split(cfg["data"]["holdout_fraction"], cfg["seed"], cfg["data"]["holdout_split"],
                                   cfg["data"]["holdout_blocks"])
    return TrainingData(dataset, train, holdout, BucketSpec.from_lengths(dataset.lengths, cfg["data"]["num_buckets"]))
