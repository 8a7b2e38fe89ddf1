"""Sampling from a generator: in-process (during training) and from a run folder's checkpoint."""
import os

import nnabla as nn
import numpy as np

from gan_sru import CheckpointError, DataError
from gan_sru.config import load_config, resolve_config
from gan_sru.data import BucketSpec, MinMaxScaler, training_data
from gan_sru.networks import generator_graph, sample_noise
from gan_sru.train.run_folder import RunFolder

_GENERATE_STREAM = 11


class Sampler:
    """Sequences from the generator whose parameters are under scope "G", in the [0, 1] scale.

    One inference graph per (length, batch size), built on first use and kept: sampling again (the
    trainer's periodic pictures, evaluate's several sets) reuses it.
    """

    def __init__(self, gcfg, num_features, max_len, batch_size=256, cond=None):
        self.gcfg, self.num_features, self.max_len, self.batch_size = gcfg, num_features, max_len, batch_size
        self.cond = cond  # a conditional run's Encoding (gan_sru.data.attributes), else None
        self.graphs = {}

    def graph(self, length, batch_size):
        key = (length, batch_size)
        if key not in self.graphs:
            self.graphs[key] = generator_graph(self.gcfg, length, batch_size, self.num_features, self.max_len,
                                               train=False, cond=self.cond)
        return self.graphs[key]

    def sample(self, length, num, seed, lengths=None, attrs=None):
        """(num, length, C) float32; lengths: optional (num,) valid lengths (right-padded with 0).
        attrs: (num, W) encoded attributes, for a run conditioned on attributes. Categorical blocks are one-hot:
        a categorical draw from G's distribution (the Gumbel-max trick, as in training), seeded like the noise.
        The same seed gives the same sequences."""
        rng = np.random.default_rng([seed, _GENERATE_STREAM])
        lengths = np.full(num, length) if lengths is None else np.asarray(lengths)
        out = np.zeros((num, length, self.num_features), np.float32)
        for start in range(0, num, self.batch_size):
            b = min(self.batch_size, num - start)
            g = self.graph(length, b)
            for k, v in sample_noise(self.gcfg, length, b, rng, self.cond).items():
                g.noise[k].d = v
            if g.attrs is not None:
                if attrs is None:
                    raise ValueError("Sampler.sample: the run is conditioned on attributes; pass attrs (num, W)")
                g.attrs.d = attrs[start:start + b]
            g.mask.d = (np.arange(length)[:, None] < lengths[start:start + b][None, :]).astype(np.float32)
            g.fake.forward(clear_buffer=True)
            out[start:start + b] = np.transpose(g.fake.d, (1, 0, 2))
        return out


def check_run_path(run_path):
    """Refuse a run path that is not a folder, with the message the CLI prints."""
    if not os.path.isdir(run_path):
        raise CheckpointError(f"--run {run_path}: no such run folder (expected e.g. runs/<name>, made by "
                              "`gan-sru train`)")


