"""The conditional model options: G's random-phase oscillator bank and the projection discriminator, against
NumPy references."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest

import gan_sru.models  # noqa: F401  (fills the registries)
from gan_sru.conditional.networks import LOG_GRID_TOP, oscillator_grid, oscillator_tuning, oscillators, projection
from gan_sru.config import load_config
from gan_sru.registry import DISCRIMINATORS


def test_oscillators_are_sin_and_cos_of_the_bank_with_phases_from_the_static_noise():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((3, 4)).astype(np.float32)
    static = nn.Variable.from_numpy_array(z)
    out = oscillators(static, 10, 12)
    out.forward()
    t = np.arange(10)[:, None, None]
    w = np.pi * np.arange(1, 5) / 12
    phase = 2 * np.pi / (1 + np.exp(-1.7 * z))  # (B, S)
    arg = w[None, None, :] * t + phase[None]
    np.testing.assert_allclose(out.d, np.concatenate([np.sin(arg), np.cos(arg)], axis=2), atol=1e-5)


def test_the_log_grid_spans_twice_the_window_to_a_short_period_at_every_length():
    for max_len in (8, 24, 256, 1024):
        w = oscillator_grid(14, max_len, "log")
        np.testing.assert_allclose([w[0], w[-1]], [np.pi / max_len, LOG_GRID_TOP], rtol=1e-6)
        np.testing.assert_allclose(w[1:] / w[:-1], (LOG_GRID_TOP * max_len / np.pi) ** (1 / 13), rtol=1e-5)
    # the linear grid's shortest period at 256 steps is 2 * 256 / 14 = 36.6 steps; the log grid's is 3.3
    assert 2 * np.pi / oscillator_grid(14, 256).max() > 36 > 4 > 2 * np.pi / oscillator_grid(14, 256, "log").max()
    np.testing.assert_allclose(oscillator_grid(1, 24, "log"), [np.pi / 24])
    with pytest.raises(ValueError, match="unknown oscillator grid 'mel'"):
        oscillator_grid(4, 24, "mel")


def test_log_grid_oscillators_match_numpy():
    z = np.random.default_rng(3).standard_normal((2, 5)).astype(np.float32)
    out = oscillators(nn.Variable.from_numpy_array(z), 40, 40, grid="log")
    out.forward()
    w = np.geomspace(np.pi / 40, 0.6 * np.pi, 5)
    arg = w[None, None, :] * np.arange(40)[:, None, None] + (2 * np.pi / (1 + np.exp(-1.7 * z)))[None]
    np.testing.assert_allclose(out.d, np.concatenate([np.sin(arg), np.cos(arg)], axis=2), atol=1e-4)


def test_tuned_oscillators_scale_each_sequences_frequencies_by_exp_tanh_u():
    rng = np.random.default_rng(1)
    z = rng.standard_normal((3, 4)).astype(np.float32)
    u = (2 * rng.standard_normal((3, 4))).astype(np.float32)
    out = oscillators(nn.Variable.from_numpy_array(z), 10, 12, nn.Variable.from_numpy_array(u))
    out.forward()
    t = np.arange(10)[:, None, None]
    w = np.pi * np.arange(1, 5) / 12 * np.exp(np.tanh(u))  # (B, S): within a factor e of the grid
    arg = w[None] * t + 2 * np.pi / (1 + np.exp(-1.7 * z))[None]
    np.testing.assert_allclose(out.d, np.concatenate([np.sin(arg), np.cos(arg)], axis=2), atol=2e-5)


def test_the_tuning_starts_at_the_grid_and_its_gradient_matches_finite_differences():
    """oscillator_tuning starts at u = 0 (the fixed bank); d(sum of the bank * r)/du against central differences."""
    nn.clear_parameters()
    rng = np.random.default_rng(2)
    z = nn.Variable.from_numpy_array(rng.standard_normal((2, 3)).astype(np.float32))
    static = nn.Variable.from_numpy_array(rng.standard_normal((2, 5)).astype(np.float32))
    with nn.parameter_scope("G"):
        u = oscillator_tuning(static, 3)
    u.forward()
    np.testing.assert_array_equal(u.d, 0)
    r = rng.standard_normal((6, 2, 6))
    u0 = (0.5 * rng.standard_normal((2, 3))).astype(np.float32)
    uv = nn.Variable.from_numpy_array(u0, need_grad=True)
    loss = F.sum(oscillators(z, 6, 6, uv) * nn.Variable.from_numpy_array(r.astype(np.float32)))
    loss.forward()
    uv.grad.zero()
    loss.backward()

    def value(a):
        out = oscillators(z, 6, 6, nn.Variable.from_numpy_array(a.astype(np.float32)))
        out.forward()
        return float((out.d.astype(np.float64) * r).sum())

    eps, fd = 1e-2, np.zeros_like(u0)
    for idx in np.ndindex(u0.shape):
        d = np.zeros_like(u0)
        d[idx] = eps
        fd[idx] = (value(u0 + d) - value(u0 - d)) / (2 * eps)
    np.testing.assert_allclose(uv.g, fd, rtol=2e-2, atol=2e-3)


def test_projection_adds_the_attribute_embedding_times_the_hidden_layer():
    nn.clear_parameters()
    dcfg = dict(load_config(None, ["model.discriminator.hidden_size=6"])["model"]["discriminator"])
    rng = np.random.default_rng(1)
    seqs = nn.Variable.from_numpy_array(rng.random((5, 4, 2)).astype(np.float32))
    mask = nn.Variable.from_numpy_array(np.ones((5, 4), np.float32))
    attrs = nn.Variable.from_numpy_array(np.eye(3, dtype=np.float32)[[0, 2, 1, 2]])
    builder = DISCRIMINATORS.lookup("sru_bi")
    with nn.parameter_scope("D"):
        logit = projection(builder, dcfg, seqs, mask, attrs, train=False)
        plain, phi = builder(dcfg, seqs, mask, train=False, features=True)
        V = nn.get_parameters()["projection/affine/W"].d  # (W, H)
    for v in (logit, plain, phi):
        v.forward()
    expected = plain.d[:, 0] + (attrs.d @ V * phi.d).sum(axis=1)
    np.testing.assert_allclose(logit.d[:, 0], expected, rtol=1e-5, atol=1e-6)
    assert np.abs(logit.d[:, 0] - plain.d[:, 0]).max() > 1e-4  # the projection term is there
    nn.clear_parameters()


def test_oscillator_gain_is_one_plus_a_linear_map_of_the_attributes_and_starts_at_one():
    from gan_sru.conditional.networks import oscillator_gain

    nn.clear_parameters()
    a = np.eye(3, dtype=np.float32)[[2, 0, 1, 1]]
    attrs = nn.Variable.from_numpy_array(a)
    gain = oscillator_gain(attrs, 6)
    gain.forward()
    np.testing.assert_array_equal(gain.d, np.ones((4, 6), np.float32))  # starts as the plain bank
    W = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    nn.get_parameters()["oscillator_gain/affine/W"].d = W
    gain.forward()
    np.testing.assert_allclose(gain.d, 1.0 + a @ W, rtol=1e-6)
    nn.clear_parameters()


def _spectra_reference(x, m, nf):
    """NumPy magnitude_spectra of x (L, B, C), mask m (L, B) -> (B, C nf)."""
    n = m.sum(axis=0)[:, None]  # (B, 1)
    mean = (x * m[:, :, None]).sum(axis=0) / n
    xc = (x - mean[None]) * m[:, :, None]
    w = np.pi * np.arange(1, nf + 1) / nf
    e = np.exp(-1j * np.arange(len(x))[:, None] * w[None, :])  # (L, nf)
    spec = np.abs(np.einsum("lbc,lf->bcf", xc, e)) / n[:, :, None]
    return spec.reshape(x.shape[1], -1)


def test_magnitude_spectra_match_numpy_forward_and_backward_with_padding():
    from conftest import max_rel_err, numeric_grad

    from gan_sru.conditional.networks import magnitude_spectra

    rng = np.random.default_rng(4)
    x = rng.random((7, 3, 2))
    m = np.ones((7, 3))
    m[5:, 1] = 0  # a shorter sequence: its padded steps are left out
    seqs, mask = nn.Variable.from_numpy_array(x.astype(np.float32)), nn.Variable.from_numpy_array(m.astype(np.float32))
    seqs.need_grad = True
    out = magnitude_spectra(seqs, mask, num_freqs=5)
    out.forward()
    np.testing.assert_allclose(out.d, _spectra_reference(x, m, 5), atol=1e-5)
    t = 4 * np.pi / 5 * np.arange(7)  # a pure cosine at w_4: its bin holds half the amplitude
    pure = nn.Variable.from_numpy_array(np.broadcast_to(np.cos(t)[:, None, None], (7, 1, 1)).astype(np.float32))
    one = magnitude_spectra(pure, nn.Variable.from_numpy_array(np.ones((7, 1), np.float32)), num_freqs=5)
    one.forward()
    assert one.d[0].argmax() == 3
    R = rng.standard_normal(out.shape)
    seqs.grad.zero()
    out.backward(R.astype(np.float32))

    def f():
        return float((R * _spectra_reference(x, m, 5)).sum())

    num = np.array([numeric_grad(f, x, idx) for idx in np.ndindex(x.shape)]).reshape(x.shape)
    assert max_rel_err(seqs.g, num) < 1e-3
    assert np.abs(seqs.g[5:, 1]).max() == 0  # nothing flows into padding


def test_spectral_projection_adds_a_head_and_an_attribute_projection_on_the_spectra():
    from gan_sru.conditional.networks import magnitude_spectra

    nn.clear_parameters()
    cfg = load_config(None, ["model.discriminator.hidden_size=6", "model.discriminator.spectral=true"])
    dcfg = dict(cfg["model"]["discriminator"])
    rng = np.random.default_rng(5)
    seqs = nn.Variable.from_numpy_array(rng.random((8, 4, 2)).astype(np.float32))
    mask = nn.Variable.from_numpy_array(np.ones((8, 4), np.float32))
    a = np.eye(3, dtype=np.float32)[[0, 2, 1, 2]]
    attrs = nn.Variable.from_numpy_array(a)
    builder = DISCRIMINATORS.lookup("sru_bi")
    with nn.parameter_scope("D"):
        logit = projection(builder, dcfg, seqs, mask, attrs, train=False)
        plain, phi = builder(dcfg, seqs, mask, train=False, features=True)
        p = {k: v.d for k, v in nn.get_parameters().items()}
    spec = magnitude_spectra(seqs, mask)
    for v in (logit, plain, phi, spec):
        v.forward()
    psi = spec.d @ p["spectral_head/affine/W"] + p["spectral_head/affine/b"]
    psi = np.where(psi > 0, psi, 0.2 * psi)
    expected = (plain.d[:, 0] + (a @ p["projection/affine/W"] * phi.d).sum(axis=1)
                + psi @ p["spectral_output/affine/W"][:, 0] + p["spectral_output/affine/b"][0]
                + (a @ p["spectral_projection/affine/W"] * psi).sum(axis=1))
    np.testing.assert_allclose(logit.d[:, 0], expected, rtol=1e-5, atol=1e-5)
    nn.clear_parameters()
