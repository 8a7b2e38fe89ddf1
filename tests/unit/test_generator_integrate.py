"""The generator's integrating output (model.generator.integrate): y_0 from the plain output layer, then y_t =
y_0 + the summed increments of steps 1 .. t from a second layer ("output_step")."""
import nnabla as nn
import numpy as np
from conftest import fresh_generator, generator_output

import models  # noqa: F401  (fills the registries)
from gan_sru.networks import generator_graph, sample_noise

L, B, C = 7, 4, 3
GCFG = dict(name="sru", noise_dim=2, output_noise_dim=0, static_noise_dim=3, time_feature=True, highway_bias=0.0,
            hidden_size=8, num_layers=2, bidirectional=False, weight_c=False, layer_norm=False, dropout=0.0,
            oscillators=False, output_activation="identity", integrate=True)
PLAIN = dict(GCFG, integrate=False)


def params():
    return {k: v.d.copy() for k, v in nn.get_parameters().items()}


def test_integrated_output_is_the_start_plus_the_summed_increments():
    """With the increment layer set to the output layer, y_t is the running sum of the plain generator's outputs
    (same seed, so the same SRU and output parameters): the start at step 0, one increment per later step."""
    noise = sample_noise(GCFG, L, B, np.random.default_rng(0))
    plain = generator_output(fresh_generator(PLAIN, L, B, C, seed=3), noise)
    plain_params = params()
    g = fresh_generator(GCFG, L, B, C, seed=3)
    p = nn.get_parameters()
    assert p["G/generator/output_step/affine/W"].shape == (8, C)
    for k, v in plain_params.items():  # the integrating graph adds a layer and changes no other parameter
        np.testing.assert_array_equal(p[k].d, v)
    p["G/generator/output_step/affine/W"].d = p["G/generator/output/affine/W"].d
    p["G/generator/output_step/affine/b"].d = p["G/generator/output/affine/b"].d
    np.testing.assert_allclose(generator_output(g, noise), np.cumsum(plain, axis=0), rtol=1e-5, atol=1e-5)


def test_zero_increments_hold_the_start_and_the_start_comes_from_step_0_only():
    g = fresh_generator(GCFG, L, B, C, seed=1)
    p = nn.get_parameters()
    p["G/generator/output_step/affine/W"].d = 0.0
    p["G/generator/output_step/affine/b"].d = 0.0
    noise = sample_noise(GCFG, L, B, np.random.default_rng(1))
    out = generator_output(g, noise)
    np.testing.assert_allclose(out, np.broadcast_to(out[:1], out.shape), atol=1e-6)
    moved = {k: v.copy() for k, v in noise.items()}
    moved["step"][3:] += 1.0  # later steps' noise cannot move a path with no increments
    np.testing.assert_allclose(generator_output(g, moved), out, atol=1e-6)


def test_increments_start_small_so_a_window_spreads_as_a_plain_output_does():
    """U starts at Glorot's bound over sqrt(max_len - 1): the summed increments of the window are of the order of
    the start, not sqrt(L) times it."""
    g = fresh_generator(GCFG, L, B, C, seed=2)
    w = nn.get_parameters()["G/generator/output_step/affine/W"].d
    limit = (6.0 / (8 + C)) ** 0.5 / (L - 1) ** 0.5
    assert np.abs(w).max() <= limit and np.abs(w).max() > limit / 2
    out = generator_output(g, sample_noise(GCFG, L, B, np.random.default_rng(2)))
    assert np.std(out[-1] - out[0]) < 3 * np.std(out[0]) + 0.1


def test_a_shorter_bucket_shares_the_parameters_and_gives_the_same_leading_steps():
    """Buckets build one graph per length over shared parameters; the running sum is causal, so a 4-step graph's
    samples are the 7-step graph's first 4 steps for the same noise."""
    noise = sample_noise(GCFG, L, B, np.random.default_rng(4))
    long = generator_output(fresh_generator(GCFG, L, B, C, seed=4), noise)
    short = generator_graph(GCFG, 4, B, C, L, train=False)
    short.mask.d = 1.0
    head = {"step": noise["step"][:4], "static": noise["static"]}
    np.testing.assert_allclose(generator_output(short, head), long[:4], rtol=1e-5, atol=1e-6)


def test_padded_steps_stay_zero():
    g = fresh_generator(GCFG, L, B, C, seed=5)
    g.mask.d = (np.arange(L)[:, None] < np.array([7, 3, 5, 1])[None, :]).astype(np.float32)
    out = generator_output(g, sample_noise(GCFG, L, B, np.random.default_rng(5)))
    assert np.all(out[3:, 1] == 0) and np.all(out[1:, 3] == 0) and np.all(out[:5, 2] != 0)