class TrainedRun:
    """A run folder's config and one checkpoint, with the generator's parameters loaded into nnabla."""

    def __init__(self, run_path, step=None):
        """step: a checkpoint step; "latest", the newest; "best", the one checkpoint selection chose
        (train.select); None, the selected one when the run has one, else the newest."""
        folder = RunFolder(run_path)
        if not os.path.isfile(folder.config_path):
            raise CheckpointError(f"{run_path}: not a run folder (no config.yaml)")
        listed = folder.list_checkpoints()
        try:
            self._pick(folder, step)
        except CheckpointError:
            if folder.list_checkpoints() == listed:
                raise
            self._pick(folder, step)  # training pruned or added a checkpoint while this one was read: again

    def _pick(self, folder, step):
        run_path = folder.path
        found = dict(folder.list_checkpoints())
        if not found:
            raise CheckpointError(f"{run_path}: the run has no checkpoint yet")
        from gan_sru.train.run_folder import Checkpoint
        from gan_sru.train.selection import read_selected_step

        ckpt = None
        if step in (None, "latest", "best"):
            newest = max(found)
            ckpt = Checkpoint.load(found[newest])
            selected = read_selected_step(ckpt.meta)
            if step == "best" and selected not in found:
                raise CheckpointError(
                    f"{run_path}: no selected checkpoint ("
                    + ("train.select was off" if selected is None else f"step {selected} is gone")
                    + f"); available: {sorted(found)}, or 'latest'")
            if step != "latest" and selected in found and selected != newest:
                step, ckpt = selected, None
            else:
                step = newest
        elif step not in found:
            raise CheckpointError(f"{run_path}: no checkpoint at step {step}; available: {sorted(found)}")
        ckpt = ckpt or Checkpoint.load(found[step])
        self.folder, self.step, self.checkpoint = folder, step, ckpt
        self.selected = read_selected_step(ckpt.meta) == step
        # through the schema: fills keys added since the run was made (with defaults that keep old behaviour);
        # options removed since do not affect sampling (gan_sru/config/retired.py)
        saved = ckpt.meta.get("config")
        self.cfg = (resolve_config(saved, where=f"{found[step]} (saved config)", removed="drop") if saved
                    else load_config(folder.config_path, removed="drop"))
        self.scaler = MinMaxScaler.from_dict(ckpt.meta["scaler"])
        self.spec = BucketSpec.from_dict(ckpt.meta["buckets"])
        self.num_features = int(ckpt.meta["num_features"])
        from gan_sru.data.attributes import Encoding

        self.encoding = Encoding.from_dict(ckpt.meta.get("conditioning"))  # None for an unconditional run
        self.max_len = int(self.spec.boundaries[-1])
        self.checkpoints = sorted(found)
        self._load_generator()

    def _load_generator(self):
        """Create the generator's parameters (by building a tiny graph) and copy the checkpoint's into them."""
        nn.clear_parameters()
        self.sampler = Sampler(self.cfg.model.generator, self.num_features, self.max_len, cond=self.encoding)
        self.sampler.graph(2, 1)
        with nn.parameter_scope("G"):
            params = {f"G/{k}": v for k, v in nn.get_parameters(grad_only=False).items()}
        for name, var in params.items():
            if name not in self.checkpoint.params:
                raise CheckpointError(f"checkpoint step {self.step} has no parameter {name}")
            # the moving average of G's weights when the run kept one (train.g_ema > 0)
            saved = self.checkpoint.params.get(f"EMA/{name}", self.checkpoint.params[name])
            if tuple(saved.shape) != tuple(var.shape):
                raise CheckpointError(f"checkpoint step {self.step}: parameter {name} has shape "
                                      f"{tuple(saved.shape)}, the config's generator has {tuple(var.shape)}")
            var.d = saved

    def sample(self, num, seed, length=None, lengths=None, attrs=None):
        """(num, L, C) in the [0, 1] scale plus the (num,) lengths used; attrs: (num, W) encoded attributes
        (conditional runs)."""
        L = int(length or self.max_len)
        if lengths is None:
            lengths = np.full(num, L)
        return self.sampler.sample(L, num, seed, lengths, attrs), lengths


_LENGTH_STREAM = 0x1E46  # separates the length draw from the generator's noise stream


def training_split(cfg, run_path=None, data=None, force=False):
    """The run's training and held-out real data, re-created from its config: (train, holdout) Datasets
    in the [0, 1] scale. run_path: the run folder, whose record finds the data wherever the command runs
    (gan_sru.train.run_folder.locate_data; data / force: --data and --force-data). A data file that has gone
    missing is a DataError saying what needs it."""
    if run_path is not None:
        from gan_sru.train.run_folder import locate_data

        cfg = locate_data(run_path, cfg, data, force)
    try:
        data = training_data(cfg)
    except DataError as e:
        raise DataError(f"cannot re-create the run's training data from its config: {e}") from e
    return data.train, data.holdout


