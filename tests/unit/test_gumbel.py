"""The straight-through Gumbel-softmax against its NumPy reference (fixed Gumbel noise), its soft path's gradient
against central differences, the temperature schedule, and the conditional generator's output blocks."""
import nnabla as nn
import numpy as np
import pytest
from conftest import numeric_grad

from gan_sru.ops.gumbel import (
    categorical_draw,
    gumbel_noise,
    gumbel_softmax,
    gumbel_softmax_grad_ref,
    gumbel_softmax_ref,
    tau_at,
)


def _graph(logits, noise, tau, hard):
    x = nn.Variable.from_numpy_array(logits, need_grad=True)
    g = nn.Variable.from_numpy_array(noise)
    t = nn.Variable.from_numpy_array(np.array([tau], np.float32))
    return x, gumbel_softmax(x, g, t, hard=hard)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("tau", [1.0, 0.3])
def test_forward_and_backward_match_the_numpy_reference(hard, tau):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, 3, 5)).astype(np.float32)
    noise = gumbel_noise(rng, logits.shape)
    weight = rng.normal(size=logits.shape).astype(np.float32)
    x, out = _graph(logits, noise, tau, hard)
    import nnabla.functions as F

    loss = F.sum(out * nn.Variable.from_numpy_array(weight))
    loss.forward()
    np.testing.assert_allclose(out.d, gumbel_softmax_ref(logits, noise, tau, hard), rtol=1e-5, atol=1e-6)
    x.grad.zero()
    loss.backward()
    # straight-through: the hard output's gradient is the soft sample's
    np.testing.assert_allclose(x.g, gumbel_softmax_grad_ref(logits, noise, tau, weight), rtol=1e-4, atol=1e-6)
    if hard:
        assert set(np.unique(out.d)) == {0.0, 1.0} and np.all(out.d.sum(axis=-1) == 1)
        np.testing.assert_array_equal(out.d.argmax(-1), categorical_draw(logits, noise))


def test_soft_gradient_matches_central_differences():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(2, 4)).astype(np.float64)
    noise = gumbel_noise(rng, logits.shape).astype(np.float64)
    weight = rng.normal(size=logits.shape)
    tau = 0.7

    def f():
        return float((gumbel_softmax_ref(logits, noise, tau, hard=False) * weight).sum())

    analytic = gumbel_softmax_grad_ref(logits, noise, tau, weight)
    numeric = np.array([[numeric_grad(f, logits, (i, j)) for j in range(4)] for i in range(2)])
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8)
    # and nnabla's soft path in float32 agrees with both
    x, out = _graph(logits.astype(np.float32), noise.astype(np.float32), tau, hard=False)
    import nnabla.functions as F

    loss = F.sum(out * nn.Variable.from_numpy_array(weight.astype(np.float32)))
    loss.forward()
    x.grad.zero()
    loss.backward()
    np.testing.assert_allclose(x.g, numeric, rtol=2e-3, atol=1e-5)


def test_hard_samples_follow_softmax_of_the_logits():
    rng = np.random.default_rng(2)
    logits = np.log(np.array([0.2, 0.5, 0.3]))
    draws = categorical_draw(np.broadcast_to(logits, (40000, 3)), gumbel_noise(rng, (40000, 3)))
    np.testing.assert_allclose(np.bincount(draws) / 40000, [0.2, 0.5, 0.3], atol=0.01)


def test_temperature_decays_exponentially_from_start_to_end():
    assert tau_at(0, 1000, 1.0, 0.1) == pytest.approx(1.0)
    assert tau_at(500, 1000, 1.0, 0.1) == pytest.approx(0.1 ** 0.5)
    assert tau_at(1000, 1000, 1.0, 0.1) == pytest.approx(0.1)
    assert tau_at(5000, 1000, 1.0, 0.1) == pytest.approx(0.1)


def test_conditional_generator_blocks_are_one_hot_and_masked():
    import gan_sru.models  # noqa: F401  (fills the registries)
    from gan_sru.config import load_config
    from gan_sru.data.attributes import Encoding
    from gan_sru.data.categorical import Categories
    from gan_sru.networks import generator_graph, sample_noise

    nn.clear_parameters()
    from gan_sru.sizes import apply_size_rules

    cfg = apply_size_rules(load_config(None), 7, 6)
    enc = Encoding([{"name": "k", "kind": "categorical", "categories": Categories("k", ["a", "b"])}],
                   [Categories("s", ["x", "y", "z"]), Categories("t", [1, 2])], num_continuous=2)
    g = generator_graph(cfg["model"]["generator"], 6, 4, enc.num_features, 6, train=False, cond=enc)
    assert g.noise["gumbel"].shape == (6, 4, 5) and g.attrs.shape == (4, 2)
    for k, v in sample_noise(cfg["model"]["generator"], 6, 4, np.random.default_rng(0), enc).items():
        g.noise[k].d = v
    g.attrs.d = np.eye(2)[[0, 1, 1, 0]]
    mask = np.ones((6, 4), np.float32)
    mask[4:, 2] = 0
    g.mask.d = mask
    g.fake.forward()
    out = g.fake.d
    assert out.shape == (6, 4, 7)
    assert np.all((out[..., :2] >= 0) & (out[..., :2] <= 1))
    for s, e in enc.blocks():
        sums = out[..., s:e].sum(-1)
        np.testing.assert_array_equal(sums, mask)
    assert np.all(out[4:, 2] == 0)
    nn.clear_parameters()
