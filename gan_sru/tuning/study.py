"""The Study: one search over a config, run by one or more worker processes; its best config."""
import io
import json
import os
import socket
import time

from gan_sru import ConfigError, GanSruError

from .space import suggest, to_config_values
from .storage import fail_dead_trials, open_storage, process_start
from .validation import SPLIT_NOTE, VALIDATION_FRACTION, validation_score

MAX_FAILURES = 3  # a worker stops after this many failed trials in a row (a config that cannot train)


def parse_duration(text):
    """'90s', '5m', '1h30m', '2.5m' -> seconds (float > 0); a ConfigError names --budget and the text otherwise
    (train.budget's parser)."""
    from gan_sru.train.duration import parse_duration as parse

    return parse(text, "--budget")


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
            raise ConfigError(f"data.holdout_split: {self.cfg.data.holdout_split!r}; {SPLIT_NOTE}")
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
        trial.set_user_attr("started", process_start(os.getpid()))
        live = sorted(t.number for t in trial.study.get_trials(deepcopy=False)
                      if t.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING))
        if live.index(trial.number) >= self.trials:  # another worker started the last one first
            trial.set_user_attr("surplus", True)
            raise SurplusTrial(f"trial {trial.number}: the study already has {self.trials} trials")
        from gan_sru import tracking
        from gan_sru.config import load_config
        from gan_sru.data import training_data
        from gan_sru.train import Trainer

        base = self._trial_cfg(load_config(self.config, overrides=self.overrides))
        data = training_data(base)
        values = suggest(trial, data.train.num_features, base.train.terms)
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
        values = to_config_values(best.params, data.train.num_features, data_cfg.train.terms)
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
    return [f"{k}={v!r}" if isinstance(v, float) else f"{k}={json.dumps(v)}" if isinstance(v, list) else f"{k}={v}"
            for k, v in values.items()]


def _duration_text(seconds):
    return f"{int(round(seconds))}s"
