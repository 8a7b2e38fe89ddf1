"""GAN training: losses, the per-bucket step graphs, the three step strategies, and the trainer.

The detached step (see DESIGN.md): the fake batch is computed once per step, `fake.persistent = True`,
and D sees it through two unlinked views: `fake_d` (need_grad=False) for the D loss, `fake_g`
(need_grad=True) for the G loss. After the G loss's backward has filled `fake_g.grad` (shared with
`fake.grad`), `fake.backward(grad=None)` carries it through G. G runs forward once and backward once.
`linked` (D's backward also runs through G; G runs forward again) and `recompute` (D step detached, G
runs forward again for the G step) are the usual alternatives, kept for comparison (`gan-sru profile`).
"""
import contextlib
import math
import os
import signal
import sys
import time

import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
import numpy as np

import models

from . import ConfigError, RunFolderError, TrainingDiverged
from .config import dump_config, load_config
from .data import BucketSpec, load_dataset, sample_batch
from .run_folder import Checkpoint, RunFolder

STRATEGIES = ("detached", "linked", "recompute")
LOSSES = ("non_saturating", "hinge", "least_squares", "wasserstein")
_NOISE_STREAM = 7  # separates the noise's random stream from the data's


# ---------------------------------------------------------------- losses

def d_loss_fn(kind, d_real, d_fake):
    """Discriminator loss from logits (B, 1) of real and fake sequences."""
    if kind == "non_saturating":
        return F.mean(F.softplus(-d_real)) + F.mean(F.softplus(d_fake))
    if kind == "hinge":
        return F.mean(F.relu(1.0 - d_real)) + F.mean(F.relu(1.0 + d_fake))
    if kind == "least_squares":
        return 0.5 * (F.mean(F.squared_error(d_real, F.constant(1.0, d_real.shape))) + F.mean(d_fake * d_fake))
    if kind == "wasserstein":
        return F.mean(d_fake) - F.mean(d_real)
    raise ValueError(f"unknown loss {kind!r}; expected one of {LOSSES}")


def g_loss_fn(kind, d_fake):
    """Generator loss from the discriminator's logits (B, 1) of fake sequences."""
    if kind == "non_saturating":
        return F.mean(F.softplus(-d_fake))
    if kind in ("hinge", "wasserstein"):
        return -F.mean(d_fake)
    if kind == "least_squares":
        return 0.5 * F.mean(F.squared_error(d_fake, F.constant(1.0, d_fake.shape)))
    raise ValueError(f"unknown loss {kind!r}; expected one of {LOSSES}")


# ---------------------------------------------------------------- graphs

class StepGraph:
    """The training graph of one bucket: noise, real batch and mask in; fake, D and G losses out.

    Shapes: real (L, B, C), mask (L, B), noise as `models.noise_shapes`. Parameters live under the
    scopes "G" and "D" and are shared by every bucket's graph.
    """

    def __init__(self, cfg, length, batch_size, num_features, max_len, strategy):
        gcfg, dcfg, loss = cfg["model"]["generator"], cfg["model"]["discriminator"], cfg["train"]["loss"]
        self.length, self.strategy = length, strategy
        self.noise = {k: nn.Variable(s) for k, s in models.noise_shapes(gcfg, length, batch_size).items()}
        self.mask = nn.Variable((length, batch_size))
        self.real = nn.Variable((length, batch_size, num_features))
        with nn.parameter_scope("G"):
            self.fake = models.build_generator(gcfg, self.noise, self.mask, num_features, max_len)
        self.fake.persistent = True
        if strategy == "detached":
            fake_d = self.fake.get_unlinked_variable(need_grad=False)
            self.fake_g = self.fake.get_unlinked_variable(need_grad=True)
        elif strategy == "recompute":
            fake_d = self.fake.get_unlinked_variable(need_grad=False)
            self.fake_g = self.fake
        elif strategy == "linked":
            fake_d = self.fake_g = self.fake
        else:
            raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
        with nn.parameter_scope("D"):
            d_real = models.build_discriminator(dcfg, self.real, self.mask)
            d_fake = models.build_discriminator(dcfg, fake_d, self.mask)
            d_gen = models.build_discriminator(dcfg, self.fake_g, self.mask)
        self.d_loss = d_loss_fn(loss, d_real, d_fake)
        self.g_loss = g_loss_fn(loss, d_gen)
        self.d_loss.persistent = self.g_loss.persistent = True

    def feed(self, batch, noise):
        self.real.d = batch.x
        self.mask.d = batch.mask
        for k, v in noise.items():
            self.noise[k].d = v


