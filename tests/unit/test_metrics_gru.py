"""The learned scores' GRU (gan_sru.metrics.gru) against nnabla's ops, finite differences and nnabla's Adam."""
import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
import numpy as np
import pytest
from conftest import max_rel_err, numeric_grad

from gan_sru.metrics.gru import Adam, GRUModel


def nnabla_states(x, p):
    """The GRU as the metrics built it before (nnabla ops unrolled over time, the PF.gru equations), on
    time-major x (L, B, D) with GRUModel's parameters: the states (L, B, H)."""
    H = p["W_h"].shape[0]
    L, B, _ = x.shape
    with nn.auto_forward():
        xv = nn.Variable.from_numpy_array(x)
        w = {k: nn.Variable.from_numpy_array(v) for k, v in p.items()}
        xr, xz, xn = (F.affine(xv, F.slice(w["W_i"], (0, g * H), (x.shape[2], (g + 1) * H)),
                               F.slice(w["b_i"], (g * H,), ((g + 1) * H,)), base_axis=2) for g in range(3))
        h = nn.Variable.from_numpy_array(np.zeros((B, H), np.float32))
        states = []
        for t in range(L):
            hr, hz, hn = F.split(F.reshape(F.affine(h, w["W_h"], w["b_h"]), (B, 3, H)), axis=1)
            r = F.sigmoid(xr[t] + hr)
            z = F.sigmoid(xz[t] + hz)
            n = F.tanh(xn[t] + r * hn)
            h = n + z * (h - n)
            states.append(h.d.copy())
    return np.stack(states)


def test_forward_matches_the_unrolled_nnabla_gru_for_both_heads():
    rng = np.random.RandomState(0)
    B, L, D, H = 5, 9, 6, 7
    x = rng.rand(B, L, D).astype(np.float32)
    lengths = np.array([9, 4, 1, 9, 6])
    ref = nnabla_states(x.transpose(1, 0, 2), GRUModel(D, H, "last", np.random.RandomState(1)).params)
    ref = ref.transpose(1, 0, 2)  # (B, L, H)
    for head in ("last", "steps"):
        model = GRUModel(D, H, head, np.random.RandomState(1))
        p = model.params
        _, _, hs, _ = model._states(x, lengths)
        assert hs.shape == (H, L + 1, B) and np.all(hs[:, 0] == 0)
        hs = hs[:, 1:].transpose(2, 1, 0)  # (B, L, H)
        valid = np.arange(L)[None, :] < lengths[:, None]
        assert np.abs(hs - ref)[valid].max() < 1e-5
        for i, n in enumerate(lengths):  # past its length a sequence's state stays at its last valid value
            assert np.all(hs[i, n:] == hs[i, n - 1])
        out = model.predict(x, lengths, chunk=2)  # three chunks
        if head == "last":
            expected = ref[np.arange(B), lengths - 1] @ p["W_o"][:, 0] + p["b_o"][0]
        else:
            expected = 1 / (1 + np.exp(-(ref @ p["W_o"] + p["b_o"])))  # (B, L, 1)
            out, expected = out[valid], expected[valid]
        assert np.abs(out - expected).max() < 1e-5, head


def test_initialisation_ranges_follow_nnabla():
    model = GRUModel(30, 16, "steps", np.random.RandomState(0))
    p = model.params
    assert {k: v.shape for k, v in p.items()} == dict(W_i=(30, 48), b_i=(48,), W_h=(16, 48), b_h=(48,),
                                                      W_o=(16, 1), b_o=(1,))
    assert all(v.dtype == np.float32 for v in p.values())
    for k in ("W_i", "b_i", "W_h", "b_h"):
        assert np.abs(p[k]).max() <= 0.25 and np.abs(p[k]).max() > 0.2  # U(-1/sqrt(16), 1/sqrt(16))
    assert np.abs(p["W_o"]).max() <= np.sqrt(6 / 17) and np.all(p["b_o"] == 0)  # PF.affine's glorot default
    wide = GRUModel(30, 16, "steps", np.random.RandomState(0), num_outputs=4).params
    assert wide["W_o"].shape == (16, 4) and wide["b_o"].shape == (4,) and np.abs(wide["W_o"]).max() <= np.sqrt(6 / 20)
    with pytest.raises(ValueError, match="num_outputs 2 with head 'last'"):
        GRUModel(3, 4, "last", np.random.RandomState(0), num_outputs=2)


@pytest.mark.parametrize("head, K", [("last", 1), ("steps", 1), ("steps", 3)])
def test_gradients_match_central_differences(head, K):
    rng = np.random.RandomState(2)
    B, L, D, H = 4, 6, 3, 5
    model = GRUModel(D, H, head, rng, dtype=np.float64, num_outputs=K)
    x = rng.randn(B, L, D)
    if head == "last":
        lengths, y = np.array([6, 3, 1, 5]), np.array([1.0, 0.0, 1.0, 0.0])
    else:
        lengths, y = np.array([6, 3, 0, 5]), rng.rand(B, L, K)  # a sequence with no valid step adds nothing
    x[1, 3:] = 1e3  # past the length: must not matter
    _, grads = model.loss_and_grads(x, lengths, y)
    for k, v in model.params.items():
        numeric = np.zeros_like(v)
        for idx in np.ndindex(v.shape):
            numeric[idx] = numeric_grad(lambda: model.loss_and_grads(x, lengths, y)[0], v, idx)
        assert grads[k].shape == v.shape and max_rel_err(grads[k], numeric) < 1e-6, k


