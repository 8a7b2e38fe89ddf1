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

from gan_sru.networks import discriminator, generator_graph
from gan_sru.registry import STRATEGIES

from .losses import d_loss_fn, g_loss_fn, r1_penalty
from .terms import Term, term_list

PERTURB = "d_perturb"  # the R1 penalty's random direction travels with the step's noise under this key


class StepGraph:
    """The training graph of one bucket: noise, real batch and mask in; fake, D and G losses out.

    Shapes: real (L, B, C), mask (L, B), noise as `gan_sru.networks.noise_shapes`. Parameters live under the
    scopes "G" and "D" and are shared by every bucket's graph. moment_impl: the moment terms' ("auto": fused on
    the host on CPU; "ref": plain nnabla ops; docs/results/2026-11-28-moment-terms.md compares the two). reference: the
    `WhitenedReference` of this length's real sequences, needed with train.sequence_whitened_loss > 0;
    windows: the (mean, whitening, target) of their windows (ops/covariance.py), needed with
    train.window_covariance_loss > 0 (a bucket too short for a window goes without the term); predictor: their
    next-step regression (ops/predictor.py), needed with train.predictor_loss > 0 (likewise); profile: their
    step profile (ops/step_profile.py), needed with train.step_profile_loss > 0. terms: the Term objects
    (gan_sru/train/terms/; default: `term_list(cfg.train)`); refs: {term name: its reference for this bucket},
    which the four reference arguments above add to.
    """

    def __init__(self, cfg, length, batch_size, num_features, max_len, strategy, cond=None, moment_impl="auto",
                 reference=None, windows=None, predictor=None, profile=None, terms=None, refs=None):
        gcfg, dcfg, loss = cfg.model.generator, cfg.model.discriminator, cfg.train.loss
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
        # the fake batch is made for the real batch's attributes: D judges (sequence, attributes) pairs
        d_real = discriminator(dcfg, self.real, self.mask, attrs=self.attrs)
        d_fake = discriminator(dcfg, fake_d, self.mask, attrs=self.attrs)
        with nn.no_grad():  # the G loss reads D's weights but never trains them: no gradient for them there
            d_gen = discriminator(dcfg, self.fake_g, self.mask, attrs=self.attrs)
        self.d_loss = d_loss_fn(loss, d_real, d_fake)
        self.g_loss = g_loss_fn(loss, d_gen)
        # the generator's terms (gan_sru/train/terms/): each adds weight x its discrepancy against its reference
        self.moment_impl, self.cond = moment_impl, cond
        refs = dict(refs or {})
        given = {"sequence_whitened": reference, "window_covariance": windows, "predictor": predictor,
                 "step_profile": profile}
        refs.update({k: v for k, v in given.items() if v is not None})
        self.terms = []
        for term in term_list(cfg.train) if terms is None else terms:
            if not term.applies(length, self):
                continue
            ref = refs.get(term.name)
            if ref is None and type(term).reference is not Term.reference:
                raise ValueError(f"StepGraph: train term {term.name!r} needs the real data's reference "
                                 f"for the bucket of length {length}")
            self.terms.append(term)
            self.g_loss = self.g_loss + term.weight * term.discrepancy(self, ref)
        weight = cfg.train.attribute_loss_weight
        if self.attrs is not None and weight > 0:  # the auxiliary attribute classifier (gan_sru/conditioning.py)
            from gan_sru.conditional.networks import attribute_loss

            width = dcfg.hidden_size
            self.d_loss = self.d_loss + weight * attribute_loss(self.real, self.mask, self.attrs, cond, width)
            self.g_loss = self.g_loss + weight * attribute_loss(self.fake_g, self.mask, self.attrs, cond, width)
        # train.r1_gamma: the direction u (L, B, C), fed per step, and the penalty. With train.r1_every k > 1
        # (lazy regularisation) d_loss carries it with weight k x gamma and d_loss_lazy, D's loss at the other
        # steps, does not (GanSteps.d_step picks one). With train.r1_stride k the penalty takes every k-th
        # sequence of the batch (sequences 0, k, 2k, ...): its pass of D runs on B/k sequences
        self.d_perturb = self.r1 = self.d_loss_lazy = None
        self.r1_stride = cfg.train.r1_stride
        if cfg.train.r1_gamma > 0:
            eps, every, k = cfg.train.r1_epsilon, cfg.train.r1_every, self.r1_stride
            real, mask, attrs, d_ref = self.real, self.mask, self.attrs, d_real
            if k > 1:
                real = F.slice(real, step=(1, k, 1))
                mask = F.slice(mask, step=(1, k))
                attrs = None if attrs is None else F.slice(attrs, step=(k, 1))
                d_ref = F.slice(d_real, step=(k, 1))
            self.d_perturb = nn.Variable(real.shape)
            d_perturbed = discriminator(dcfg, real + eps * self.d_perturb, mask, attrs=attrs)
            self.r1 = r1_penalty(d_ref, d_perturbed, eps)
            self.r1.persistent = True  # readable after the D step (tests, probes)
            if every > 1:
                self.d_loss_lazy = self.d_loss
                self.d_loss_lazy.persistent = True
            self.d_loss = self.d_loss + every * cfg.train.r1_gamma * self.r1
        self.d_loss.persistent = self.g_loss.persistent = True

    def feed(self, batch, noise):
        """The batch and the step's noise (GanSteps.inputs: G's noise, and under PERTURB the R1 direction)."""
        self.real.d = batch.x
        self.mask.d = batch.mask
        for k, v in noise.items():
            if k == PERTURB:
                s = self.r1_stride  # the penalty's sequences; padded steps stay unperturbed
                self.d_perturb.d = v[:, ::s] * batch.mask[:, ::s, None]
            else:
                self.noise[k].d = v
        if self.attrs is not None:
            self.attrs.d = batch.attrs


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