class Reference:
    """What sampling needs of the training split, from the run folder's sampling.json (no data read):
    lengths (N,) int64; attributes (N, W) float32 encoded attribute rows or None; sequences: training sequences
    drawn at random over the split (float32 (L_i, C + K), [0, 1] scale; the first ones in records written
    before) with their attributes, for pictures. Runs written before the
    record existed re-read their data from the path their config records."""

    def __init__(self, lengths, attributes, sequences, reference_attributes):
        self.lengths = np.asarray(lengths, np.int64)
        self.attributes = None if attributes is None else np.asarray(attributes, np.float32)
        self.sequences = [np.asarray(x, np.float32) for x in sequences]
        self.reference_attributes = (None if reference_attributes is None
                                     else np.asarray(reference_attributes, np.float32).reshape(len(sequences), -1))

    @classmethod
    def of_run(cls, run):
        from gan_sru.data.summary import read_sampling

        path = os.path.join(run.folder.path, "sampling.json")
        try:
            record = read_sampling(run.folder.path)
            if record is None:
                train, _ = training_split(run.cfg, run.folder.path)
                return cls(train.lengths, train.attributes, train.sequences, train.attributes)
            ref = record["reference"]
            out = cls(record["lengths"], record["attributes"], ref["sequences"], ref["attributes"])
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:  # json's errors are ValueErrors
            if isinstance(e, DataError):
                raise
            raise CheckpointError(f"{path}: not a readable sampling record ({type(e).__name__}: {e}); expected "
                                  "the sampling.json that training writes") from None
        width = run.num_features
        if (out.lengths.ndim != 1 or not len(out.lengths) or out.lengths.min() < 1
                or any(x.ndim != 2 or x.shape[1] != width for x in out.sequences)
                or (out.attributes is not None and out.attributes.ndim != 2)):
            raise CheckpointError(f"{path}: not a readable sampling record (expected training lengths >= 1 and "
                                  f"reference sequences of {width} channels)")
        return out

    def pictures_set(self):
        """The reference as a Dataset-like object (sequences, lengths, attributes) for the plotting code."""
        from types import SimpleNamespace

        return SimpleNamespace(sequences=self.sequences, lengths=np.array([len(x) for x in self.sequences]),
                               attributes=self.reference_attributes)


def draw_lengths(train_lengths, num, seed, length=None):
    """(num,) int64 sequence lengths: all `length`; else all the single training length; else drawn with
    replacement from the training lengths (numpy Generator seeded by (seed, stream))."""
    train_lengths = np.asarray(train_lengths, dtype=np.int64)
    if length is not None:
        return np.full(num, int(length), dtype=np.int64)
    if len(np.unique(train_lengths)) == 1:
        return np.full(num, int(train_lengths[0]), dtype=np.int64)
    rng = np.random.default_rng([seed, _LENGTH_STREAM])
    return rng.choice(train_lengths, size=num, replace=True).astype(np.int64)


def generate_cut(run, lengths, seed, attrs=None):
    """Sequences of `run` (a TrainedRun) with the given (N,) lengths, in the [0, 1] scale: a list of
    float32 (L_i, C). The generator runs once at the longest length with a per-sequence mask.
    attrs: (N, W) encoded attributes of a run conditioned on attributes."""
    lengths = np.asarray(lengths)
    x, _ = run.sample(len(lengths), seed, length=int(lengths.max()), lengths=lengths, attrs=attrs)
    return [x[i, :n] for i, n in enumerate(lengths)]


LAYOUT_FILE = "api_layout.json"  # a run trained through the Python API: the input's columns and dtypes
MAX_NUM = 1_000_000  # sequences per call (generate --num, SequenceGAN.sample); more in calls with other seeds
MAX_LENGTH = 100_000  # steps per generated sequence
MAX_STEPS = 5_000_000  # sequences x longest length per call: G's activations for one call stay within a few GiB