@pytest.mark.parametrize("head, K", [("last", 1), ("steps", 2)])
def test_float32_gradients_agree_with_float64(head, K):
    """The float32 kernels (rational tanh) give the float64 gradients to float32 accuracy."""
    rng = np.random.RandomState(3)
    B, L, D, H = 16, 20, 6, 8
    m64 = GRUModel(D, H, head, np.random.RandomState(4), dtype=np.float64, num_outputs=K)
    m32 = GRUModel(D, H, head, np.random.RandomState(4), num_outputs=K)
    x = rng.rand(B, L, D)
    lengths = rng.randint(1, L + 1, B)
    y = (np.arange(B) % 2).astype(float) if head == "last" else rng.rand(B, L, K)
    l64, g64 = m64.loss_and_grads(x, lengths, y)
    l32, g32 = m32.loss_and_grads(x.astype(np.float32), lengths, y)
    assert l32 == pytest.approx(l64, rel=1e-5)
    for k in g64:
        assert g32[k].dtype == np.float32 and max_rel_err(g32[k], g64[k]) < 1e-4, k


def test_last_head_reads_each_sequences_last_valid_step():
    rng = np.random.RandomState(0)
    model = GRUModel(3, 5, "last", rng)
    data = rng.rand(4, 10, 3).astype(np.float32)
    lengths = np.array([10, 6, 3, 1])
    garbage = data.copy()
    for i, n in enumerate(lengths):
        garbage[i, n:] = rng.rand(10 - n, 3)
    clean = model.predict(data, lengths)
    assert np.allclose(model.predict(garbage, lengths), clean, atol=1e-6)
    alone = [model.predict(data[i:i + 1, :n], np.array([n]))[0] for i, n in enumerate(lengths)]
    assert np.allclose(clean, alone, atol=1e-6)  # the state after step n - 1 of that sequence alone
    at_end = model.predict(garbage, np.full(4, 10))
    assert np.isclose(at_end[0], clean[0]) and not np.any(np.isclose(at_end[1:], clean[1:]))


def test_adam_matches_nnabla_adam():
    rng = np.random.RandomState(0)
    p0 = rng.randn(4, 3).astype(np.float32)
    ours = {"w": p0.copy()}
    opt = Adam(ours, 0.01)
    with nn.parameter_scope("adam_test"):
        try:
            w = nn.parameter.get_parameter_or_create("w", p0.shape, need_grad=True)
            w.d = p0
            solver = S.Adam(alpha=0.01)
            solver.set_parameters({"w": w})
            for _ in range(5):
                g = rng.randn(4, 3).astype(np.float32)
                w.g = g
                solver.update()
                opt.update({"w": g})
                assert np.allclose(ours["w"], w.d, atol=1e-6, rtol=1e-5)
        finally:
            nn.clear_parameters()


def test_training_lowers_the_loss():
    rng = np.random.RandomState(0)
    model = GRUModel(2, 4, "last", rng)
    opt = Adam(model.params, 1e-2)
    x = np.concatenate([rng.rand(32, 8, 2), rng.rand(32, 8, 2) + 0.5]).astype(np.float32)
    y = np.repeat([0.0, 1.0], 32)
    lengths = np.full(64, 8)
    first = model.loss_and_grads(x, lengths, y)[0]
    for _ in range(100):
        opt.update(model.loss_and_grads(x, lengths, y)[1])
    assert model.loss_and_grads(x, lengths, y)[0] < 0.3 * first
    assert np.mean((model.predict(x, lengths) > 0) == (y > 0)) > 0.95


@pytest.mark.slow
def test_paper_protocol_scores_behave():
    """TimeGAN's settings in full (2000 / 5000 iterations, hidden C // 2, lr 1e-3): ~30 s on 2 cores."""
    from test_metrics import lagged_data, noise, sines

    from gan_sru import metrics

    s = metrics.protocol_settings("paper", 4)
    same = metrics.discriminative_score(sines(400, seed=1), sines(400, seed=2), repeats=1, progress=False,
                                        **s["discriminative"])["mean"]
    different = metrics.discriminative_score(sines(400, seed=1), noise(400, seed=2), repeats=1, progress=False,
                                             **s["discriminative"])["mean"]
    assert same < 0.05 and different > 0.45, (same, different)
    real = lagged_data(300, seed=1, length=12)
    good = metrics.predictive_score(lagged_data(300, seed=2, length=12), real, progress=False, **s["predictive"])
    bad = metrics.predictive_score(noise(300, length=12, seed=3), real, progress=False, **s["predictive"])
    assert good["mae"] < 0.03 and bad["mae"] > 0.1, (good, bad)
