"""Early resource check: the model's size and a training run's memory, estimated from the config and the
data's shape before any network is built, and refused above `train.max_memory_bytes`.

The estimate is an upper-bound style count, not a measurement:

    parameters   generator: per SRU layer in x 4H + 4H (gates, skip projection, biases), H x C out
                 discriminator (sru_bi): per layer 2 (in x 4Hd + 2Hd), a 4Hd x Hd head, Hd + 1 out
    memory       4 bytes x (4 copies of every parameter: weights, gradients, Adam's two moments, plus G's
                 moving average) + 4 bytes x activations kept for the backward pass, ~16 floats per hidden
                 unit, step and sequence of the batch (both networks, real and fake batches)

A config with `hidden_size: 100000` is refused with the estimate and the limit instead of allocating until
MemoryError; a user with the memory raises the limit (`--set train.max_memory_bytes=...`).
"""
from typing import NamedTuple

from gan_sru import ConfigError

FLOAT_BYTES = 4
PARAM_COPIES = 5  # weights, gradients, Adam's m and v; G's moving average (D has none: an upper bound)
ACTIVATION_FLOATS = 16  # floats kept per hidden unit, step and sequence through forward and backward


class Estimate(NamedTuple):
    generator_params: int
    discriminator_params: int
    memory_bytes: int

    @property
    def params(self):
        return self.generator_params + self.discriminator_params


def _size(value, fallback):
    return int(value) if value is not None else int(fallback)


def estimate(cfg, num_features, max_len):
    """Parameters and training memory of `cfg` (sizes resolved by gan_sru/sizes.py's rules where null) for
    data of `num_features` features and sequences of at most `max_len` steps. No nnabla import."""
    from gan_sru.sizes import apply_size_rules

    cfg = apply_size_rules(cfg, num_features, max_len)
    g, d, t = cfg.model.generator, cfg.model.discriminator, cfg.train
    C, L, B = int(num_features), int(max_len), int(t.batch_size)
    H, Hd = int(g.hidden_size), int(d.hidden_size)
    inputs = _size(g.noise_dim, C) + _size(g.static_noise_dim, 0) + C  # noise, traits, conditions (bound)
    g_params, width = 0, inputs
    for _ in range(int(g.num_layers)):
        g_params += width * 4 * H + 4 * H  # gates and a skip projection (3H when width == H), 2 bias rows
        width = H
    g_params += H * C + C
    d_params, width = 0, C + C  # features and a condition channel per feature (bound)
    for _ in range(int(d.num_layers)):
        d_params += 2 * (width * 4 * Hd + 2 * Hd)  # two directions
        width = 2 * Hd
    d_params += 4 * Hd * Hd + 2 * Hd + 1  # head over the pooled directions, output
    activations = ACTIVATION_FLOATS * B * L * (H * int(g.num_layers) + 2 * 2 * Hd * int(d.num_layers))
    memory = FLOAT_BYTES * (PARAM_COPIES * (g_params + d_params) + activations)
    return Estimate(g_params, d_params, memory)


def _gib(n):
    return f"{n / 2**30:.3g} GiB"


def check_resources(cfg, num_features, max_len):
    """ConfigError naming the estimate, its parts and `train.max_memory_bytes` when the run would need more
    than that limit; the Estimate otherwise."""
    e = estimate(cfg, num_features, max_len)
    limit = int(cfg.train.max_memory_bytes)
    if e.memory_bytes > limit:
        raise ConfigError(
            f"this run would need about {_gib(e.memory_bytes)} of memory ({e.generator_params:,} generator and "
            f"{e.discriminator_params:,} discriminator parameters, train.batch_size {cfg.train.batch_size} x "
            f"{max_len} steps of activations), above train.max_memory_bytes {limit:,} ({_gib(limit)}): use "
            "smaller model.generator.hidden_size / model.discriminator.hidden_size or train.batch_size, or "
            f"raise the limit (--set train.max_memory_bytes={max(e.memory_bytes * 5 // 4, limit + 1)})")
    return e
