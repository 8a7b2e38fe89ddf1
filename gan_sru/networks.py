"""The generator's noise and the one builder of generator graphs (training, sampling and export use it).

    graph = generator_graph(gcfg, length, batch_size, num_features, max_len, train=False)
    for k, v in sample_noise(gcfg, length, batch_size, rng).items(): graph.noise[k].d = v
    graph.mask.d = mask; graph.fake.forward()      # fake (L, B, C) in the data's [0, 1] scale

Parameters live under the scope "G" (generator) and "D" (discriminator); the builders are picked by name
from gan_sru.registry.

Conditional runs (`cond`: a gan_sru.data.attributes.Encoding) are wrapped here, not in the builders
(gan_sru/conditioning.py): G gets the encoded attributes joined to its per-sequence noise and emits its
categorical features through a straight-through Gumbel-softmax; D gets the attributes joined to every step.
"""
from typing import NamedTuple

import nnabla as nn
import numpy as np

from gan_sru.registry import DISCRIMINATORS, GENERATORS


def noise_shapes(gcfg, length, batch_size, cond=None):
    """Shapes of the generator's noise inputs: per-step noise (noise_dim channels) and one per-sequence vector;
    with categorical features (cond), also the Gumbel noise of their blocks, "gumbel" (L, B, K)."""
    for key in ("noise_dim", "static_noise_dim", "hidden_size", "num_layers"):
        if gcfg.get(key, 0) is None:  # a config straight from load_config: the data decides these
            raise ValueError(f"model.generator.{key} is null: resolve the sizes from the data first "
                             "(gan_sru.sizes.apply_size_rules)")
    shapes = dict(step=(length, batch_size, gcfg["noise_dim"]), static=(batch_size, gcfg["static_noise_dim"]))
    if cond is not None and cond.categorical:
        shapes["gumbel"] = (length, batch_size, sum(cond.cat_sizes))
    return shapes


def sample_noise(gcfg, length, batch_size, rng, cond=None):
    """Standard normal noise for `noise_shapes` (Gumbel(0, 1) for "gumbel", drawn last); float32 arrays."""
    from gan_sru.ops.gumbel import gumbel_noise

    return {k: gumbel_noise(rng, s) if k == "gumbel" else rng.standard_normal(s).astype(np.float32)
            for k, s in noise_shapes(gcfg, length, batch_size, cond).items()}


class GeneratorGraph(NamedTuple):
    """noise: {"step": (L, B, Z), "static": (B, S)[, "gumbel": (L, B, K)]} Variables; mask (L, B); fake (L, B, C),
    0 at padding. Conditional runs: attrs (B, W) the encoded attributes (None without attributes), tau (1,) the
    Gumbel-softmax temperature (None without categorical features)."""
    noise: dict
    mask: nn.Variable
    fake: nn.Variable
    attrs: nn.Variable = None
    tau: nn.Variable = None


def generator_graph(gcfg, length, batch_size, num_features, max_len, train=True, cond=None, **options):
    """G's graph for one (length, batch size), its parameters under scope "G" (created on first use).
    `options` go to the builder (e.g. impl="ref" for the plain-ops SRU). cond: the run's Encoding, or None."""
    noise = {k: nn.Variable(s) for k, s in noise_shapes(gcfg, length, batch_size, cond).items()}
    mask = nn.Variable((length, batch_size))
    if cond is not None:
        from gan_sru.conditional.networks import conditional_generator

        fake, attrs, tau = conditional_generator(GENERATORS.lookup(gcfg["name"]), gcfg, cond, noise, mask,
                                                 num_features, max_len, train, options)
        return GeneratorGraph(noise, mask, fake, attrs, tau)
    with nn.parameter_scope("G"):
        inputs = unconditional_inputs(gcfg, noise, length, max_len, options.get("impl", "auto"))
        fake = GENERATORS.lookup(gcfg["name"])(gcfg, inputs, mask, num_features, max_len, train=train, **options)
    return GeneratorGraph(noise, mask, fake)


def unconditional_inputs(gcfg, noise, length, max_len, impl="auto"):
    """The builder's inputs of an unconditional G: the noise, with model.generator.oscillators the oscillator
    bank appended to the step input (gan_sru/conditional/networks.py). Call under G's parameter scope."""
    if not (gcfg.get("oscillators") and gcfg["static_noise_dim"] > 0):
        return noise
    from gan_sru.conditional.networks import with_oscillators

    return dict(noise, step=with_oscillators(gcfg, noise, noise["static"], None, length, max_len, impl))


def discriminator(dcfg, seqs, mask, train=True, attrs=None):
    """D's logits (B, 1) of sequences (L, B, C) with mask (L, B); parameters under scope "D".
    attrs: (B, W) encoded attributes joined to every (valid) step (with dcfg["projection"]: a projection
    discriminator instead, gan_sru/conditioning.py), or None."""
    if attrs is not None:
        from gan_sru.conditional.networks import join_attributes, projection

        if dcfg["projection"]:
            with nn.parameter_scope("D"):
                return projection(DISCRIMINATORS.lookup(dcfg["name"]), dcfg, seqs, mask, attrs, train)
        seqs = join_attributes(seqs, attrs, mask)
    with nn.parameter_scope("D"):
        return DISCRIMINATORS.lookup(dcfg["name"])(dcfg, seqs, mask, train=train)