def generator_params():
    with nn.parameter_scope("G"):
        return dict(nn.get_parameters(grad_only=False))


def discriminator_params():
    with nn.parameter_scope("D"):
        return dict(nn.get_parameters(grad_only=False))


def all_params():
    params = {f"G/{k}": v for k, v in generator_params().items()}
    params.update({f"D/{k}": v for k, v in discriminator_params().items()})
    return params


def clip_global_norm(solver, params, max_norm):
    """Scale all gradients of `solver` so that their joint L2 norm is at most `max_norm`."""
    norm = math.sqrt(sum(float(np.square(p.g).sum()) for p in params.values()))
    if norm > max_norm:
        solver.scale_grad(max_norm / (norm + 1e-12))
    return norm


# ---------------------------------------------------------------- the step

class GanSteps:
    """Graphs per bucket (built lazily, reused), two Adam solvers, and one training step per call.

    Batches and noise are pure functions of (seed, step), so a run resumed from a checkpoint continues
    exactly as if never stopped.
    """

    def __init__(self, cfg, train_set, spec, strategy=None):
        self.cfg, self.train_set, self.spec = cfg, train_set, spec
        self.strategy = strategy or cfg["train"]["strategy"]
        self.tcfg = cfg["train"]
        self.batch_size = self.tcfg["batch_size"]
        self.num_features = train_set.num_features
        self.max_len = int(spec.boundaries[-1])
        self.graphs = {}
        self.graph_builds = 0
        # function_pre_hook of every forward / backward run here (`gan-sru profile` counts function calls)
        self.forward_hook = self.backward_hook = None
        nn.random.prng = np.random.RandomState(cfg["seed"])  # parameter initialisation
        self.graph_for(spec.boundaries[0])  # creates the parameters
        self.g_params, self.d_params = generator_params(), discriminator_params()
        t = self.tcfg
        self.solver_g = S.Adam(t["g_lr"], t["beta1"], t["beta2"])
        self.solver_d = S.Adam(t["d_lr"], t["beta1"], t["beta2"])
        self.solver_g.set_parameters(self.g_params)
        self.solver_d.set_parameters(self.d_params)
        # moving average of G's weights (Variables, so checkpoints save and restore them like parameters)
        self.ema_decay = t["g_ema"]
        self.ema = {k: nn.Variable.from_numpy_array(v.d.copy()) for k, v in self.g_params.items()} \
            if self.ema_decay > 0 else {}

    def graph_for(self, length):
        """The step graph of a bucket length, built on first use."""
        if length not in self.graphs:
            self.graphs[length] = StepGraph(self.cfg, length, self.batch_size, self.num_features, self.max_len,
                                            self.strategy)
            self.graph_builds += 1
        return self.graphs[length]

    def inputs(self, step, k=0):
        """The real batch and noise of critic iteration k of `step`."""
        seed = self.cfg["seed"]
        index = step * self.tcfg["n_critic"] + k
        batch = sample_batch(self.train_set, self.spec, self.batch_size, seed, index)
        rng = np.random.default_rng([seed, index, _NOISE_STREAM])
        noise = models.sample_noise(self.cfg["model"]["generator"], batch.x.shape[0], self.batch_size, rng)
        return batch, noise

    def step(self, step):
        """One generator update preceded by n_critic discriminator updates. Returns (d_loss, g_loss).

        `self.phase(name)` wraps each phase ("g_forward", "d_step", "g_step", and "g_backward" within
        the detached "g_step"); the profiler replaces it with a timer. In the linked strategy G's forward
        is part of "d_step".
        """
        for k in range(self.tcfg["n_critic"]):
            batch, noise = self.inputs(step, k)
            g = self.graph_for(batch.x.shape[0])
            g.feed(batch, noise)
            if self.strategy != "linked":
                with self.phase("g_forward"):
                    # G runs once; its backward buffers are kept
                    g.fake.forward(clear_no_need_grad=True, function_pre_hook=self.forward_hook)
            with self.phase("d_step"):
                self.d_step(g)
        with self.phase("g_step"):
            self.g_step(g)
        for k, e in self.ema.items():
            e.d = self.ema_decay * e.d + (1.0 - self.ema_decay) * self.g_params[k].d
        return float(g.d_loss.d), float(g.g_loss.d)

    def checkpoint_params(self):
        """Everything a checkpoint holds besides solver states: G, D and the moving average of G."""
        params = all_params()
        params.update({f"EMA/G/{k}": v for k, v in self.ema.items()})
        return params

    @contextlib.contextmanager
    def ema_weights(self):
        """G's parameters temporarily replaced by their moving average (for sampling during training)."""
        if not self.ema:
            yield
            return
        saved = {k: p.d.copy() for k, p in self.g_params.items()}
        try:
            for k, p in self.g_params.items():
                p.d = self.ema[k].d
            yield
        finally:
            for k, p in self.g_params.items():
                p.d = saved[k]

    @staticmethod
    def phase(name):
        return contextlib.nullcontext()

    def d_step(self, g):
        """D update; the fake batch must be computed already unless the strategy is linked."""
        self.solver_d.zero_grad()
        g.d_loss.forward(clear_no_need_grad=True, function_pre_hook=self.forward_hook)
        g.d_loss.backward(clear_buffer=True, function_pre_hook=self.backward_hook)
        self._update(self.solver_d, self.d_params)
        if self.tcfg["loss"] == "wasserstein":
            c = self.tcfg["weight_clip"]
            for p in self.d_params.values():
                p.data.copy_from(F.clip_by_value(p.data, -c, c))

    def g_step(self, g):
        self.solver_g.zero_grad()
        if self.strategy == "detached":
            g.fake_g.grad.zero()
            g.g_loss.forward(clear_no_need_grad=True, function_pre_hook=self.forward_hook)
            g.g_loss.backward(clear_buffer=True, function_pre_hook=self.backward_hook)
            with self.phase("g_backward"):
                g.fake.backward(grad=None, clear_buffer=True, function_pre_hook=self.backward_hook)
        else:  # the G loss is linked to the noise: G runs forward again, then backward
            g.g_loss.forward(clear_no_need_grad=True, function_pre_hook=self.forward_hook)
            g.g_loss.backward(clear_buffer=True, function_pre_hook=self.backward_hook)
        self._update(self.solver_g, self.g_params)

    def _update(self, solver, params):
        if self.tcfg["grad_clip"]:
            clip_global_norm(solver, params, self.tcfg["grad_clip"])
        solver.update()


