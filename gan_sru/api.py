"""The Python API: a sequence GAN trained on a DataFrame, an array or a data file, in a few lines.

    from gan_sru import SequenceGAN
    model = SequenceGAN(config="configs/sines.yaml", steps=2000)     # or a dict; keyword overrides
    model.fit(df, sequence_key="id", sequence_index="time")           # DataFrame, array (N, L, C) or path
    synthetic = model.sample(num_sequences=500, seed=0)               # like the input: columns, dtypes, units
    model.save("runs/my_model"); model = SequenceGAN.load("runs/my_model")

The same machinery as the command line, no second code path: fit() writes a DataFrame into the run folder
as Parquet (an array as .npy / .npz), points the config's data.path at it and trains with
gan_sru.train.Trainer; sample() draws lengths and noise as `gan-sru generate` does, from the selected
(else the newest) checkpoint through gan_sru.sampling.TrainedRun. A saved model is a run folder
(`gan-sru generate --run`, `evaluate`, `--resume` work on it).

Keyword overrides: any config key as a dotted key in `overrides` ({"train.steps": 500}), or as a keyword:
its last part where that is unique (steps, batch_size, g_lr, window, missing, holdout_fraction, ...), the
top-level keys (name, seed, run_dir), and generator_<key> / discriminator_<key> for model.generator.* /
model.discriminator.* (generator_hidden_size=32).
"""
import copy
import json
import os
import shutil
import tempfile
import weakref

import numpy as np

import gan_sru.models  # noqa: F401  (fills the network registry)
from gan_sru import CheckpointError, ConfigError, DataError, GanSruError, RunFolderError
from gan_sru.config import SCHEMA, check_value, load_config, resolve_config
from gan_sru.files import atomic_write, atomic_write_text

LAYOUT_FILE = "api_layout.json"  # how sample() gives sequences back: the input's columns and dtypes
_UNSET = object()


def _aliases():
    leaves = {}
    for key in SCHEMA:
        leaves.setdefault(key.split(".")[-1], []).append(key)
    out = {leaf: keys[0] for leaf, keys in leaves.items() if len(keys) == 1}
    out.update({key: key for key in SCHEMA if "." not in key})
    for key in SCHEMA:
        if key.startswith("model."):
            _, net, leaf = key.split(".")
            out[f"{net}_{leaf}"] = key
    return out


ALIASES = _aliases()


def config_key(name):
    """A keyword or dotted key -> its dotted config key; ConfigError for an unknown one."""
    if name in SCHEMA:
        return name
    if name in ALIASES:
        return ALIASES[name]
    import difflib

    close = difflib.get_close_matches(name, list(ALIASES) + list(SCHEMA), n=3)
    raise ConfigError(f"SequenceGAN: unknown option {name!r}" + (f"; did you mean {', '.join(close)}?" if close else
                                                                 "; see the config reference in the README"))


def _set(cfg, key, value):
    node = cfg
    *parents, leaf = key.split(".")
    for p in parents:
        node = node[p]
    node[leaf] = value


