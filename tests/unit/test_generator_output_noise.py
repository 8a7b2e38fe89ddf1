"""The generator's output noise (model.generator.output_noise_dim): channels of the step noise that bypass the
SRU and enter each output feature at their own step, scaled by softplus(affine(h)), mixed by a learned matrix."""
import nnabla as nn
import numpy as np
import pytest
from conftest import fresh_generator, generator_output

import gan_sru.models  # noqa: F401  (fills the registries)
from gan_sru.models.generators import OUTPUT_NOISE_START
from gan_sru.networks import noise_shapes, sample_noise

L, B, C, Z, E = 6, 4, 3, 2, 5
GCFG = dict(name="sru", noise_dim=Z, output_noise_dim=E, static_noise_dim=3, time_feature=True,
            hidden_size=8, num_layers=2, bidirectional=False, weight_c=False, layer_norm=False, dropout=0.0,
            oscillators=False, output_activation="identity")


def build(gcfg=GCFG, seed=0, impl="auto"):
    return fresh_generator(gcfg, L, B, C, seed, impl)


run = generator_output


def test_the_step_noise_carries_the_output_noise_as_its_last_channels():
    assert noise_shapes(GCFG, L, B)["step"] == (L, B, Z + E)
    assert noise_shapes(dict(GCFG, output_noise_dim=0), L, B)["step"] == (L, B, Z)
    g = build()
    params = nn.get_parameters()
    assert params["G/generator/output_noise_mix/affine/W"].shape == (E, C)
    assert params["G/generator/output_noise_scale/affine/W"].shape == (8, C)
    b = params["G/generator/output_noise_scale/affine/b"].d
    np.testing.assert_allclose(np.log1p(np.exp(b)), OUTPUT_NOISE_START, rtol=1e-5)  # softplus(b): the start
    assert g.fake.shape == (L, B, C)


def test_with_a_channel_per_feature_each_feature_starts_on_its_own_noise():
    """E >= C: the mix starts at the (E, C) identity, independent noise per feature (a measurement noise); E < C:
    N(0, 1 / E), unit variance per feature."""
    build()
    np.testing.assert_array_equal(nn.get_parameters()["G/generator/output_noise_mix/affine/W"].d, np.eye(E, C))
    build(dict(GCFG, output_noise_dim=2))
    w = nn.get_parameters()["G/generator/output_noise_mix/affine/W"].d
    assert w.shape == (2, C) and np.count_nonzero(w) == 2 * C


def test_output_noise_acts_at_its_own_step_and_equals_scale_times_mix():
    g = build()
    noise = sample_noise(GCFG, L, B, np.random.default_rng(0))
    base = run(g, noise)
    # an output noise channel changed at step t changes the output at step t only, by softplus(affine(h_t)) (d A)
    t, delta = 2, np.zeros((E,), np.float32)
    delta[1] = 1.5
    moved = {k: v.copy() for k, v in noise.items()}
    moved["step"][t, :, Z:] += delta
    diff = run(g, moved) - base
    assert np.all(diff[np.arange(L) != t] == 0)
    p = nn.get_parameters()
    # h_t is unchanged (the SRU never sees these channels): recover the scale from the noiseless output
    zero = {k: v.copy() for k, v in noise.items()}
    zero["step"][:, :, Z:] = 0
    noiseless = run(g, zero)
    mix = noise["step"][:, :, Z:] @ p["G/generator/output_noise_mix/affine/W"].d  # (L, B, C)
    scale = (base - noiseless) / np.where(np.abs(mix) > 1e-6, mix, np.nan)
    expected = scale[t] * (delta @ p["G/generator/output_noise_mix/affine/W"].d)
    ok = np.isfinite(expected)
    np.testing.assert_allclose(diff[t][ok], expected[ok], rtol=2e-3, atol=1e-6)
    assert np.all(scale[np.isfinite(scale)] > 0)  # softplus: positive scale at every step and feature


def test_the_sru_channels_still_drive_later_steps_and_off_means_no_parameters():
    g = build()
    noise = sample_noise(GCFG, L, B, np.random.default_rng(1))
    base = run(g, noise)
    moved = {k: v.copy() for k, v in noise.items()}
    moved["step"][1, :, :Z] += 1.0  # an SRU input channel: the recurrence carries it forward
    diff = np.abs(run(g, moved) - base)
    assert np.all(diff[0] == 0) and diff[2:].max() > 1e-4
    build(dict(GCFG, output_noise_dim=0))
    assert not any("output_noise" in k for k in nn.get_parameters())


@pytest.mark.parametrize("value", [-1, 1.5, "4"])
def test_config_refuses_a_bad_output_noise_dim(value):
    from gan_sru.config import ConfigError, check_value

    with pytest.raises(ConfigError, match=r"model.generator.output_noise_dim: got .*expected an integer >= 0"):
        check_value("model.generator.output_noise_dim", value, "cfg.yaml")
