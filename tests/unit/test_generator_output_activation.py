"""The generator's output activation (model.generator.output_activation) on the same pre-activations."""
import numpy as np
from conftest import fresh_generator, generator_output, max_rel_err

import gan_sru.models  # noqa: F401  (fills the registries)
from gan_sru.networks import sample_noise

L, B, C = 9, 4, 3
GCFG = dict(name="sru", noise_dim=3, static_noise_dim=2, time_feature=True, hidden_size=6,
            num_layers=2, bidirectional=False, oscillators=False,
            output_activation="identity")


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
