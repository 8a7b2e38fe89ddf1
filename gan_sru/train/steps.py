"""One training step: one D update and one G update on the per-bucket graphs, two Adam solvers, EMA of G."""
import contextlib
import math

import nnabla as nn
import nnabla.solvers as S
import numpy as np

from gan_sru import GanSruError
from gan_sru.data import pad_batch, sample_batch
from gan_sru.networks import noise_shapes, sample_noise
from gan_sru.ops.gumbel import tau_at
from gan_sru.sizes import apply_size_rules

from . import distributed, replicas
from .graphs import StepGraph, all_params, discriminator_params, generator_params
from .terms import RealData, term_list

_NOISE_STREAM = 7  # separates the noise's random stream from the data's
_REFERENCE_STREAM = 11  # the terms' reference sample's
_SHIFT_STREAM = 13  # D's shifts' (model.discriminator.shift)
ADAM_BETA1 = 0.5  # beta1 = 0 was worse on wide data (docs/results/2026-11-29-optimizer.md)
# the terms' references come from at most this many sequences per bucket: their statistics' sampling error is
# a 45th of the data's spread, a quarter of a batch of 128's
REFERENCE_SEQUENCES = 2048


class StepObserver:
    """What a GanSteps reports to. The default observes nothing; `gan-sru profile` passes one that times
    each phase (`phase(name)` is a context manager around it) and counts function calls through the
    nnabla function_pre_hooks `forward_hook` / `backward_hook` (None: no hook)."""
    forward_hook = None
    backward_hook = None

    def phase(self, name):
        return contextlib.nullcontext()


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
    exactly as if never stopped. With a communicator `comm` of N ranks (data-parallel, see
    train/distributed.py) each rank computes its 1/N shard of every global batch and the gradients are
    averaged before each update; call `sync_state()` once all ranks have built theirs.
    """

    def __init__(self, cfg, train_set, spec, strategy=None, observer=None, comm=None):
        # null model sizes follow the data (gan_sru/sizes.py); self.cfg holds the resolved numbers
        cfg = apply_size_rules(cfg, train_set.num_features, int(spec.boundaries[-1]))
        self.cfg, self.train_set, self.spec = cfg, train_set, spec
        self.observer = observer or StepObserver()
        self.strategy = strategy or cfg.train.strategy
        self.tcfg = cfg.train
        self.batch_size = self.tcfg.batch_size  # the global batch
        self.comm = comm or distributed.NullCommunicator()
        self.local_batch = self.comm.local_batch(self.batch_size)  # this rank's shard of it
        # the trainer's "stop" flag; it travels with the G gradients, so every rank stops after the same step
        self.stop_requested, self.any_stop = (lambda: False), False
        self.num_features = train_set.num_features
        self.cond = getattr(train_set, "encoding", None)  # attributes / categorical features, or None
        self.max_len = int(spec.boundaries[-1])
        self.graphs = {}
        self.graph_builds = 0
        nn.random.prng = np.random.RandomState(cfg.seed)  # parameter initialisation
        self.graph_for(spec.boundaries[0])  # creates the parameters
        self.g_params, self.d_params = generator_params(), discriminator_params()
        t = self.tcfg
        self.solver_g = S.Adam(t.lr, ADAM_BETA1, t.beta2)
        self.solver_d = S.Adam(t.lr, ADAM_BETA1, t.beta2)
        self.solver_g.set_parameters(self.g_params)
        self.solver_d.set_parameters(self.d_params)
        # moving average of G's weights (Variables, so checkpoints save and restore them like parameters)
        self.ema_decay = t.g_ema
        self.ema = {k: nn.Variable.from_numpy_array(v.d.copy()) for k, v in self.g_params.items()} \
            if self.ema_decay > 0 else {}

    def graph_for(self, length):
        """The step graph of a bucket length, built on first use."""
        if length not in self.graphs:
            data = self.real_data(length) if self.terms else None
            self.graphs[length] = StepGraph(self.cfg, length, self.local_batch, self.num_features, self.max_len,
                                            self.strategy, cond=self.cond, terms=self.terms, data=data)
            self.graph_builds += 1
        return self.graphs[length]

    def real_data(self, length):
        """The training sequences of the bucket of `length`, padded to it (a terms.RealData): at most
        REFERENCE_SEQUENCES of them, a sample drawn from the seed, the same on every rank."""
        members = np.flatnonzero(self.spec.buckets_of(self.train_set.lengths) == self.spec.boundaries.index(length))
        if len(members) > REFERENCE_SEQUENCES:
            rng = np.random.default_rng([self.cfg.seed, length, _REFERENCE_STREAM])
            members = np.sort(rng.choice(members, REFERENCE_SEQUENCES, replace=False))
        x, mask, _ = pad_batch([self.train_set.sequences[i] for i in members], length)
        attrs = getattr(self.train_set, "attributes", None)
        return RealData(x, mask, None if attrs is None else attrs[members])

    @property
    def terms(self):
        """The generator's terms (gan_sru/train/terms/) of the config's train.terms."""
        if getattr(self, "_terms", None) is None:
            self._terms = term_list(self.tcfg)
        return self._terms

    def inputs(self, step):
        """The real batch and noise of `step` (this rank's shard of both)."""
        seed, gcfg, rank = self.cfg.seed, self.cfg.model.generator, self.comm.rank
        batch = sample_batch(self.train_set, self.spec, self.batch_size, seed, step, shard=(rank, self.comm.size))
        rng = np.random.default_rng([seed, step, _NOISE_STREAM])
        noise = sample_noise(gcfg, batch.x.shape[0], self.batch_size, rng, self.cond)
        if self.comm.size > 1:  # the global batch's noise, drawn alike on every rank; this rank's slice of it
            noise = distributed.shard_arrays(noise, noise_shapes(gcfg, batch.x.shape[0], self.local_batch, self.cond),
                                             rank)
        return batch, noise

    def shift_draws(self, step, views):
        """Uniform draws (views, local batch) for D's starts (StepGraph.feed_shifts): the global batch's, drawn
        from the seed and step alike on every rank, this rank's block of them."""
        draws = np.random.default_rng([self.cfg.seed, step, _SHIFT_STREAM]).random((views, self.batch_size))
        return distributed.shard_arrays({"shift": draws}, {"shift": (views, self.local_batch)}, self.comm.rank)["shift"]

    schedule_fraction = None  # () -> the spent fraction of train.budget; set by the Trainer under a budget

    def schedule_step(self, step):
        """The step the Gumbel temperature is evaluated at: `step`, or under a budget the point of train.steps
        as far along as the budget is spent, when that is further (a run ends at whichever comes first)."""
        if self.schedule_fraction is None:
            return step
        return max(step, self.schedule_fraction() * self.tcfg.steps)

    def step(self, step):
        """One discriminator update, then one generator update on the same fake batch. Returns (d_loss, g_loss).

        `self.observer.phase(name)` wraps each phase ("g_forward", "d_step", "g_step", and "g_backward"
        within the detached "g_step"). In the linked strategy G's forward is part of "d_step".
        """
        obs = self.observer
        batch, noise = self.inputs(step)
        g = self.graph_for(batch.x.shape[0])
        g.feed(batch, noise, self.shift_draws(step, len(g.shift_indices)) if g.shift_indices else None)
        if g.tau is not None:  # the Gumbel-softmax temperature: a function of the step, so resuming keeps it
            g.tau.d = tau_at(self.schedule_step(step), self.tcfg.steps, self.tcfg.gumbel_tau_start,
                             self.tcfg.gumbel_tau_end)
        if self.strategy != "linked":
            with obs.phase("g_forward"):
                # G runs once; its backward buffers are kept
                g.fake.forward(clear_no_need_grad=True, function_pre_hook=obs.forward_hook)
        with obs.phase("d_step"):
            self.d_step(g)
        with obs.phase("g_step"):
            d_loss, g_loss, stop = self.g_step(g)
        self.any_stop = stop > 0
        for k, e in self.ema.items():
            e.d = self.ema_decay * e.d + (1.0 - self.ema_decay) * self.g_params[k].d
        return d_loss, g_loss

    def sync_state(self):
        """Rank 0's parameters, moving average and solver states on every rank (after building, and after a
        resume restored them on rank 0)."""
        replicas.broadcast_state(self.comm, self.checkpoint_params(), {"G": self.solver_g, "D": self.solver_d})

    def check_ranks_agree(self, step):
        """Refuse to go on when the ranks' parameters, moving average or solver states differ (they are one
        model: every rank applies the same averaged gradients)."""
        if self.comm.size > 1:
            digest = replicas.state_digest(self.checkpoint_params(), {"G": self.solver_g, "D": self.solver_d})
            self.comm.check_same(digest, f"parameters or solver states at step {step}", error=GanSruError,
                                 hint="; the ranks must run the same code, library versions and CPU kind")

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

    def d_step(self, g):
        """One D update; the fake batch must be computed already unless the strategy is linked."""
        self.solver_d.zero_grad()
        g.d_loss.forward(clear_no_need_grad=True, function_pre_hook=self.observer.forward_hook)
        g.d_loss.backward(clear_buffer=True, function_pre_hook=self.observer.backward_hook)
        self._update(self.solver_d, self.d_params)

    def g_step(self, g):
        """G update; returns (d_loss, g_loss, stop), the means over the ranks (the losses of the global batch;
        d_loss of the last D update)."""
        self.solver_g.zero_grad()
        if self.strategy == "detached":
            g.fake_g.grad.zero()
            g.g_loss.forward(clear_no_need_grad=True, function_pre_hook=self.observer.forward_hook)
            g.g_loss.backward(clear_buffer=True, function_pre_hook=self.observer.backward_hook)
            with self.observer.phase("g_backward"):
                g.fake.backward(grad=None, clear_buffer=True, function_pre_hook=self.observer.backward_hook)
        else:  # the G loss is linked to the noise: G runs forward again, then backward
            g.g_loss.forward(clear_no_need_grad=True, function_pre_hook=self.observer.forward_hook)
            g.g_loss.backward(clear_buffer=True, function_pre_hook=self.observer.backward_hook)
        return self._update(self.solver_g, self.g_params,
                            (float(g.d_loss.d), float(g.g_loss.d), float(bool(self.stop_requested()))))

    def _update(self, solver, params, extras=()):
        with self.observer.phase("all_reduce"):  # the global mean gradient (one packed buffer), before clipping sees it
            extras = self.comm.all_reduce_mean(list(params.values()), extras)
        if self.tcfg.grad_clip:
            clip_global_norm(solver, params, self.tcfg.grad_clip)
        solver.update()
        return extras
