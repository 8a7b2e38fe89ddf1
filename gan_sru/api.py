"""The Python API: a sequence GAN trained on a DataFrame, an array or a data file, in a few lines.

    import numpy as np, pandas as pd
    from gan_sru import SequenceGAN

    # one row per time step: a key naming each sequence, a time column, the features (a category too)
    df = pd.DataFrame({"unit": np.repeat(["a", "b", "c", "d"], 48),
                       "at": np.tile(pd.date_range("2024-01-01", periods=48, freq="h"), 4),
                       "load": np.random.default_rng(0).normal(50, 5, 192),
                       "mode": np.tile(["day", "night"], 96)})
    model = SequenceGAN(steps=200, run_dir="runs", name="units", progress=False)   # trains into runs/units
    model.fit(df, sequence_key="unit", sequence_index="at", categorical=["mode"])
    synthetic = model.sample(num_sequences=10, seed=0)      # a DataFrame like df: columns, dtypes, labels
    model.run                                                # 'runs/units' as an absolute path
    model.save("shared/units"); again = SequenceGAN.load("shared/units").sample(10, seed=0)   # the same rows

The same machinery as the command line, no second code path: fit() writes a DataFrame into the run folder
as Parquet (an array as .npy / .npz), points the config's data.path at it and trains with
gan_sru.train.Trainer; sample() draws lengths and noise as `gan-sru generate` does, from the selected
(else the newest) checkpoint through gan_sru.sampling.TrainedRun, reading only the run folder (its
sampling.json holds the training lengths and attribute rows; the training data is never read). A saved
model is a run folder (`gan-sru generate --run`, `evaluate`, `--resume` work on it) that can be moved.

Keyword overrides: any config key as a dotted key in `overrides` ({"train.steps": 500}), or as a keyword:
its last part where that is unique (steps, batch_size, lr, window, missing, holdout_fraction, ...), the
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
from gan_sru.config import assign, check_value, load_config, resolve_config
from gan_sru.files import atomic_write_text
from gan_sru.fit_input import UNSET, file_layout, prepare_input
from gan_sru.keywords import checked_int, config_key, in_python_terms
from gan_sru.run_copy import copy_run


class SequenceGAN:
    """A sequence GAN whose run folder holds its config, checkpoints, data and data summary.

    config: a YAML file, a config dict (nested sections, or dotted keys), or None for the defaults.
    run: the run folder fit() trains into. Default: run_dir/name when either is given (as keywords or in
        overrides), else a temporary folder, removed with the model unless saved.
    progress: show the training progress bar (tqdm.auto: a widget in a notebook, text in a terminal).
    verbose: print the data summary and the training messages; default: the same as progress.
    overrides / keyword options: config values (see the module docstring), checked like `--set`.

    After fit() (or load()), `model.run` is the run folder: an absolute path that `gan-sru generate --run`,
    `evaluate` and `export` take as it is. Example (a complete one is in the module docstring):

        model = SequenceGAN(steps=500, run_dir="runs", name="sensors", progress=False)
        model.fit(df, sequence_key="sensor", sequence_index="time")
        synthetic = model.sample(num_sequences=100, seed=0)
    """

    def __init__(self, config=None, run=None, progress=True, overrides=None, verbose=None, **options):
        if config is None or isinstance(config, (str, os.PathLike)):
            cfg = load_config(config)
        elif isinstance(config, dict):
            cfg = resolve_config(copy.deepcopy(config), where="SequenceGAN(config=dict)")
        else:
            raise ConfigError(f"SequenceGAN: config is a {type(config).__name__}; expected a YAML file path, "
                              "a dict or None")
        for name, value in {**(overrides or {}), **options}.items():
            key = config_key(name)
            assign(cfg, key, check_value(key, value, f"SequenceGAN({name}={value!r})"))
        self.cfg = resolve_config(cfg, where="SequenceGAN(...)")
        named = {"run_dir", "name"} & {config_key(k) for k in {**(overrides or {}), **options}}
        if run is None and named:
            run = os.path.join(self.cfg.run_dir, self.cfg.name)
        self._target, self.progress = run, bool(progress)
        self.verbose = self.progress if verbose is None else bool(verbose)
        self.run_path, self.layout, self._reference = None, None, None

    @property
    def run(self):
        """The run folder (an absolute path) after fit() or load(); None before."""
        return self.run_path

    # ------------------------------------------------------------ training

    def fit(self, data, sequence_key=UNSET, sequence_index=UNSET, feature_columns=UNSET, attributes=UNSET,
            categorical=UNSET):
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
        data_cfg = cfg.data
        data_cfg.source = "file"
        for key, value in (("csv_id_column", sequence_key), ("csv_time_column", sequence_index),
                           ("csv_feature_columns", feature_columns), ("attributes", attributes),
                           ("categorical", categorical)):
            if value is not UNSET:
                setattr(data_cfg, key, value)
        target = os.path.abspath(self._target) if self._target else None
        if target and os.path.isdir(os.path.join(target, "checkpoints")) and os.listdir(
                os.path.join(target, "checkpoints")):
            raise RunFolderError(f"run folder {target} already holds checkpoints; give SequenceGAN another run= "
                                 "(or name=)")
        try:
            if isinstance(data, (str, os.PathLike)):
                data_cfg.path = os.path.abspath(data)
                write, layout = None, None
            else:
                write, layout, source = prepare_input(data, sequence_key, sequence_index, feature_columns, data_cfg,
                                                      self.cfg.data)
                load_dataset(data_cfg, cfg.seed, source=source)  # every refusal before a file is written
        except GanSruError as e:
            raise in_python_terms(e) from None
        if target is None:
            holder = tempfile.mkdtemp(prefix="gan_sru-")
            weakref.finalize(self, shutil.rmtree, holder, True)
            target = os.path.join(holder, cfg.name)
        created = not os.path.exists(target)
        cfg.run_dir, cfg.name = os.path.dirname(target), os.path.basename(target)
        try:
            if write is not None:
                data_cfg.path = write(os.path.join(target, "data"))
            cfg = resolve_config(cfg, where="SequenceGAN.fit")
            self._train(cfg)
        except BaseException as e:
            if created and not self._has_checkpoints(target):
                shutil.rmtree(target, ignore_errors=True)  # a refused run leaves nothing
            if isinstance(e, GanSruError):
                raise in_python_terms(e) from None
            raise
        from gan_sru.data.summary import read_summary

        if layout is None:
            layout = file_layout(read_summary(target))
        from gan_sru.sampling import LAYOUT_FILE  # how sample() gives sequences back: the input's columns, dtypes

        atomic_write_text(os.path.join(target, LAYOUT_FILE), json.dumps(layout, indent=2) + "\n")
        self.cfg, self.run_path, self.layout, self._reference = cfg, target, layout, None
        return self

    def _train(self, cfg):
        import nnabla as nn

        from gan_sru.train import Trainer

        nn.clear_parameters()  # the networks live in nnabla's global scope, as in TrainedRun: one model at a time
        if self.verbose:
            import sys

            Trainer(cfg, progress=self.progress, out=sys.stdout).train()  # today's stdout (a notebook's, too)
            return
        with open(os.devnull, "w") as quiet:
            Trainer(cfg, progress=self.progress, out=quiet).train()

    @staticmethod
    def _has_checkpoints(folder):
        path = os.path.join(folder, "checkpoints")
        return os.path.isdir(path) and any(n.endswith(".npz") for n in os.listdir(path))

    # ------------------------------------------------------------ sampling

    def sample(self, num_sequences=1000, seed=0, length=None, conditions=None, start=None):
        """`num_sequences` generated sequences in the training data's layout and units: a DataFrame like the
        input (column names, dtypes; see gan_sru.data.layout.to_layout), or an array for array input.
        Lengths are drawn from the training lengths (or all `length`); the same seed gives the same result.
        start: the first time of every sequence (a date or a number, like the time column; default the
        data's first time). Conditional runs: the DataFrame also has the categorical columns (original labels)
        and the attribute columns; conditions: a DataFrame with one row of attributes per sequence
        (num_sequences is then its length) or a dict {attribute: value} for all of them; None: attributes
        resampled from training. Nothing is read but the run folder.

        num_sequences: int from 1 to 1,000,000; seed: int >= 0; length: None or int from 2 to 100,000; at
        most 5,000,000 sequence-steps per call. A wrong type is a
        TypeError, a wrong value a ValueError, each naming the argument."""
        from gan_sru.data.layout import to_layout
        from gan_sru.sampling import (
            MAX_LENGTH,
            MAX_NUM,
            Reference,
            TrainedRun,
            draw_lengths,
            generate_cut,
            sample_size_error,
            sample_table,
        )

        num_sequences = checked_int("num_sequences", num_sequences, 1, MAX_NUM)
        seed = checked_int("seed", seed, 0, 2 ** 63 - 1)
        if length is not None:
            length = checked_int("length", length, 2, MAX_LENGTH)
        if self.run_path is None:
            raise GanSruError("SequenceGAN.sample: the model is not trained; call fit() or SequenceGAN.load()")
        try:
            run = TrainedRun(self.run_path)  # the selected checkpoint (train.select), else the newest; its EMA G
            if self._reference is None:
                self._reference = Reference.of_run(run)
            rows, attrs = self._condition_rows(run, conditions, num_sequences, seed)
            num_sequences = num_sequences if rows is None else len(rows)
            lengths = draw_lengths(self._reference.lengths, num_sequences, seed, length)
            too_many = sample_size_error(num_sequences, int(lengths.max()))
            if too_many:
                raise ValueError(f"num_sequences={num_sequences}, length={length}: {too_many}")
            sequences = [run.scaler.inverse(s.astype(np.float64)) for s in generate_cut(run, lengths, seed, attrs)]
            if not all(np.isfinite(s).all() for s in sequences):
                raise CheckpointError(f"{self.run_path}: the generator gave non-finite values; the checkpoint is bad")
            columns = None
            if run.encoding is not None:
                from gan_sru.conditional.conditions import sample_columns

                sequences, columns = sample_columns(sequences, run.encoding, rows)
            layout = self.layout or {"kind": "array", "dtype": "float32", "ragged": False}
            if layout["kind"] == "array":
                if start is not None:
                    raise DataError(f"start={start!r}: the model was trained on arrays, which have no time column")
                return to_layout(sequences, layout, {"kind": None})
            return sample_table(run, sequences, columns, layout, start, flat=False)
        except GanSruError as e:
            raise in_python_terms(e) from None

    def _condition_rows(self, run, conditions, num, seed):
        """(rows (N, A) object or None, encoded attrs (N, W) or None) to sample for."""
        from gan_sru.conditional.api import condition_rows

        return condition_rows(run, self.run_path, conditions, num, seed, self._reference)

    # ------------------------------------------------------------ saving

    def save(self, path):
        """Copy the run folder to `path`, a new folder (config, checkpoints, data, summary, pictures), with
        the config's data.path, run_dir and name pointing at the copy. Returns the path. A saved folder can be
        moved or copied again: sampling reads only the folder itself (its paths inside are relative to it).
        A failed save (a full disk) leaves nothing at `path`, nor a partial copy beside it."""
        if self.run_path is None:
            raise GanSruError("SequenceGAN.save: nothing to save yet; call fit() first")
        path = os.path.abspath(path)
        if path == self.run_path:
            return path
        return copy_run(self.run_path, path, where="SequenceGAN.save")

    @classmethod
    def load(cls, path, progress=True, verbose=None):
        """A model from a run folder (saved by save(), or trained by `gan-sru train`), wherever it now is."""
        from gan_sru.sampling import run_layout

        path = os.path.abspath(path)
        if not os.path.isfile(os.path.join(path, "config.yaml")):
            raise CheckpointError(f"SequenceGAN.load: {path} is not a run folder (no config.yaml)")
        if not cls._has_checkpoints(path):
            raise CheckpointError(f"SequenceGAN.load: {path} holds no checkpoint")
        model = cls.__new__(cls)
        model.cfg = load_config(os.path.join(path, "config.yaml"), removed="drop")  # a trained run: sampled from
        model._target, model.progress, model.run_path, model._reference = path, bool(progress), path, None
        model.verbose = model.progress if verbose is None else bool(verbose)
        model.layout = run_layout(path) or {"kind": "array", "dtype": "float32", "ragged": False}
        return model

    @property
    def summary(self):
        """The data summary of the training run (data_summary.json), or None before fit()."""
        from gan_sru.data.summary import read_summary

        return read_summary(self.run_path) if self.run_path else None
