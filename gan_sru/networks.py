"""The generator's noise and the one builder of generator graphs (training, sampling and export use it).

    graph = generator_graph(gcfg, length, batch_size, num_features, max_len, train=False)
    for k, v in sample_noise(gcfg, length, batch_size, rng).items(): graph.noise[k].d = v
    graph.mask.d = mask; graph.fake.forward()      # fake (L, B, C) in the data's [0, 1] scale

Parameters live under the scope "G" (generator) and "D" (discriminator); the builders are picked by name
from gan_sru.registry.
"""
from typing import NamedTuple

import nnabla as nn
import numpy as np

from gan_sru.registry import DISCRIMINATORS, GENERATORS


def noise_shapes(gcfg, length, batch_size):
    """Shapes of the generator's noise inputs: per-step noise and one per-sequence vector."""
    return dict(step=(length, batch_size, gcfg["noise_dim"]), static=(batch_size, gcfg["static_noise_dim"]))


def sample_noise(gcfg, length, batch_size, rng):
    """Standard normal noise for `noise_shapes`; float32 arrays."""
    return {k: rng.standard_normal(s).astype(np.float32) for k, s in noise_shapes(gcfg, length, batch_size).items()}


class GeneratorGraph(NamedTuple):
    """noise: {"step": (L, B, Z), "static": (B, S)} Variables; mask (L, B); fake (L, B, C), 0 at padding."""
    noise: dict
    mask: nn.Variable
    fake: nn.Variable


def generator_graph(gcfg, length, batch_size, num_features, max_len, train=True, **options):
    """G's graph for one (length, batch size), its parameters under scope "G" (created on first use).
    `options` go to the builder (e.g. impl="ref" for the plain-ops SRU)."""
    noise = {k: nn.Variable(s) for k, s in noise_shapes(gcfg, length, batch_size).items()}
    mask = nn.Variable((length, batch_size))
    with nn.parameter_scope("G"):
        fake = GENERATORS.lookup(gcfg["name"])(gcfg, noise, mask, num_features, max_len, train=train, **options)
    return GeneratorGraph(noise, mask, fake)


def discriminator(dcfg, seqs, mask, train=True):
    """D's logits (B, 1) of sequences (L, B, C) with mask (L, B); parameters under scope "D"."""
    with nn.parameter_scope("D"):
        return DISCRIMINATORS.lookup(dcfg["name"])(dcfg, seqs, mask, train=train)
