"""model.discriminator.shift: D reads every real and generated sequence from its own random start. The views
against a numpy gather of the same starts (padding and short sequences included), their gradient against a
numpy scatter, the starts drawn from the seed (a resumed step draws the same ones), G's batch untouched."""
import nnabla as nn
import numpy as np
import pytest

from gan_sru import ConfigError
from gan_sru.config import load_config

BASE = ["data.num_sequences=32", "data.seq_len=12", "data.num_features=3", "data.num_buckets=1",
        "train.batch_size=16", "train.select=none"]


def steps_of(shift):
    from gan_sru.data import training_data
    from gan_sru.train.steps import GanSteps

    nn.clear_parameters()
    cfg = load_config(None, BASE + [f"model.discriminator.shift={shift}"])
    data = training_data(cfg)
    steps = GanSteps(cfg, data.train, data.spec)
    return steps, steps.graph_for(data.spec.boundaries[-1])


def test_each_view_reads_its_sequences_from_starts_within_the_shift():
    steps, g = steps_of(0.25)
    assert g.shift_steps == 3 and len(g.shift_indices) == 3  # real, the D loss's fake, the G loss's fake
    x_view, m_view = g.shifted_view(g.real)  # a fourth view of the real batch, to read back
    batch, noise = steps.inputs(0)
    lengths = np.array([12, 12, 5, 3, 2] + [12] * 11)
    mask = (np.arange(12)[:, None] < lengths[None, :]).astype(np.float32)
    batch = batch._replace(mask=mask, x=batch.x * mask[..., None])
    g.feed(batch, noise, np.random.default_rng(0).random((4, 16)))
    x_view.forward()
    m_view.forward()
    starts = g.shift_indices[-1].d[0, 0].astype(int)
    assert x_view.shape == (9, 16, 3)
    assert (starts <= np.minimum(3, np.maximum(lengths - 2, 0))).all() and (starts >= 0).all()
    assert starts[4] == 0 and starts[3] <= 1 and len(set(starts[5:])) > 1  # 2 steps: none to spare; others vary
    expected = np.stack([batch.x[s:s + 9, b] for b, s in enumerate(starts)], axis=1)
    np.testing.assert_array_equal(x_view.d, expected)
    np.testing.assert_array_equal(m_view.d, np.stack([mask[s:s + 9, b] for b, s in enumerate(starts)], axis=1))
    assert (m_view.d.sum(axis=0) == np.minimum(9, lengths - starts)).all()  # every sequence keeps its steps


def test_the_gradient_reaches_the_steps_each_view_read():
    steps, g = steps_of(0.25)
    x = nn.Variable((12, 16, 3), need_grad=True)
    view, _ = g.shifted_view(x)
    weights = np.random.default_rng(1).normal(size=view.shape).astype(np.float32)
    loss = nn.functions.sum(view * nn.Variable.from_numpy_array(weights))
    batch, noise = steps.inputs(0)
    g.feed(batch, noise, np.random.default_rng(2).random((4, 16)))
    x.d = np.random.default_rng(3).normal(size=x.shape)
    x.grad.zero()
    loss.forward()
    loss.backward()
    starts = g.shift_indices[-1].d[0, 0].astype(int)
    expected = np.zeros(x.shape, np.float32)
    for b, s in enumerate(starts):
        expected[s:s + 9, b] = weights[:, b]
    np.testing.assert_allclose(x.g, expected, rtol=1e-6)


def test_the_starts_follow_the_seed_and_step_and_leave_g_alone():
    def losses(shift, step):
        steps, g = steps_of(shift)
        d_loss, g_loss = steps.step(step)
        return d_loss, g_loss, g.fake.d.copy(), [i.d.copy() for i in g.shift_indices]

    d1, g1, fake1, idx1 = losses(0.25, 5)
    d2, g2, fake2, idx2 = losses(0.25, 5)  # a resumed run's step 5 draws the same starts
    assert (d1, g1) == (d2, g2) and all((a == b).all() for a, b in zip(idx1, idx2))
    d0, _, fake0, idx0 = losses(0.0, 5)
    assert idx0 == [] and d0 != d1
    np.testing.assert_array_equal(fake0, fake1)  # the shift moves what D reads, not what G makes
    _, _, _, idx3 = losses(0.25, 6)
    assert any((a != b).any() for a, b in zip(idx1, idx3))


@pytest.mark.parametrize("value", ["0.5", "-0.1"])
def test_a_shift_outside_its_range_is_refused_naming_the_key(value):
    with pytest.raises(ConfigError, match=rf"model.discriminator.shift: got {value}"):
        load_config(None, [f"model.discriminator.shift={value}"])