# ---------------------------------------------------------------- the trainer

class Trainer:
    """Trains one run: data, graphs, run folder, checkpoints, monitors, pictures, progress.

    `Trainer(cfg).train()` trains `cfg["train"]["steps"]` steps into `run_dir/name`, resuming from the
    newest checkpoint when `resume=True`.
    """

    def __init__(self, cfg, resume=False, progress=True, strategy=None, out=sys.stdout):
        self.cfg, self.progress, self.out = cfg, progress, out
        self.run = RunFolder(os.path.join(cfg["run_dir"], cfg["name"]))
        self.resume = resume
        self.strategy = strategy
        self.stop_signal = None

    def _log(self, msg):
        print(msg, file=self.out, flush=True)

    def prepare(self):
        """Load the data, lock and fill the run folder, build the steps, restore a checkpoint."""
        cfg, run = self.cfg, self.run
        existing = run.list_checkpoints()
        if existing and not self.resume:
            raise RunFolderError(
                f"run folder {run.path} already holds checkpoints (newest: step {existing[-1][0]}); "
                "continue it with --resume, or train into another run name (--set name=...)")
        dataset = load_dataset(cfg["data"], cfg["seed"])  # before the folder exists: bad data leaves nothing
        run.create().lock()
        changed = self._changed_keys() if self.resume else []
        self.train_set, self.holdout = dataset.split(cfg["data"]["holdout_fraction"], cfg["seed"])
        self.scaler = dataset.scaler
        self.spec = BucketSpec.from_lengths(dataset.lengths, cfg["data"]["num_buckets"])
        self.steps = GanSteps(cfg, self.train_set, self.spec, strategy=self.strategy)
        self.start_step = 0
        latest = run.latest_checkpoint() if self.resume else None
        if latest is not None:
            step, ckpt = latest
            # refuses other sizes first, naming the parameter; then any other change of model, data or seed
            ckpt.restore(self.steps.checkpoint_params(), self.solvers(),
                         source=f"checkpoint {run.checkpoint_path(step)}")
            self.start_step = step
        if latest is not None and changed:
            raise ConfigError(
                f"cannot resume {run.path} with a different config: {', '.join(changed)} differ from the run's "
                f"{run.config_path} (only train.* may change between sessions). Resume with "
                f"`python train.py --config {run.config_path} --resume`, or train into another run name "
                "(--set name=...)")
        if latest is not None:
            self._log(f"resumed {run.path} from step {self.start_step}")
        dump_config(cfg, run.config_path)  # after the restore: a refused resume leaves the run's config as it was

    def _changed_keys(self):
        """Dotted keys outside train.* (and the run's name and folder) where cfg differs from the saved one."""
        if not os.path.exists(self.run.config_path):
            return []
        saved = load_config(self.run.config_path)

        def flat(d, prefix=""):
            for k, v in d.items():
                if isinstance(v, dict):
                    yield from flat(v, f"{prefix}{k}.")
                else:
                    yield f"{prefix}{k}", v

        now, before = dict(flat(self.cfg)), dict(flat(saved))
        ignore = ("train.", "name", "run_dir")
        return sorted(k for k in set(now) | set(before)
                      if not k.startswith(ignore) and now.get(k) != before.get(k))

    def solvers(self):
        return {"G": self.steps.solver_g, "D": self.steps.solver_d}

    def meta(self, step):
        return {"step": step, "scaler": self.scaler.to_dict(), "buckets": self.spec.to_dict(),
                "num_features": self.train_set.num_features, "strategy": self.steps.strategy,
                "config": self.cfg, "format": 1}

    def save(self, step):
        ckpt = Checkpoint.capture(self.steps.checkpoint_params(), self.solvers(), self.meta(step))
        bad = ckpt.first_non_finite()
        if bad:  # a finite loss, then an update that overflowed: keep the last good checkpoint the newest
            raise self.diverged(step - 1, f"{bad} is not finite after the update")
        ckpt.save(self.run.checkpoint_path(step))
        self.run.prune(self.cfg["train"]["keep_checkpoints"])

    def diverged(self, step, what):
        last = self.run.list_checkpoints()
        where = (f"the last good checkpoint is {last[-1][1]} (step {last[-1][0]})" if last
                 else "no checkpoint was written yet")
        return TrainingDiverged(f"training diverged at step {step}: {what}; {where}. Try lower learning rates "
                                "(train.g_lr, train.d_lr) or train.grad_clip.")

    def _resumed(self, cls, name, monitor, interval, kind):
        """An nnabla monitor that keeps the run's earlier lines up to the resumed step (nnabla's monitors
        empty their file when created; lines after the last checkpoint are dropped, they are redone)."""
        path = os.path.join(self.run.monitors, f"{name}.{kind}.txt")
        kept = []
        if self.start_step > 0 and os.path.exists(path):
            with open(path) as f:
                kept = [line for line in f if line.split() and line.split()[0].isdigit()
                        and int(line.split()[0]) <= self.start_step]
        m = cls(name, monitor, interval=interval, verbose=False)
        if kept:
            with open(path, "a") as f:
                f.writelines(kept)
        m.flush_at = self.start_step
        return m

    def _on_signal(self, signum, frame):
        self.stop_signal = signum

    def train(self):
        """Run to cfg.train.steps. Returns the run folder path.

        A write that fails (full disk, unwritable folder) is a RunFolderError; the checkpoints written so
        far stay complete and --resume continues from the newest.
        """
        try:
            return self._train()
        except OSError as e:
            raise RunFolderError(
                f"cannot write into run folder {self.run.path}: {e.strerror or e}"
                f"{f' ({e.filename})' if e.filename else ''}; its checkpoints are complete and --resume "
                "continues from the newest") from e

    def _train(self):
        from nnabla.monitor import Monitor, MonitorSeries, MonitorTimeElapsed
        from tqdm import tqdm

        self.prepare()
        cfg, t = self.cfg, self.cfg["train"]
        total = t["steps"]
        if self.start_step >= total:
            self._log(f"{self.run.path} is complete at step {self.start_step} (train.steps = {total}); "
                      f"to train on, raise it: --set train.steps=...")
            self.run.unlock()
            return self.run.path
        monitor = Monitor(self.run.monitors)
        series = {k: self._resumed(MonitorSeries, k, monitor, t["log_every"], "series")
                  for k in ("d_loss", "g_loss")}
        timer = self._resumed(MonitorTimeElapsed, "time", monitor, t["log_every"], "timer")
        old_handlers = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        step = self.start_step
        bar = tqdm(total=total, initial=step, disable=not self.progress, desc=cfg["name"], unit="step",
                   dynamic_ncols=True)
        last_saved = step
        t0 = time.perf_counter()
        try:
            while step < total and self.stop_signal is None:
                d_loss, g_loss = self.steps.step(step)
                if not (math.isfinite(d_loss) and math.isfinite(g_loss)):
                    raise self.diverged(step, f"discriminator loss {d_loss}, generator loss {g_loss}")
                step += 1
                series["d_loss"].add(step, d_loss)
                series["g_loss"].add(step, g_loss)
                timer.add(step)
                bar.update(1)
                bar.set_postfix(d=f"{d_loss:.3f}", g=f"{g_loss:.3f}", refresh=False)
                if step % t["checkpoint_every"] == 0 or step == total:
                    self.save(step)
                    last_saved = step
                if step % t["sample_every"] == 0 or step == total:
                    self.write_samples(step)
            if self.stop_signal is not None and step != last_saved:
                self.save(step)
        finally:
            bar.close()
            for s, h in old_handlers.items():
                signal.signal(s, h)
            self.run.unlock()
        elapsed = time.perf_counter() - t0
        done = step - self.start_step
        if self.stop_signal is not None:
            name = signal.Signals(self.stop_signal).name
            self._log(f"stopped by {name} at step {step}; checkpoint saved in {self.run.checkpoints}. "
                      f"Resume with: python train.py --config {self.run.config_path} --resume")
        else:
            self.write_curves()
            self._log(f"trained {done} steps in {elapsed:.1f} s ({done / max(elapsed, 1e-9):.2f} steps/s); "
                      f"run folder: {self.run.path}")
            self._log(f"pictures: {self.run.samples}")
        return self.run.path

    def write_samples(self, step):
        """A real-vs-generated picture of the longest bucket, with fixed noise so frames are comparable."""
        from . import plots
        from .generate import generate_sequences

        with self.steps.ema_weights():
            fake = generate_sequences(self.cfg, self.spec.boundaries[-1], 16, seed=12345,
                                      max_len=self.steps.max_len, num_features=self.train_set.num_features)
        real = [self.train_set.sequences[i] for i in range(min(16, len(self.train_set)))]
        plots.real_vs_fake(real, list(fake), os.path.join(self.run.samples, f"step_{step:08d}.png"))

    def write_curves(self):
        from . import plots

        data = {}
        for name in ("d_loss", "g_loss"):
            path = os.path.join(self.run.monitors, f"{name}.series.txt")
            if os.path.exists(path):
                arr = np.loadtxt(path, ndmin=2)
                if arr.size:
                    data[name] = (arr[:, 0], arr[:, 1])
        if data:
            plots.training_curves(data, os.path.join(self.run.path, "losses.png"))
