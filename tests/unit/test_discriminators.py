"""The discriminators' building blocks against NumPy: the pooled sequence statistics, the per-step difference
features, the minibatch standard deviation, and D's logits not depending on what lies in the padded steps."""
import nnabla as nn
import numpy as np
import pytest

import gan_sru.models  # noqa: F401  (fills the registries)
from gan_sru.models.discriminators import minibatch_std, sequence_statistics, step_features


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


@pytest.mark.parametrize("window", [2, 4, 9])
def test_step_features_are_a_leaky_relu_of_values_and_differences_zero_at_padding(window):
    """window 9 > L = 7: the steps before the first repeat it, so the differences that reach back there are 0."""
    x, mask, lengths = _batch()
    with nn.parameter_scope(f"test_step_features{window}"):
        out = step_features(nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(mask), 5, window)
        params = nn.get_parameters()
    out.forward()
    W, b = params["step_features/affine/W"].d, params["step_features/affine/b"].d
    L = x.shape[0]
    back = lambda j: x[np.maximum(np.arange(L) - j, 0)]  # noqa: E731  x_max(t - j, 0), directly indexed
    z = np.concatenate([x] + [back(j - 1) - back(j) for j in range(1, window)], axis=2) @ W + b
    assert W.shape == (window * x.shape[2], 5)
    want = np.where(z > 0, z, 0.2 * z) * mask[:, :, None]
    np.testing.assert_allclose(out.d, want, rtol=1e-5, atol=1e-6)


def test_step_features_refuse_a_window_under_two():
    x, mask, _ = _batch()
    with pytest.raises(ValueError, match="window 1; expected at least 2"):
        step_features(nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(mask), 5, 1)


@pytest.mark.parametrize("B, group, g", [(12, 4, 4), (10, 4, 2), (9, 4, 3), (7, 4, 7), (2, 4, 2)])
def test_minibatch_std_is_each_features_std_over_its_rows_group(B, group, g):
    """Row b's group is rows b mod (B / g) + k B / g; the group is the largest divisor of B up to group."""
    feats = np.random.default_rng(B).normal(size=(B, 5)).astype(np.float32)
    out = minibatch_std(nn.Variable.from_numpy_array(feats), group)
    out.forward()
    n = B // g
    for b in range(B):
        rows = feats[b % n::n].astype(np.float64)
        assert len(rows) == g
        np.testing.assert_allclose(out.d[b], np.sqrt(rows.var(axis=0) + 1e-8), rtol=1e-5, atol=1e-6)


def test_minibatch_std_gradient_matches_central_differences():
    rng = np.random.default_rng(1)
    x = nn.Variable.from_numpy_array(rng.normal(size=(8, 3)).astype(np.float32), need_grad=True)
    w = rng.normal(size=(8, 3))
    y = nn.functions.sum(minibatch_std(x, 4) * nn.Variable.from_numpy_array(w.astype(np.float32)))
    x.grad.zero()
    y.forward()
    y.backward()

    def value(v):
        v = v.reshape(4, 2, 3)
        return float((np.broadcast_to(v.std(axis=0), (4, 2, 3)).reshape(8, 3) * w).sum())
    base, eps = x.d.astype(np.float64), 1e-4
    num = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[i] += eps
        down[i] -= eps
        num[i] = (value(up) - value(down)) / (2 * eps)
    np.testing.assert_allclose(x.g, num, rtol=2e-3, atol=2e-3)


def test_minibatch_std_tells_a_diverse_batch_from_a_collapsed_one():
    """With minibatch_std on, D's head reads each pooled feature's spread over the group: a batch of one
    sequence repeated gets a different logit from the same first sequence in a diverse batch."""
    from gan_sru.config import load_config
    from gan_sru.networks import discriminator

    dcfg = load_config("configs/sines.yaml", ["model.discriminator.hidden_size=8",
                                              "model.discriminator.minibatch_std=4"])["model"]["discriminator"]
    L, B, C = 6, 8, 3
    x = np.random.default_rng(2).random((L, B, C)).astype(np.float32)
    with nn.parameter_scope("mbstd"):
        seqs, m = nn.Variable(x.shape), nn.Variable.from_numpy_array(np.ones((L, B), np.float32))
        y = discriminator(dcfg, seqs, m)
        seqs.d = x
        y.forward()
        diverse = y.d[0, 0]
        seqs.d = np.repeat(x[:, :1], B, axis=1)
        y.forward()
        collapsed = y.d[:, 0]
        params = nn.get_parameters()
    np.testing.assert_allclose(collapsed, collapsed[0], rtol=1e-5)  # every row the same sequence, the same logit
    assert abs(collapsed[0] - diverse) > 1e-4
    head = [v for k, v in params.items() if k.endswith("head/affine/W")]
    assert head[0].shape[0] == 2 * (2 * 2 * 8)  # pooled (mean output, last states; both directions), spreads


@pytest.mark.parametrize("options", [{}, {"step_features": True}, {"step_features": True, "step_window": 5},
                                     {"minibatch_std": 4}, {"num_layers": 3, "identity_skip": True}])
def test_sru_bi_logits_do_not_depend_on_the_padded_steps(options):
    from gan_sru.config import load_config
    from gan_sru.networks import discriminator

    sets = ["model.discriminator.hidden_size=8"] + [f"model.discriminator.{k}={str(v).lower()}"
                                                    for k, v in options.items()]
    dcfg = load_config("configs/sines.yaml", sets)["model"]["discriminator"]
    x, mask, _ = _batch()
    noisy = x + 5.0 * (1 - mask[:, :, None])  # padding must be ignored whatever it holds
    with nn.parameter_scope(f"pad{sorted(options.items())}"):
        seqs, m = nn.Variable(x.shape), nn.Variable.from_numpy_array(mask)
        y = discriminator(dcfg, seqs, m)
        seqs.d = x
        y.forward()
        clean = y.d.copy()
        seqs.d = noisy
        y.forward()
    np.testing.assert_allclose(y.d, clean, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("identity_skip", [False, True])
def test_sru_bi_identity_skip_narrows_the_layers_after_the_first(identity_skip):
    """model.discriminator.identity_skip: layer 1 on (input 2 x 8 wide) has 3 projections per direction,
    not 4; layer 0 (input 4 wide) keeps its fourth either way."""
    from gan_sru.config import load_config
    from gan_sru.networks import discriminator

    dcfg = load_config("configs/sines.yaml", ["model.discriminator.hidden_size=8", "model.discriminator.num_layers=3",
                                              f"model.discriminator.identity_skip={str(identity_skip).lower()}"])
    x, mask, _ = _batch()
    with nn.parameter_scope(f"skip{identity_skip}"):
        discriminator(dcfg["model"]["discriminator"], nn.Variable.from_numpy_array(x),
                      nn.Variable.from_numpy_array(mask))
        shapes = {k.split("/sru/")[1]: v.shape for k, v in nn.get_parameters().items() if k.endswith("/W")
                  and "/sru/" in k}
    K = 3 if identity_skip else 4
    assert shapes == {"layer0/W": (4, 2 * 4 * 8), "layer1/W": (16, 2 * K * 8), "layer2/W": (16, 2 * K * 8)}
