"""Hyperparameter search with Optuna: many short runs of one config, one study, one best config.

Each trial is an ordinary run folder, RUN_DIR/<study>/trial_NNNN, trained from the user's config with the
trial's values for the keys of SPACE and a wall-time budget. Its score, lower is better, is TimeGAN's
discriminative score under the paper protocol (gan_sru.metrics.protocols) of the run's selected checkpoint,
against a validation split: sequences that neither the trial trained on nor `gan-sru evaluate` later uses
as the held-out floor. The study picks the config whose samples look most real to a fresh classifier;
scoring it on the final held-out set would choose for that set, and its figure would no longer measure the
chosen config (the held-out set must stay unseen by every choice, the search included).

    the data (one seed, random split)   | train (trials train here) | validation | held out (evaluate) |
    a trial's data.holdout_fraction     = the config's holdout_fraction + validation_fraction

Pruning: every checkpoint is scored (train.select: discriminative, on training sequences) and reported to
Optuna (trial.report); a trial the pruner calls hopeless stops at once (PRUNED). Trials run in one process
each; parallel workers are processes sharing the study's storage: a journal file (one machine) or an RDB URL
(sqlite:///..., postgresql://user:pw@host/db; many machines). A study is resumable: the same --study and
--storage go on until N trials are finished. A worker killed mid-trial leaves it RUNNING: with a journal
file, the next worker on the machine marks it FAIL (its process is gone); with an RDB URL, Optuna's
heartbeat does.
"""
import io
import math
import os
import socket
import time

import numpy as np

from gan_sru import ConfigError, GanSruError

# The search space: (dotted key or pseudo-key, kind, arguments). Learning rates log-uniform; sizes as
# factors of the size rules (gan_sru/sizes.py); D depth; batch; weights of two of G's terms (log-uniform).
SPACE = (
    ("train.g_lr", "log", (1e-4, 3e-3)),
    ("train.d_lr", "log", (1e-4, 3e-3)),
    ("train.batch_size", "choice", (32, 64, 128, 256)),
    ("generator_size_factor", "choice", (0.5, 1.0, 2.0)),  # x the rule's generator.hidden_size
    ("discriminator_size_factor", "choice", (0.5, 1.0, 2.0)),  # x the rule's discriminator.hidden_size
    ("model.discriminator.num_layers", "choice", (1, 2, 3)),
    ("train.moment_loss", "log", (0.01, 10.0)),
    ("train.sequence_moment_loss", "log", (0.01, 10.0)),
)
VALIDATION_FRACTION = 0.1
MAX_FAILURES = 3  # a worker stops after this many failed trials in a row (a config that cannot train)
_SPLIT_SEED_NOTE = "tune needs data.holdout_split: random (the validation split is nested with the held-out one)"


def parse_duration(text):
    """'90s', '5m', '1h30m', '2.5m' -> seconds (float > 0); a ConfigError names --budget and the text otherwise
    (train.budget's parser)."""
    from gan_sru.train.loop import parse_duration as parse

    return parse(text, "--budget")


def open_storage(storage):
    """A journal file path -> JournalStorage; a URL (with ://) -> RDBStorage with a heartbeat."""
    import optuna

    if "://" in storage:
        return optuna.storages.RDBStorage(storage, heartbeat_interval=30, grace_period=120)
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

    folder = os.path.dirname(os.path.abspath(storage))
    os.makedirs(folder, exist_ok=True)
    return optuna.storages.JournalStorage(JournalFileBackend(storage, lock_obj=JournalFileOpenLock(storage)))


def suggest(trial, num_features, max_len):
    """The trial's values -> {dotted config key: value} (size factors applied to the rules' sizes)."""
    values = {}
    for key, kind, args in SPACE:
        values[key] = trial.suggest_float(key, *args, log=True) if kind == "log" else \
            trial.suggest_categorical(key, list(args))
    return to_config_values(values, num_features, max_len)


