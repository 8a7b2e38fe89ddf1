"""Generator and discriminator architectures, picked by name from the config's `model` section.

    fake = build_generator(cfg["model"]["generator"], noise, mask, num_features, max_len)  # (L, B, C)
    logits = build_discriminator(cfg["model"]["discriminator"], seqs, mask)         # (B, 1)
"""
from .discriminators import DISCRIMINATORS
from .generators import GENERATORS, noise_shapes, sample_noise


def build_generator(gcfg, noise, mask, num_features, max_len, train=True, impl="auto"):
    """impl="ref": plain nnabla ops only (no custom function), for export."""
    return GENERATORS[gcfg["name"]](gcfg, noise, mask, num_features, max_len, train=train, impl=impl)


def build_discriminator(dcfg, seqs, mask, train=True):
    return DISCRIMINATORS[dcfg["name"]](dcfg, seqs, mask, train=train)


__all__ = ["build_generator", "build_discriminator", "noise_shapes", "sample_noise", "GENERATORS", "DISCRIMINATORS"]