def sample_size_error(num, longest):
    """Why `num` sequences of up to `longest` steps are too many for one call (a message), else None."""
    if longest > MAX_LENGTH:
        return f"{longest:,} steps: at most {MAX_LENGTH:,} steps per sequence"
    if num * longest > MAX_STEPS:
        return (f"{num:,} sequences of up to {longest:,} steps: at most {MAX_STEPS:,} sequence-steps per call "
                "(memory); ask for fewer sequences per call, with other seeds")
    return None


def run_layout(run_path):
    """How a run gives sequences back (gan_sru.data.layout): the API's recorded input layout, else a table's from
    its data summary (a run trained on a .csv/.parquet), else None (arrays and built-in data)."""
    import json

    from gan_sru.data.layout import table_layout
    from gan_sru.data.summary import read_summary

    path = os.path.join(run_path, LAYOUT_FILE)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    summary = read_summary(run_path)
    if summary and summary.get("layout") in ("long", "wide"):
        return table_layout(summary)
    return None


def parse_start(start, kind):
    """--start / start=: a date (kind 'dates': seconds since 1970 UTC; naive dates are UTC) or a number."""
    import pandas as pd

    if kind == "dates":
        try:
            stamp = pd.Timestamp(start)
        except (TypeError, ValueError) as e:
            raise DataError(f"start {start!r}: expected a date such as 2024-01-01 or 2024-01-01T06:00 ({e})") from None
        if pd.isna(stamp):
            raise DataError(f"start {start!r}: expected a date such as 2024-01-01")
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return stamp.value / 1e9
    try:
        value = float(start)
    except (TypeError, ValueError):
        raise DataError(f"start {start!r}: the run's time column holds numbers; expected a number") from None
    if not np.isfinite(value):
        raise DataError(f"start {start!r}: expected a finite number")
    return value


def sample_table(run, samples, columns, layout, start=None, flat=True):
    """Generated sequences as the training table: a pandas DataFrame with the input's column names and dtypes
    (gan_sru.data.layout.to_layout), a conditional run's category labels and attributes as columns. The time
    column counts from `start` (default: the data's first time) at the data's median spacing.
    samples: list of (L_i, C) float64 continuous features in data units; columns: {name: N per-step arrays}.
    flat: one plain table for a file: a wide run's (sequence, step) index becomes an 'id' column (or
    'sequence' when 'id' is taken) and dates lose their UTC zone. df.attrs["feature_names"]: the feature names."""
    from gan_sru.data.layout import to_layout
    from gan_sru.data.summary import read_summary

    summary = read_summary(run.folder.path) or {"time": {"kind": None}}
    time = dict(summary["time"])
    if start is not None:
        if layout.get("time") is None:
            raise DataError(f"start {start!r}: the run's data has no time column")
        time["first"] = parse_start(start, layout.get("time_kind"))
    df = to_layout(samples, layout, time)
    if columns:
        from gan_sru.conditional.api import with_columns

        df = with_columns(df, columns, run.encoding)
    names = [c["label"] for c in layout["columns"] if c not in (layout["id"], layout["time"])]
    if flat:
        import pandas as pd

        if isinstance(df.index, pd.MultiIndex) and "sequence" in df.index.names:
            key = "id" if "id" not in df.columns else "sequence"
            seq = df.index.get_level_values("sequence")
            df = df.reset_index(drop=True)
            df.insert(0, key, np.asarray(seq))
        elif layout.get("index"):
            df = df.reset_index()
        for name in df.columns:
            if isinstance(df[name].dtype, pd.DatetimeTZDtype):
                df[name] = df[name].dt.tz_convert("UTC").dt.tz_localize(None)
        time_label = None if layout.get("time") is None else layout["time"]["label"]
        if time_label in df.columns and df[time_label].dtype == np.float64 and (df[time_label] % 1 == 0).all():
            df[time_label] = df[time_label].astype(np.int64)  # whole-number times (steps 0, 1, ...) as integers
    df.attrs["feature_names"] = [str(n) for n in names]
    return df