def to_config_values(values, num_features, max_len):
    """A trial's params -> {dotted config key: value}: the size factors become hidden sizes (multiples of 16)."""
    from gan_sru.sizes import rule_sizes

    rules = rule_sizes(num_features, max_len)
    out = {}
    for key, value in values.items():
        if key.endswith("_size_factor"):
            net = key.split("_", 1)[0]
            rule = rules[f"model.{net}.hidden_size"]
            out[f"model.{net}.hidden_size"] = max(16, int(math.ceil(rule * value / 16.0)) * 16)
        else:
            out[key] = value
    return out


class Study:
    """One search: the user's config (with --set), the storage and the trial settings.

    Args:
        config: YAML path; overrides: --set strings; study: the Optuna study name; storage: journal path or
        RDB URL; budget_s: each trial's wall time; trials: finished (complete or pruned) trials to reach;
        track: MLflow tracking of every trial; validation_fraction: the validation share of all sequences;
        score_num, score_repeats, score_iterations: the objective's generated and validation sequences, the
        classifier's repeats and iterations (None: the paper protocol's 2000); pruner: "median" or "none";
        seed: the sampler's seed (None: random).
    """

    def __init__(self, config, overrides=(), study=None, storage="tune.journal", budget_s=300.0, trials=20,
                 track=False, validation_fraction=VALIDATION_FRACTION, score_num=1000, score_repeats=3,
                 score_iterations=None, pruner="median", seed=None, out=None):
        from gan_sru.config import load_config

        self.config, self.overrides = config, list(overrides)
        self.cfg = load_config(config, overrides=self.overrides)
        self.name = study or f"tune-{self.cfg.name}"
        self.storage_text, self.budget_s, self.trials = storage, float(budget_s), int(trials)
        self.track, self.validation_fraction = track, float(validation_fraction)
        self.score_num, self.score_repeats, self.score_iterations = score_num, score_repeats, score_iterations
        self.pruner_name, self.seed, self.out = pruner, seed, out
        hf = self.cfg.data.holdout_fraction
        if self.cfg.data.holdout_split != "random":
            raise ConfigError(f"data.holdout_split: {self.cfg.data.holdout_split!r}; {_SPLIT_SEED_NOTE}")
        if not 0 < self.validation_fraction or hf + self.validation_fraction >= 0.9:
            raise ConfigError(f"--validation {self.validation_fraction}: expected > 0 and, with data.holdout_fraction "
                              f"{hf}, a sum below 0.9 (the trials train on the rest)")
        if self.trials < 1:
            raise ConfigError(f"--trials {self.trials}: expected at least 1")
        self.trial_dir = os.path.join(self.cfg.run_dir, self.name)
        self.failures = 0

    # ------------------------------------------------------------ storage and study

    def study(self):
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)

        pruner = optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0) if self.pruner_name == "median" \
            else optuna.pruners.NopPruner()
        sampler = optuna.samplers.TPESampler(seed=self.seed, n_startup_trials=5)
        return optuna.create_study(study_name=self.name, storage=open_storage(self.storage_text), direction="minimize",
                                   sampler=sampler, pruner=pruner, load_if_exists=True)

    # ------------------------------------------------------------ one worker

    def work(self, log=print):
        """Run trials until the study holds `trials` finished (complete or pruned) ones. Returns the study."""
        import optuna
        from optuna.trial import TrialState

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = self.study()
        while True:
            fail_dead_trials(study, log)
            states = [t.state for t in study.get_trials(deepcopy=False)]
            done = sum(s in (TrialState.COMPLETE, TrialState.PRUNED) for s in states)
            running = states.count(TrialState.RUNNING)
            if done + running >= self.trials:
                break
            self.current = None
            study.optimize(self.objective, n_trials=1, catch=(Exception,))  # a failed trial is FAIL; go on
            last = next((t for t in study.get_trials(deepcopy=False) if t.number == self.current), None)
            if last is not None and last.state == TrialState.FAIL and "surplus" not in last.user_attrs:
                self.failures += 1
                if self.failures >= MAX_FAILURES:
                    raise GanSruError(f"study {self.name}: {self.failures} trials in a row failed in this worker "
                                      f"(the last: trial {last.number}); see the warnings above")
            else:
                self.failures = 0
        return study

    def objective(self, trial):
        """Train one trial's run folder within the budget, pruning on its checkpoint scores; return its
        validation score (lower is better)."""
        import optuna
        from optuna.trial import TrialState

        self.current = trial.number
        trial.set_user_attr("host", socket.gethostname())
        trial.set_user_attr("pid", os.getpid())
        trial.set_user_attr("started", _process_start(os.getpid()))
        live = sorted(t.number for t in trial.study.get_trials(deepcopy=False)
                      if t.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING))
        if live.index(trial.number) >= self.trials:  # another worker started the last one first
            trial.set_user_attr("surplus", True)
            raise SurplusTrial(f"trial {trial.number}: the study already has {self.trials} trials")
        from gan_sru import tracking
        from gan_sru.config import load_config
        from gan_sru.data import training_data
        from gan_sru.train import Trainer

        data = training_data(self._trial_cfg(load_config(self.config, overrides=self.overrides)))
        values = suggest(trial, data.train.num_features, int(max(data.dataset.lengths)))
        cfg = self._trial_cfg(load_config(self.config, overrides=self.overrides + _overrides(values)))
        cfg.name = f"trial_{trial.number:04d}"
        run_path = os.path.join(cfg.run_dir, cfg.name)
        trial.set_user_attr("run", os.path.abspath(run_path))
        track = False
        if tracking.is_enabled(self.cfg, self.track):
            cfg.tracking.uri = tracking.resolve_uri(self.cfg)
            cfg.tracking.experiment = self.name
            track = {"optuna.study": self.name, "optuna.trial": trial.number}
        reported, pruned = set(), []
        t0 = time.perf_counter()

        def step_fn(trainer, step, d_loss, g_loss):
            for s, score in trainer.selection.history:
                if s not in reported:
                    reported.add(s)
                    trial.report(score, s)
                    if trial.should_prune():
                        pruned.append(s)

        def abort_fn():
            return bool(pruned) or time.perf_counter() - t0 > self.budget_s

        import nnabla as nn

        nn.clear_parameters()  # the previous trial's networks, of other sizes, are in nnabla's global scope
        trainer = Trainer(cfg, progress=False, step_fn=step_fn, abort_fn=abort_fn, track=track, out=io.StringIO())
        trainer.train()
        trial.set_user_attr("steps", trainer.run.list_checkpoints()[-1][0])
        if pruned:
            raise optuna.TrialPruned(f"pruned at checkpoint {pruned[0]}")
        if track:  # stopped by the budget, not pruned: a finished run, with its generator
            from gan_sru.mlflow_model import log_run_model

            tracking.set_status(run_path, "FINISHED")
            log_run_model(run_path)
        score = validation_score(run_path, data, self.cfg, self.score_num, self.score_repeats, self.score_iterations,
                                 self.validation_fraction)
        trial.set_user_attr("validation_score", score)
        return score["mean"]

    def _trial_cfg(self, cfg):
        cfg.run_dir = self.trial_dir
        cfg.data.holdout_fraction = self.cfg.data.holdout_fraction + self.validation_fraction
        cfg.train.select = "discriminative"
        cfg.train.budget = _duration_text(self.budget_s)
        return cfg

    # ------------------------------------------------------------ the result

    def best_config(self, study, path):
        """Write the user's config with the best trial's values to `path`; return (path, best FrozenTrial)."""
        from gan_sru.config import dump_config, load_config

        best = study.best_trial
        data_cfg = self._trial_cfg(load_config(self.config, overrides=self.overrides))
        from gan_sru.data import training_data

        data = training_data(data_cfg)
        values = to_config_values(best.params, data.train.num_features, int(max(data.dataset.lengths)))
        cfg = load_config(self.config, overrides=self.overrides + _overrides(values))
        cfg.name = f"{self.cfg.name}-tuned"
        comment = (f"gan-sru tune: study {self.name}, trial {best.number} of {len(study.trials)}, validation "
                   f"discriminative score {best.value:.4f} (paper protocol) after {_duration_text(self.budget_s)}")
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        dump_config(cfg, path, comment=comment)
        return path, best


