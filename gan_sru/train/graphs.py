"""GAN training: losses, the per-bucket step graphs, the three step strategies, and the trainer.

The detached step (see DESIGN.md): the fake batch is computed once per step, `fake.persistent = True`,
and D sees it through two unlinked views: `fake_d` (need_grad=False) for the D loss, `fake_g`
(need_grad=True) for the G loss. After the G loss's backward has filled `fake_g.grad` (shared with
`fake.grad`), `fake.backward(grad=None)` carries it through G. G runs forward once and backward once.
The D inside the G loss is built under `nn.no_grad()`: its weights take no gradient there (the next D step
would zero it unread; nnabla gives each graph an unlinked view of a parameter, so this is a build-time choice).
`linked` (D's backward also runs through G; G runs forward again) and `recompute` (D step detached, G
runs forward again for the G step) are the usual alternatives, kept for comparison (`gan-sru profile`).
"""
import nnabla as nn
import nnabla.functions as F
import numpy as np

from gan_sru.networks import discriminator, generator_graph
from gan_sru.registry import STRATEGIES

from .losses import d_loss_fn, g_loss_fn
from .terms import term_list


class StepGraph:
    """The training graph of one bucket: noise, real batch and mask in; fake, D and G losses out.

    Shapes: real (L, B, C), mask (L, B), noise as `gan_sru.networks.noise_shapes`. Parameters live under the
    scopes "G" and "D" and are shared by every bucket's graph. moment_impl: the moment terms' ("auto": fused on
    the host on CPU; "ref": plain nnabla ops; docs/results/2026-11-28-moment-terms.md compares the two). terms: the
    Term objects (gan_sru/train/terms/; default: `term_list(cfg.train)`); data: the bucket's real sequences (a
    `terms.RealData`) that the terms' references are computed from, needed when there are terms.
    """

    def __init__(self, cfg, length, batch_size, num_features, max_len, strategy, cond=None, moment_impl="auto",
                 terms=None, data=None):
        gcfg, dcfg = cfg.model.generator, cfg.model.discriminator
        self.length, self.strategy = length, strategy
        gen = generator_graph(gcfg, length, batch_size, num_features, max_len, cond=cond)
        self.noise, self.mask, self.fake = gen.noise, gen.mask, gen.fake
        self.attrs, self.tau = gen.attrs, gen.tau  # conditional runs (gan_sru/conditioning.py), else None
        self.real = nn.Variable((length, batch_size, num_features))
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
        # D's views of the real, the D loss's and the G loss's fake batch: with model.discriminator.shift each
        # sequence from its own random start (shifted_view), else the batches themselves
        self.shift_steps = int(round(dcfg.shift * length)) if length > 2 else 0
        self.shift_indices = []
        real_v, fake_d_v, fake_g_v = (self.shifted_view(x) for x in (self.real, fake_d, self.fake_g))
        # the fake batch is made for the real batch's attributes: D judges (sequence, attributes) pairs
        d_real = discriminator(dcfg, *real_v, attrs=self.attrs)
        d_fake = discriminator(dcfg, *fake_d_v, attrs=self.attrs)
        with nn.no_grad():  # the G loss reads D's weights but never trains them: no gradient for them there
            d_gen = discriminator(dcfg, *fake_g_v, attrs=self.attrs)
        self.d_loss = d_loss_fn(d_real, d_fake)
        self.g_loss = g_loss_fn(d_gen)
        # the generator's terms (gan_sru/train/terms/): each adds weight x its discrepancy against its reference,
        # the real data's statistics computed here once
        self.moment_impl, self.cond = moment_impl, cond
        self.terms = [t for t in (term_list(cfg.train) if terms is None else terms) if t.applies(length, self)]
        if self.terms and data is None:
            raise ValueError("StepGraph: the generator's terms need the bucket's real data (data=RealData(...))")
        self.references = [term.reference(data, self) for term in self.terms]
        for term, reference in zip(self.terms, self.references):
            self.g_loss = self.g_loss + term.weight * term.discrepancy(self, reference)
        weight = cfg.train.attribute_loss_weight
        if self.attrs is not None and weight > 0:  # the auxiliary attribute classifier (gan_sru/conditioning.py)
            from gan_sru.conditional.networks import attribute_loss

            width = dcfg.hidden_size
            self.d_loss = self.d_loss + weight * attribute_loss(self.real, self.mask, self.attrs, cond, width)
            self.g_loss = self.g_loss + weight * attribute_loss(self.fake_g, self.mask, self.attrs, cond, width)
        self.d_loss.persistent = self.g_loss.persistent = True

    def shifted_view(self, x):
        """(sequences, mask) as D reads x (L, B, C): with shift_steps S > 0, steps s_b .. s_b + L - S - 1 of each
        sequence b (DiffAugment's translation: D sees real and generated windows moved alike, so G's gradient
        passes through the same view and no shift leaks into the samples). s_b is drawn by feed_shifts."""
        if not self.shift_steps:
            return x, self.mask
        length, batch = self.mask.shape
        index = nn.Variable((2, length - self.shift_steps, batch))  # (step, sequence) of each step D reads
        self.shift_indices.append(index)
        return F.gather_nd(x, index), F.gather_nd(self.mask, index)

    def feed_shifts(self, mask, draws):
        """Each view's start s_b, uniform in 0 .. min(S, length_b - 2) (a shorter sequence keeps 2+ steps), from
        draws (views, B) uniform in [0, 1): this rank's block of the global batch's, so any world size reads
        the same starts."""
        length, batch = mask.shape
        top = np.clip(np.minimum(self.shift_steps, mask.sum(axis=0).astype(np.int64) - 2), 0, None)
        steps = np.arange(length - self.shift_steps)[:, None]
        for index, draw in zip(self.shift_indices, draws):
            start = np.minimum((draw * (top + 1)).astype(np.int64), top)
            index.d = np.stack([steps + start[None, :], np.broadcast_to(np.arange(batch), steps.shape[:1] + (batch,))])

    def feed(self, batch, noise, shift_draws=None):
        """The batch and the step's noise (GanSteps.inputs); shift_draws (views, B) set D's starts
        (model.discriminator.shift; None: fresh ones)."""
        self.real.d = batch.x
        self.mask.d = batch.mask
        for k, v in noise.items():
            self.noise[k].d = v
        if self.attrs is not None:
            self.attrs.d = batch.attrs
        if self.shift_indices:
            draws = shift_draws if shift_draws is not None else \
                np.random.default_rng().random((len(self.shift_indices), batch.mask.shape[1]))
            self.feed_shifts(batch.mask, draws)


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
