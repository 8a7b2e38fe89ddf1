"""The generator's initial state (model.generator.initial_state): each SRU layer's initial cell state is a learned
linear map of the per-sequence noise, starting at 0."""
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np
import pytest
from conftest import fresh_generator, generator_output, max_rel_err

import gan_sru.models  # noqa: F401  (fills the registries)
from gan_sru.networks import sample_noise
from gan_sru.ops.sru import sru

L, B, C, S, H, N = 7, 4, 3, 5, 8, 3
GCFG = dict(name="sru", noise_dim=2, static_noise_dim=S, time_feature=True, highway_bias=0.0, hidden_size=H,
            num_layers=N, bidirectional=False, weight_c=False, layer_norm=False, dropout=0.0, oscillators=False,
            output_activation="identity", initial_state=True)
KEY = "G/generator/initial_state/affine/W"


def build(gcfg=GCFG, seed=0, impl="auto"):
    return fresh_generator(gcfg, L, B, C, seed, impl)


run = generator_output


def randomise_initial_state(seed=1):
    params = nn.get_parameters()
    rng = np.random.default_rng(seed)
    params[KEY].d = rng.normal(0, 0.5, params[KEY].shape)
    params[KEY.replace("/W", "/b")].d = rng.normal(0, 0.5, params[KEY.replace("/W", "/b")].shape)
    return {k: v.d.copy() for k, v in params.items()}


def test_the_map_starts_at_zero_states_so_training_starts_where_it_did_without_it():
    noise = sample_noise(GCFG, L, B, np.random.default_rng(0))
    g = build()
    w = nn.get_parameters()[KEY]
    assert w.shape == (S, N * H) and not w.d.any()
    with_map = run(g, noise)
    without = run(build(dict(GCFG, initial_state=False)), noise)
    assert KEY not in nn.get_parameters()
    np.testing.assert_array_equal(with_map, without)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_each_layer_starts_from_its_slice_of_the_map(bidirectional):
    """The generator's output equals the same SRU stack run with c0 = (static W + b) reshaped to (layers, B, R H)
    given explicitly, and the fused recurrence agrees with the plain-ops one (what export serialises)."""
    gcfg = dict(GCFG, bidirectional=bidirectional)
    R = 2 if bidirectional else 1
    noise = sample_noise(gcfg, L, B, np.random.default_rng(2))
    g = build(gcfg)
    params = randomise_initial_state()
    fused = run(g, noise)
    c0 = (noise["static"] @ params[KEY] + params[KEY.replace("/W", "/b")]).reshape(B, N, R * H).transpose(1, 0, 2)
    assert np.abs(c0).max() > 0.5  # the states are far from zero
    # the same parameters, the states fed explicitly
    t = (np.arange(L, dtype=np.float32) / (L - 1)).reshape(L, 1, 1)
    inp = np.concatenate([noise["step"], np.broadcast_to(noise["static"][None], (L, B, S)),
                          np.broadcast_to(t, (L, B, 1))], axis=2)
    with nn.parameter_scope("G"), nn.parameter_scope("generator"):
        h, _ = sru(nn.Variable.from_numpy_array(inp), H, num_layers=N, bidirectional=bidirectional,
                   c0=nn.Variable.from_numpy_array(c0), mask=nn.Variable.from_numpy_array(np.ones((L, B))),
                   train=False, name="sru")
        out = PF.affine(h, C, base_axis=2, name="output")
    out.forward()
    np.testing.assert_allclose(fused, out.d, rtol=1e-5, atol=1e-5)
    zero = np.zeros_like(c0)
    with nn.parameter_scope("G"), nn.parameter_scope("generator"):
        h0, _ = sru(nn.Variable.from_numpy_array(inp), H, num_layers=N, bidirectional=bidirectional,
                    c0=nn.Variable.from_numpy_array(zero), train=False, name="sru")
        out0 = PF.affine(h0, C, base_axis=2, name="output")
    out0.forward()
    assert np.abs(fused - out0.d).max() > 1e-2  # the states matter
    ref = build(gcfg, impl="ref")
    for k, v in nn.get_parameters().items():
        v.d = params[k]
    np.testing.assert_allclose(run(ref, noise), fused, rtol=1e-5, atol=1e-5)


def test_gradient_of_the_map_matches_finite_differences():
    """d(sum of the output * r)/dW through the fused recurrence's dc0, against central differences."""
    noise = sample_noise(GCFG, L, B, np.random.default_rng(3))
    g = build()
    randomise_initial_state(4)
    for k, v in noise.items():
        g.noise[k].d = v
    r = np.random.default_rng(5).standard_normal(g.fake.shape).astype(np.float32)
    loss = F.sum(g.fake * nn.Variable.from_numpy_array(r))
    w = nn.get_parameters()[KEY]
    for p in nn.get_parameters().values():
        p.grad.zero()
    loss.forward()
    loss.backward()
    grad = w.g.copy()
    pick = np.random.default_rng(6)
    for _ in range(6):
        idx = (int(pick.integers(S)), int(pick.integers(N * H)))
        old = float(w.d[idx])
        vals = []
        for eps in (1e-2, -1e-2):
            w.d[idx] = old + eps
            loss.forward()
            vals.append(float(loss.d))
        w.d[idx] = old
        num = (vals[0] - vals[1]) / 2e-2
        assert max_rel_err(grad[idx], num) < 2e-2 or abs(grad[idx] - num) < 2e-3, (idx, grad[idx], num)
