"""The generator's SRU activation (model.generator.activation): g in h = r * g(c) + (1 - r) * x, tanh or identity."""
import numpy as np
import pytest
from conftest import fresh_generator, generator_output, max_rel_err

import gan_sru.models  # noqa: F401  (fills the registries)
from gan_sru import ConfigError
from gan_sru.config import load_config
from gan_sru.networks import sample_noise

L, B, C = 9, 4, 3
GCFG = dict(name="sru", noise_dim=3, static_noise_dim=2, time_feature=True, hidden_size=6,
            num_layers=2, bidirectional=False, weight_c=False, oscillators=False,
            output_activation="identity")


def test_the_key_reaches_the_recurrence_in_the_fused_and_the_exported_form():
    """The same parameters and noise: identity differs from tanh, and the fused recurrence agrees with the plain
    ops that `gan-sru export` serialises for each."""
    noise = sample_noise(GCFG, L, B, np.random.default_rng(0))
    noise["step"] = noise["step"] * 4.0  # cell states well past tanh's linear range
    out = {}
    for act in ("tanh", "identity"):
        for impl in ("auto", "ref"):
            out[act, impl] = generator_output(fresh_generator(dict(GCFG, activation=act), L, B, C, 0, impl), noise)
        assert max_rel_err(out[act, "auto"], out[act, "ref"]) < 1e-5
    assert np.abs(out["identity", "auto"] - out["tanh", "auto"]).max() > 0.05


def test_the_config_defaults_to_tanh_and_names_the_choices():
    assert load_config("configs/sines.yaml")["model"]["generator"]["activation"] == "tanh"
    with pytest.raises(ConfigError, match=r"model.generator.activation: got 'relu' \(str\); expected one of "
                                          r"'tanh', 'identity'"):
        load_config("configs/sines.yaml", ["model.generator.activation=relu"])


def test_output_activations_map_the_same_pre_activations():
    """sigmoid: (0, 1); sigmoid_margin: the sigmoid stretched to (-0.25, 1.25), the data's [0, 1] on its straighter
    part; identity: the pre-activations themselves."""
    noise = sample_noise(GCFG, L, B, np.random.default_rng(1))
    noise["step"] = noise["step"] * 4.0
    out = {kind: generator_output(fresh_generator(dict(GCFG, output_activation=kind), L, B, C, 0), noise)
           for kind in ("identity", "sigmoid", "sigmoid_margin")}
    pre = out["identity"].astype(np.float64)
    assert np.abs(pre).max() > 1.0  # the test reaches the curved parts
    assert max_rel_err(out["sigmoid"], 1 / (1 + np.exp(-pre))) < 1e-5
    assert max_rel_err(out["sigmoid_margin"], 1.5 / (1 + np.exp(-pre)) - 0.25) < 1e-5
