"""The training loop: data, run folder, checkpoints, monitors, pictures, progress."""
import functools
import math
import os
import signal
import sys

import numpy as np

from gan_sru import ConfigError, RunFolderError, TrainingDiverged, tracking
from gan_sru.config import flat_config
from gan_sru.data import training_data
from gan_sru.data.summary import describe, picture_indices, summary_text
from gan_sru.recipe import apply_recipe, recipe_lines, write_recipe
from gan_sru.resources import check_resources
from gan_sru.train.run_folder import Checkpoint, RunFolder

from . import distributed, records, replicas
from .duration import Budget
from .selection import Selection, score_checkpoint, write_selection
from .steps import GanSteps

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # each saves a checkpoint and stops cleanly


class Trainer:
    """Trains one run: data, graphs, run folder, checkpoints, monitors, pictures, progress.

    `Trainer(cfg).train()` trains `cfg.train.steps` steps, or until `cfg.train.budget` of wall time is
    spent when that is set (whichever comes first), into `run_dir/name`, resuming from the
    newest checkpoint when `resume=True`. With a communicator `comm` of several ranks (train/distributed.py)
    every rank trains its shard of each batch and rank 0 alone touches the run folder and logs.
    """

    def __init__(self, cfg, resume=False, progress=True, strategy=None, out=None, step_fn=None, abort_fn=None,
                 comm=None, track=False):
        """step_fn(trainer, step, d_loss, g_loss): called after every step (step = steps done so far);
        abort_fn() -> bool: asked after every step; True stops the run like SIGTERM does (a checkpoint is
        saved, `train()` returns, `self.aborted` is True). Benchmarks and tools observe the loop this way
        (in one process). comm: the data-parallel communicator (train/distributed.py); None: one process.
        track: MLflow tracking (gan_sru/tracking.py): True (--track), a dict of tags for the MLflow run, or
        False (on only when the config sets tracking.uri)."""
        # out: where the log goes; None: sys.stdout as it is now (a redirect made after import is followed)
        self.cfg, self.progress, self.out = cfg, progress, sys.stdout if out is None else out
        self.step_fn, self.abort_fn, self.aborted = step_fn, abort_fn, False
        self.comm = comm or distributed.NullCommunicator()
        self.run = RunFolder(os.path.join(cfg.run_dir, cfg.name))
        self.resume = resume
        self.strategy = strategy
        self.stop_signal = None
        self.sampler = None  # built at the first sample picture or selection, then kept
        self.selection = Selection()  # the checkpoints' selection scores (train.select)
        self.track, self.tracker = track, tracking.NULL  # rank 0 opens the MLflow run in _train
        self.budget = Budget(cfg.train.budget)  # a benchmark may set budget.clock = time.process_time

    def _log(self, msg):
        if self.comm.is_root:
            print(msg, file=self.out, flush=True)

    def prepare(self):
        """Load the data, lock and fill the run folder, build the steps, restore a checkpoint. Only rank 0
        touches the run folder (the others get its state from `_train`'s broadcast)."""
        cfg, run, root = self.cfg, self.run, self.comm.is_root
        existing = run.list_checkpoints() if root else []
        if existing and not self.resume:
            raise RunFolderError(
                f"run folder {run.path} already holds checkpoints (newest: step {existing[-1][0]}); "
                "continue it with --resume, or train into another run name (--set name=...)")
        data = training_data(cfg)  # before the folder exists: bad data leaves nothing
        # the keys the config leaves unset, chosen from the data (gan_sru/recipe.py); a complete config.yaml
        # of a resumed run sets every key, so its choices stand
        cfg, facts, choices = apply_recipe(cfg, data.train.sequences)
        self.cfg = cfg
        self.budget.allow(cfg.train.budget)
        # the model's memory from the config and the data's shape, refused before any network is built
        check_resources(cfg, data.train.num_features, int(data.spec.boundaries[-1]))
        if cfg.train.select != "none" and len(data.train) < 2:
            raise ConfigError(f"train.select: {cfg.train.select!r} scores each checkpoint with a classifier "
                              f"that needs at least 2 training sequences; the training split holds "
                              f"{len(data.train)} (set train.select: none, cut the data into windows with "
                              "data.window, or hold out less with data.holdout_fraction)")
        summary = describe(data.dataset, cfg.data, cfg.seed)
        self._log(summary_text(summary))
        for line in recipe_lines(choices):
            self._log(line)
        if root:
            run.create().lock()
            if not existing:
                write_recipe(run.path, facts, choices)
        self.train_set, self.holdout, self.spec = data.train, data.holdout, data.spec
        self.scaler = data.dataset.scaler
        self.steps = GanSteps(cfg, self.train_set, self.spec, strategy=self.strategy, comm=self.comm)
        cfg = self.cfg = self.steps.cfg  # null model sizes resolved from the data (gan_sru/sizes.py)
        changed = records.changed_keys(run, cfg) if self.resume and root else []
        self.start_step = 0
        latest = run.latest_checkpoint() if self.resume and root else None
        if latest is not None:
            step, ckpt = latest
            # refuses other sizes first, naming the parameter; then any other change of model, data or seed
            ckpt.restore(self.steps.checkpoint_params(), self.solvers(),
                         source=f"checkpoint {run.checkpoint_path(step)}")
            self.start_step = step
            self.selection = Selection.from_meta(ckpt.meta, step)
            self.budget.before = float(ckpt.meta.get("elapsed_s", 0.0))
        if latest is not None and changed:
            raise ConfigError(
                f"cannot resume {run.path} with a different config: {', '.join(changed)} differ from the run's "
                f"{run.config_path} (only train.* may change between sessions). Resume with "
                f"`python train.py --config {run.config_path} --resume`, or train into another run name "
                "(--set name=...)")
        if latest is not None:
            self._log(f"resumed {run.path} from step {self.start_step}")
        # the terms compare the fake batch's statistics with the data's: under data parallelism each rank
        # computes the fake ones on its shard
        shard_terms = [f"the {t.name} term" for t in self.steps.terms]
        if self.comm.size > 1 and shard_terms:
            self._log(f"note: {', '.join(shard_terms)} compare the statistics of each rank's "
                      f"{self.steps.local_batch} generated sequences, not of the global batch of "
                      f"{self.steps.batch_size}, with the data's: "
                      f"with {self.comm.size} ranks the run is close to a one-process run, not equal to it")
        if root:  # after the restore: a refused resume leaves the run's config as it was
            records.write(run, cfg, summary, data, self._conditioning().get("conditioning"),
                          comment=distributed.world_size_comment(self.comm))

    def solvers(self):
        return {"G": self.steps.solver_g, "D": self.steps.solver_d}

    def meta(self, step):
        return {"step": step, "scaler": self.scaler.to_dict(), "buckets": self.spec.to_dict(),
                "num_features": self.train_set.num_features,
                "config": self.cfg.model_dump(), "world_size": self.comm.size, "format": 1,
                "selection": self.selection.to_dict(self.cfg.train.select), "elapsed_s": self.budget.spent(),
                **self._conditioning()}

    def _conditioning(self):
        """A conditional run's encoding (category lists, attribute ranges), so samples decode to the labels."""
        enc = getattr(self.train_set, "encoding", None)
        return {} if enc is None else {"conditioning": enc.to_dict()}

    def save(self, step, scored=False):
        """A checkpoint of `step` (rank 0 writes it; an error there stops every rank). scored: a regular
        checkpoint, which checkpoint selection (train.select) scores first; a stop's extra one is not scored,
        so that a resumed run's scores are those of an uninterrupted one."""
        self.steps.check_ranks_agree(step)
        self.comm.collective(lambda: self._save(step, scored), root_only=True)

    def _save(self, step, scored=False):
        method = self.cfg.train.select
        ckpt = Checkpoint.capture(self.steps.checkpoint_params(), self.solvers(), self.meta(step))
        bad = ckpt.first_non_finite()
        if bad:  # a finite loss, then an update that overflowed: keep the last good checkpoint the newest
            raise self.diverged(step - 1, f"{bad} is not finite after the update")
        # a step saved twice (a benchmark's time mark on a regular checkpoint's step) is scored once
        if scored and method != "none" and step not in self.selection:
            score_checkpoint(self._selection_sample, self.train_set, self.cfg, step, self.selection)
            ckpt.meta["selection"] = self.selection.to_dict(method)
        ckpt.save(self.run.checkpoint_path(step))
        best = self.selection.best
        self.run.prune(self.cfg.train.keep_checkpoints, protect=() if best is None else (best,))
        if method != "none":
            write_selection(self.run.path, self.selection, method)
        if scored and step in self.selection:
            self.tracker.log_metrics({"selection_score": dict(self.selection.history)[step]}, step)

    def _selection_note(self):
        """The progress bar's selection fields: the last checkpoint's score and the selected step."""
        if not self.selection.history:
            return {}
        best = self.selection.best
        return {"sel": f"{self.selection.history[-1][1]:.3f}",
                "best": f"{best} ({dict(self.selection.history)[best]:.3f})"}

    def _sampler(self):
        from gan_sru.sampling import Sampler

        if self.sampler is None:
            self.sampler = Sampler(self.cfg.model.generator, self.train_set.num_features, self.steps.max_len,
                                   cond=self.steps.cond)
        return self.sampler

    def _selection_sample(self, num, lengths, attrs, seed):
        """(num, max(lengths), C) from G's moving average, for checkpoint selection."""
        with self.steps.ema_weights():
            return self._sampler().sample(int(np.max(lengths)), num, seed, lengths, attrs)

    def diverged(self, step, what):
        last = self.run.list_checkpoints()
        where = (f"the last good checkpoint is {last[-1][1]} (step {last[-1][0]})" if last
                 else "no checkpoint was written yet")
        return TrainingDiverged(f"training diverged at step {step}: {what}; {where}. Try a lower learning rate "
                                "(train.lr) or train.grad_clip.")

    def _budget_spent(self):
        """True once train.budget's seconds are spent (rank 0's clock decides, so every rank stops at the same
        step)."""
        if self.comm.size == 1 or self.budget.seconds is None:
            return self.budget.exhausted()
        return bool(self.comm.broadcast_object(self.budget.exhausted() if self.comm.is_root else None))

    def _on_signal(self, signum, frame):
        self.stop_signal = signum

    def _stopping(self):
        """One process: a signal arrived. Several: a rank's signal reached all with the last step's gradients."""
        return self.stop_signal is not None if self.comm.size == 1 else self.steps.any_stop

    def train(self):
        """Run to cfg.train.steps. Returns the run folder path.

        A write that fails (full disk, unwritable folder) is a RunFolderError; the checkpoints written so
        far stay complete and --resume continues from the newest.
        """
        old_handlers = {s: signal.getsignal(s) for s in STOP_SIGNALS}
        try:
            return self._train()
        except OSError as e:
            error = RunFolderError(
                f"cannot write into run folder {self.run.path}: {e.strerror or e}"
                f"{f' ({e.filename})' if e.filename else ''}; its checkpoints are complete and --resume "
                "continues from the newest")
            if getattr(e, distributed.EVERY_RANK, False):  # rank 0's failed write, raised on every rank
                distributed.on_every_rank(error)
            raise error from e
        finally:  # restored only now: a second Ctrl-C while saving or reporting is absorbed, not a traceback
            for s, h in old_handlers.items():
                signal.signal(s, h)

    def _train(self):
        from nnabla.monitor import Monitor, MonitorSeries, MonitorTimeElapsed
        from tqdm.auto import tqdm  # a widget in a notebook, text in a terminal

        self._log(self.comm.describe())
        self.comm.collective(self.prepare)  # an error on any rank (bad data, a locked folder) stops every rank
        replicas.check_same_data(self.comm, self.train_set, self.scaler)
        self.start_step = self.comm.broadcast_object(self.start_step)
        self.budget.before = self.comm.broadcast_object(self.budget.before)
        self.steps.sync_state()  # rank 0's state, restored or fresh, on every rank
        cfg, t, root = self.cfg, self.cfg.train, self.comm.is_root
        total, budget = t.steps, self.budget
        if self.start_step >= total or budget.exhausted():
            why = (f"train.steps = {total}" if self.start_step >= total else
                   f"{budget.before:.0f} s of train.budget = {t.budget} spent")
            key = "train.steps" if self.start_step >= total else "train.budget"
            self._log(f"{self.run.path} is complete at step {self.start_step} ({why}); "
                      f"to train on, raise it: --set {key}=...")
            self.run.unlock()
            return self.run.path
        if root:
            monitor = Monitor(self.run.monitors)
            series = {k: self.run.monitor(MonitorSeries, k, monitor, t.log_every, "series", self.start_step)
                      for k in ("d_loss", "g_loss")}
            timer = self.run.monitor(MonitorTimeElapsed, "time", monitor, t.log_every, "timer", self.start_step)
        if root:  # MLflow: tracking.NULL unless tracking is on; a resumed run continues its MLflow run
            self.tracker = tracking.open_run(cfg, self.run.path, self.track, resume=self.start_step > 0)
            self.tracker.log_params(flat_config(cfg))
        for s in STOP_SIGNALS:
            signal.signal(s, self._on_signal)
        self.steps.stop_requested = lambda: self.stop_signal is not None
        step = self.start_step
        # with a budget the bar counts steps without a total and shows the time left
        bar = tqdm(total=total if budget.seconds is None else None, initial=step, disable=not self.progress or not root,
                   desc=cfg.name, unit="step", dynamic_ncols=True)
        last_saved = step
        budget.start()
        if budget.seconds is not None:  # the Gumbel temperature follows its fraction
            self.steps.schedule_fraction = lambda: budget.spent() / budget.seconds
        try:
            while step < total and not self._stopping() and not self.aborted and not self._budget_spent():
                d_loss, g_loss = self.steps.step(step)  # the global batch's losses: the same on every rank
                if not (math.isfinite(d_loss) and math.isfinite(g_loss)):
                    raise distributed.on_every_rank(
                        self.diverged(step, f"discriminator loss {d_loss}, generator loss {g_loss}"))
                step += 1
                if root:
                    series["d_loss"].add(step, d_loss)
                    series["g_loss"].add(step, g_loss)
                    timer.add(step)
                    self.tracker.add_losses(step, d_loss, g_loss, cfg.train.log_every)  # means, as the monitors
                if step % t.checkpoint_every == 0 or step == total:
                    self.save(step, scored=True)
                    last_saved = step
                # after the save: the bar's last state shows the score and selection that selection.json has
                left = {} if budget.seconds is None else {"left": budget.left_text()}
                bar.set_postfix(d=f"{d_loss:.3f}", g=f"{g_loss:.3f}", **left, **self._selection_note(), refresh=False)
                bar.update(1)
                if step % t.sample_every == 0 or step == total:
                    self.comm.collective(functools.partial(self.write_samples, step), root_only=True)
                if self.step_fn is not None:
                    self.step_fn(self, step, d_loss, g_loss)
                self.aborted = bool(self.abort_fn and self.abort_fn())
            self.stop_signal = self.comm.agree_first(self.stop_signal)  # a rank's signal stops them all
            if (self.stop_signal is not None or self.aborted) and step != last_saved:
                self.save(step)
            elif step != last_saved:  # the budget ended the run between checkpoints: the last one is scored
                self.save(step, scored=True)
                self.comm.collective(functools.partial(self.write_samples, step), root_only=True)
        except BaseException:
            self.tracker.close("FAILED")
            raise
        finally:
            bar.close()
            self.run.unlock()
        elapsed = budget.elapsed()
        done = step - self.start_step
        if self.stop_signal is not None:
            name = signal.Signals(self.stop_signal).name
            launch = f"mpirun -n {self.comm.size} " if self.comm.size > 1 else ""
            self._log(f"stopped by {name} at step {step}; checkpoint saved in {self.run.checkpoints}. "
                      f"Resume with: {launch}python train.py --config {self.run.config_path} --resume")
            self.tracker.close("KILLED")
        else:
            self.comm.collective(self.write_curves, root_only=True)
            self._log(f"trained {done} steps in {elapsed:.1f} s ({done / max(elapsed, 1e-9):.2f} steps/s); "
                      f"run folder: {self.run.path}")
            self._log(f"pictures: {self.run.samples}")
            tracking.finish_training(self.tracker, self.run.path, "KILLED" if self.aborted else "FINISHED")
        return self.run.path

    def write_samples(self, step):
        """A real-vs-generated picture of the longest bucket, with fixed noise so frames are comparable."""
        from gan_sru import plots

        picked = picture_indices(len(self.train_set), self.cfg.seed)
        attrs = None if self.train_set.attributes is None else \
            self.train_set.attributes[picked[np.arange(16) % len(picked)]]  # the real sequences' attributes
        with self.steps.ema_weights():
            fake = self._sampler().sample(self.spec.boundaries[-1], 16, seed=12345, attrs=attrs)
        real = [self.train_set.sequences[i] for i in picked]
        plots.real_vs_fake(real, list(fake), os.path.join(self.run.samples, f"step_{step:08d}.png"))
        self.tracker.log_artifacts([os.path.join(self.run.samples, f"step_{step:08d}.png")], "samples")

    def write_curves(self):
        from gan_sru.plots.training import curves_from_monitors

        curves_from_monitors(self.run.monitors, os.path.join(self.run.path, "losses.png"))