class SequenceGAN:
    """A sequence GAN whose run folder holds its config, checkpoints, data and data summary.

    config: a YAML file, a config dict (nested sections, or dotted keys), or None for the defaults.
    run: the run folder fit() trains into; default a temporary folder, removed with the model unless saved.
    progress: show the training progress bar (tqdm.auto: a widget in a notebook, text in a terminal).
    overrides / keyword options: config values (see the module docstring), checked like `--set`.
    """

    def __init__(self, config=None, run=None, progress=True, overrides=None, **options):
        if config is None or isinstance(config, (str, os.PathLike)):
            cfg = load_config(config)
        elif isinstance(config, dict):
            cfg = resolve_config(copy.deepcopy(config), where="SequenceGAN(config=dict)")
        else:
            raise ConfigError(f"SequenceGAN: config is a {type(config).__name__}; expected a YAML file path, "
                              "a dict or None")
        for name, value in {**(overrides or {}), **options}.items():
            key = config_key(name)
            _set(cfg, key, check_value(key, value, f"SequenceGAN({name}={value!r})"))
        self.cfg = resolve_config(cfg, where="SequenceGAN(...)")
        self.run, self.progress = run, progress
        self.run_path, self.layout, self._lengths = None, None, None

    # ------------------------------------------------------------ training

    def fit(self, data, sequence_key=_UNSET, sequence_index=_UNSET, feature_columns=_UNSET, attributes=_UNSET,
            categorical=_UNSET):
        """Train on `data`; returns self.

        data: a pandas DataFrame (one row per time step), an (N, L, C) array or a list of (L_i, C) arrays,
        or the path of a data file, folder or glob pattern (what data.path takes).
        sequence_key: the column naming each row's sequence; None: the DataFrame is one sequence (wide
        format, cut into data.window windows). sequence_index: the time column (numbers or dates); None:
        row order. feature_columns: the columns to model; default every other one. Unset, each takes the
        config's data.csv_id_column / csv_time_column / csv_feature_columns. attributes / categorical: the
        per-sequence attribute and per-step categorical columns (data.attributes / data.categorical).
        Bad input is a DataError, raised before anything is written.
        """
        from gan_sru.data import load_dataset

        cfg = copy.deepcopy(self.cfg)
        data_cfg = cfg["data"]
        data_cfg["source"] = "file"
        for key, value in (("csv_id_column", sequence_key), ("csv_time_column", sequence_index),
                           ("csv_feature_columns", feature_columns), ("attributes", attributes),
                           ("categorical", categorical)):
            if value is not _UNSET:
                data_cfg[key] = value
        target = os.path.abspath(self.run) if self.run else None
        if target and os.path.isdir(os.path.join(target, "checkpoints")) and os.listdir(
                os.path.join(target, "checkpoints")):
            raise RunFolderError(f"run folder {target} already holds checkpoints; give SequenceGAN another run=")
        if isinstance(data, (str, os.PathLike)):
            data_cfg["path"] = os.path.abspath(data)
            write, layout = None, None
        else:
            write, layout, source = self._prepare_input(data, sequence_key, sequence_index, feature_columns, data_cfg)
            load_dataset(data_cfg, cfg["seed"], source=source)  # every refusal before a file is written
        if target is None:
            holder = tempfile.mkdtemp(prefix="gan_sru-")
            weakref.finalize(self, shutil.rmtree, holder, True)
            target = os.path.join(holder, cfg["name"])
        created = not os.path.exists(target)
        cfg["run_dir"], cfg["name"] = os.path.dirname(target), os.path.basename(target)
        try:
            if write is not None:
                data_cfg["path"] = write(os.path.join(target, "data"))
            cfg = resolve_config(cfg, where="SequenceGAN.fit")
            self._train(cfg)
        except BaseException:
            if created and not self._has_checkpoints(target):
                shutil.rmtree(target, ignore_errors=True)  # a refused run leaves nothing
            raise
        from gan_sru.data.summary import read_summary

        if layout is None:
            layout = _file_layout(read_summary(target))
        atomic_write_text(os.path.join(target, LAYOUT_FILE), json.dumps(layout, indent=2) + "\n")
        self.cfg, self.run_path, self.layout, self._lengths = cfg, target, layout, None
        return self

    def _prepare_input(self, data, sequence_key, sequence_index, feature_columns, data_cfg=None):
        """(writer(folder) -> path, layout, in-memory source for checking) of a DataFrame or array."""
        from gan_sru.data.layout import array_layout, frame_layout, storable_table

        if isinstance(data, (np.ndarray, list, tuple)):
            layout = array_layout(data if isinstance(data, np.ndarray) else list(data))
            if isinstance(data, np.ndarray):
                return _writer("training_data.npy", lambda f: np.save(f, data)), layout, data
            arrays = [np.asarray(s) for s in data]

            def save_npz(f):
                lengths = np.array([len(s) for s in arrays])
                padded = np.zeros((len(arrays), lengths.max(), arrays[0].shape[-1]), np.float64)
                for i, s in enumerate(arrays):
                    padded[i, :len(s)] = s
                np.savez(f, data=padded, lengths=lengths)
            return _writer("training_data.npz", save_npz), layout, arrays
        import pandas as pd

        if not isinstance(data, pd.DataFrame):
            raise DataError(f"SequenceGAN.fit: data is a {type(data).__name__}; expected a pandas DataFrame, a "
                            "numpy array (N, L, C), a list of (L_i, C) arrays, or a file path")
        from gan_sru.data import read_frame

        table, labels, index_columns = storable_table(data)
        for arg, name in (("sequence_key", sequence_key), ("sequence_index", sequence_index)):
            if name is not _UNSET and name is not None and name not in table.columns:
                raise DataError(f"DataFrame: no column {name!r} ({arg}); found columns {list(table.columns)}")
        from gan_sru.data.columns import wanted_columns

        data_cfg = data_cfg or self.cfg["data"]
        raw = read_frame(table, self._col(sequence_key, "csv_id_column"), self._col(sequence_index, "csv_time_column"),
                         self._col(feature_columns, "csv_feature_columns"),
                         extra=wanted_columns(data_cfg.get("attributes"), data_cfg.get("categorical")))

        def write_parquet(f):
            try:
                table.to_parquet(f, index=False)
            except Exception as e:  # pyarrow refuses columns of mixed Python types
                raise DataError(f"DataFrame: cannot store it as Parquet ({type(e).__name__}: {e})") from None

        layout = frame_layout(table, labels, index_columns, raw.info)
        return _writer("training_data.parquet", write_parquet), layout, raw

    def _col(self, value, key):
        return self.cfg["data"][key] if value is _UNSET else value

    def _train(self, cfg):
        import nnabla as nn

        from gan_sru.train import Trainer

        nn.clear_parameters()  # the networks live in nnabla's global scope, as in TrainedRun: one model at a time
        Trainer(cfg, progress=self.progress).train()

    @staticmethod
    def _has_checkpoints(folder):
        path = os.path.join(folder, "checkpoints")
        return os.path.isdir(path) and any(n.endswith(".npz") for n in os.listdir(path))

    # ------------------------------------------------------------ sampling

    def sample(self, num_sequences=1000, seed=0, length=None, conditions=None):
        """`num_sequences` generated sequences in the training data's layout and units: a DataFrame like the
        input (column names, dtypes; see gan_sru.data.layout.to_layout), or an array for array input.
        Lengths are drawn from the training lengths (or all `length`); the same seed gives the same result.
        Conditional runs: the DataFrame also has the categorical columns (original labels) and the attribute
        columns; conditions: a DataFrame with one row of attributes per sequence (num_sequences is then its
        length) or a dict {attribute: value} for all of them; None: attributes resampled from training."""
        from gan_sru.data.layout import to_layout
        from gan_sru.data.summary import read_summary
        from gan_sru.sampling import TrainedRun, draw_lengths, generate_cut, training_split

        if self.run_path is None:
            raise GanSruError("SequenceGAN.sample: the model is not trained; call fit() or SequenceGAN.load()")
        if num_sequences < 1:
            raise ConfigError(f"SequenceGAN.sample: num_sequences={num_sequences}; expected at least 1")
        run = TrainedRun(self.run_path)  # the selected checkpoint (train.select), else the newest; its moving-average G
        if self._lengths is None:
            self._lengths = training_split(run.cfg)[0].lengths
        rows, attrs = self._condition_rows(run, conditions, num_sequences, seed)
        num_sequences = num_sequences if rows is None else len(rows)
        lengths = draw_lengths(self._lengths, num_sequences, seed, length)
        sequences = [run.scaler.inverse(s.astype(np.float64)) for s in generate_cut(run, lengths, seed, attrs)]
        if not all(np.isfinite(s).all() for s in sequences):
            raise CheckpointError(f"{self.run_path}: the generator gave non-finite values; the checkpoint is bad")
        summary = read_summary(self.run_path) or {"time": {"kind": None}}
        if run.encoding is None:
            return to_layout(sequences, self.layout or {"kind": "array", "dtype": "float32", "ragged": False},
                             summary["time"])
        from gan_sru.conditional.api import with_columns
        from gan_sru.conditional.conditions import sample_columns

        continuous, columns = sample_columns(sequences, run.encoding, rows)
        return with_columns(to_layout(continuous, self.layout, summary["time"]), columns, run.encoding)

    def _condition_rows(self, run, conditions, num, seed):
        """(rows (N, A) object or None, encoded attrs (N, W) or None) to sample for."""
        from gan_sru.conditional.api import condition_rows

        return condition_rows(run, self.run_path, conditions, num, seed)

    # ------------------------------------------------------------ saving

    def save(self, path):
        """Copy the run folder to `path`, a new folder (config, checkpoints, data, summary, pictures), with
        the config's data.path, run_dir and name pointing at the copy. Returns the path."""
        from gan_sru.train.run_folder import Checkpoint

        if self.run_path is None:
            raise GanSruError("SequenceGAN.save: nothing to save yet; call fit() first")
        path = os.path.abspath(path)
        if path == self.run_path:
            return path
        if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
            raise RunFolderError(f"SequenceGAN.save: {path} already exists; expected a new folder")
        partial = f"{path}.{os.getpid()}.partial"
        shutil.copytree(self.run_path, partial, ignore=shutil.ignore_patterns("run.lock", "*.tmp"))
        try:
            cfg = load_config(os.path.join(partial, "config.yaml"))
            relocated = _relocate(cfg, self.run_path, path)
            from gan_sru.config import dump_config

            dump_config(relocated, os.path.join(partial, "config.yaml"))
            checkpoints = os.path.join(partial, "checkpoints")
            for name in sorted(os.listdir(checkpoints)):
                ckpt = Checkpoint.load(os.path.join(checkpoints, name))
                ckpt.meta["config"] = _relocate(ckpt.meta["config"], self.run_path, path)
                ckpt.save(os.path.join(checkpoints, name))
            if os.path.isdir(path):
                os.rmdir(path)
            os.replace(partial, path)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        return path

    @classmethod
    def load(cls, path, progress=True):
        """A model from a run folder (saved by save(), or trained by `gan-sru train`)."""
        from gan_sru.data.summary import read_summary

        path = os.path.abspath(path)
        if not os.path.isfile(os.path.join(path, "config.yaml")):
            raise CheckpointError(f"SequenceGAN.load: {path} is not a run folder (no config.yaml)")
        if not cls._has_checkpoints(path):
            raise CheckpointError(f"SequenceGAN.load: {path} holds no checkpoint")
        model = cls.__new__(cls)
        model.cfg = load_config(os.path.join(path, "config.yaml"))
        model.run, model.progress, model.run_path, model._lengths = None, progress, path, None
        layout_path = os.path.join(path, LAYOUT_FILE)
        if os.path.isfile(layout_path):
            with open(layout_path) as f:
                model.layout = json.load(f)
        else:
            model.layout = _file_layout(read_summary(path))
        return model

    @property
    def summary(self):
        """The data summary of the training run (data_summary.json), or None before fit()."""
        from gan_sru.data.summary import read_summary

        return read_summary(self.run_path) if self.run_path else None


def _writer(name, write):
    def into(folder):
        os.makedirs(folder, exist_ok=True)
        return atomic_write(os.path.join(folder, name), write)
    return into


def _file_layout(summary):
    """The layout of a run trained on a file: a DataFrame for tables, an array otherwise."""
    from gan_sru.data.layout import table_layout

    if summary and summary.get("layout") in ("long", "wide"):
        return table_layout(summary)
    return {"kind": "array", "dtype": "float32", "ragged": False}


def _relocate(cfg, old, new):
    """The config with paths inside run folder `old` moved to `new`, and run_dir/name naming `new`."""
    cfg = copy.deepcopy(cfg)
    path = cfg["data"].get("path")
    if path and os.path.abspath(path).startswith(old + os.sep):
        cfg["data"]["path"] = new + os.path.abspath(path)[len(old):]
    name = os.path.basename(new)
    if SCHEMA["name"].allowed.fullmatch(name):
        cfg["run_dir"], cfg["name"] = os.path.dirname(new), name
    return cfg
