"""The discriminators' building blocks against NumPy: the pooled sequence statistics, the per-step difference
features, and D's logits not depending on what lies in the padded steps."""
import nnabla as nn
import numpy as np
import pytest

import models  # noqa: F401  (fills the registries)
from models.discriminators import sequence_statistics, step_features


def _batch(L=7, B=3, C=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((L, B, C)).astype(np.float32)
    lengths = np.array([L, L - 2, 3])[:B]
    mask = (np.arange(L)[:, None] < lengths[None, :]).astype(np.float32)
    return x * mask[:, :, None], mask, lengths


def test_sequence_statistics_match_numpy_over_the_valid_steps():
    x, mask, lengths = _batch()
    out = sequence_statistics(nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(mask))
    out.forward()
    C = x.shape[2]
    for b, n in enumerate(lengths):
        s = x[:n, b].astype(np.float64)
        std = np.sqrt(s.var(axis=0) + 1e-4)
        cov = (s - s.mean(0)).T @ (s - s.mean(0)) / n
        want = np.concatenate([s.mean(0), std, np.abs(np.diff(s, axis=0)).mean(0),
                               (cov / np.outer(std, std)).ravel()])
        np.testing.assert_allclose(out.d[b], want, rtol=1e-4, atol=1e-5)
    assert out.shape == (x.shape[1], 3 * C + C * C)


def test_step_features_are_a_leaky_relu_of_values_and_differences_zero_at_padding():
    x, mask, lengths = _batch()
    with nn.parameter_scope("test_step_features"):
        out = step_features(nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(mask), 5)
        params = nn.get_parameters()
    out.forward()
    W, b = params["step_features/affine/W"].d, params["step_features/affine/b"].d
    prev = np.concatenate([x[:1], x[:-1]], axis=0)
    z = np.concatenate([x, x - prev], axis=2) @ W + b
    want = np.where(z > 0, z, 0.2 * z) * mask[:, :, None]
    np.testing.assert_allclose(out.d, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("options", [{}, {"step_features": True}])
def test_sru_bi_logits_do_not_depend_on_the_padded_steps(options):
    from gan_sru.config import load_config
    from gan_sru.networks import discriminator

    sets = ["model.discriminator.hidden_size=8"] + [f"model.discriminator.{k}={str(v).lower()}"
                                                    for k, v in options.items()]
    dcfg = load_config("configs/sines.yaml", sets)["model"]["discriminator"]
    x, mask, _ = _batch()
    noisy = x + 5.0 * (1 - mask[:, :, None])  # padding must be ignored whatever it holds
    with nn.parameter_scope(f"pad{len(options)}"):
        seqs, m = nn.Variable(x.shape), nn.Variable.from_numpy_array(mask)
        y = discriminator(dcfg, seqs, m)
        seqs.d = x
        y.forward()
        clean = y.d.copy()
        seqs.d = noisy
        y.forward()
    np.testing.assert_allclose(y.d, clean, rtol=1e-5, atol=1e-6)