class SurplusTrial(Exception):
    """A trial asked for after the study already had its N trials (two workers at once): marked FAIL, not run."""


def _overrides(values):
    return [f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()]


def _duration_text(seconds):
    return f"{int(round(seconds))}s"


def _process_start(pid):
    """A process's start time in clock ticks since boot (Linux /proc), or None: with the pid it names one process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid, started):
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, TypeError):
        return True
    return started is None or _process_start(pid) in (None, started)


def fail_dead_trials(study, log=print):
    """Mark FAIL the RUNNING trials of this machine whose worker process is gone (journal storage has no
    heartbeat; an RDB storage's heartbeat does this across machines). Returns their numbers."""
    from optuna.trial import TrialState

    failed = []
    host = socket.gethostname()
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        attrs = t.user_attrs
        if attrs.get("host") != host or "pid" not in attrs or _alive(attrs["pid"], attrs.get("started")):
            continue
        try:
            study._storage.set_trial_user_attr(t._trial_id, "failed_because",
                                               f"worker process {attrs['pid']} on {host} ended mid-trial")
            study._storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
        except Exception:  # noqa: BLE001  (another worker marked it first)
            continue
        failed.append(t.number)
        log(f"trial {t.number}: its worker (pid {attrs['pid']}) is gone; marked FAIL, the study goes on")
    return failed


def validation_score(run_path, data, cfg, num=1000, repeats=3, iterations=None,
                     validation_fraction=VALIDATION_FRACTION):
    """TimeGAN's discriminative score (paper protocol) of a run's selected checkpoint against the validation
    split: the trial's held-out sequences that are not the config's own held-out set.

    data: the trial's TrainingData (its holdout = validation + held out); cfg: the user's config (its
    holdout_fraction and seed). Returns {"mean", "std", "scores", "num_validation"}."""
    from gan_sru import metrics
    from gan_sru.sampling import TrainedRun, draw_lengths, generate_cut

    valid = validation_indices(data.dataset, cfg, validation_fraction)
    real = [data.dataset.sequences[i] for i in valid]
    if len(real) < 2:
        raise ConfigError(f"the validation split holds {len(real)} sequence(s); expected at least 2 (raise "
                          "--validation or use more data)")
    rng = np.random.default_rng([cfg.seed, 0x7E5E])
    if len(real) > num:
        real = [real[i] for i in np.sort(rng.choice(len(real), num, replace=False))]
    run = TrainedRun(run_path, None)
    fake = generate_cut(run, draw_lengths(np.array([len(s) for s in real]), len(real), 0), 0, None)
    settings = metrics.protocol_settings("paper", run.num_features)["discriminative"]
    if iterations is not None:
        settings["iterations"] = int(iterations)
    out = metrics.discriminative_score(real, fake, repeats=repeats, seed=0, progress=False, **settings)
    return {"mean": float(out["mean"]), "std": float(out["std"]), "scores": [float(s) for s in out["scores"]],
            "num_validation": len(real)}


def validation_indices(dataset, cfg, validation_fraction=VALIDATION_FRACTION):
    """The validation split's sequence indices: held out at holdout_fraction + validation, not at holdout_fraction
    (random splits of one seed are nested: the smaller held-out set is inside the larger)."""
    hf, seed = cfg.data.holdout_fraction, cfg.seed
    final = dataset.split_plan(hf, seed, "random").holdout
    wide = dataset.split_plan(hf + validation_fraction, seed, "random").holdout
    if not np.isin(final, wide).all():
        raise ConfigError("the validation split overlaps the held-out set; " + _SPLIT_SEED_NOTE)
    return np.setdiff1d(wide, final)
