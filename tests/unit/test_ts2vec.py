"""The NumPy TS2Vec encoder behind Context-FID: hand-written gradients against finite differences, the
loss against a direct computation, and training that lowers the loss."""
import numpy as np
import pytest
from conftest import numeric_grad

from gan_sru.metrics import ts2vec


@pytest.mark.parametrize("length", [7, 2])  # 7: dilations 1, 2, 4 read real steps, 8 only padding
def test_encoder_gradients_match_finite_differences(length):
    rng = np.random.RandomState(0)
    enc = ts2vec.Encoder(3, rng, hidden=4, depth=3, output=5, dtype=np.float64)
    x = rng.randn(2, length, 3)
    keep = (rng.rand(2, length, 1) > 0.3).astype(np.float64)
    drop = (rng.rand(2, length, 5) > 0.1) / 0.9
    weights = rng.randn(2, length, 5)

    def loss():
        return float(np.sum(enc.forward(x, keep, drop)[0] * weights))

    _, cache = enc.forward(x, keep, drop)
    grads = enc.backward(cache, weights)
    assert set(grads) == set(enc.params)
    for name, p in enc.params.items():
        for index in list(zip(*np.unravel_index(rng.choice(p.size, min(p.size, 4), replace=False), p.shape))):
            assert grads[name][index] == pytest.approx(numeric_grad(loss, p, index), rel=1e-5, abs=1e-8), name


def direct_hierarchical_loss(z1, z2, alpha=0.5):
    """TS2Vec's loss written plainly: loops over levels, steps and rows."""
    def contrast(z):  # z (R, D), R = 2n: -mean_r log softmax_{j != r}(z_r . z_j) at r's partner (r + n) mod R
        R = len(z)
        out = 0.0
        for r in range(R):
            others = [j for j in range(R) if j != r]
            logits = np.array([z[r] @ z[j] for j in others])
            out -= logits[others.index((r + R // 2) % R)] - np.log(np.sum(np.exp(logits)))
        return out / R

    total, levels = 0.0, 0
    while True:
        B, T, _ = z1.shape
        if B > 1:
            total += alpha * np.mean([contrast(np.concatenate([z1[:, t], z2[:, t]])) for t in range(T)])
        if T > 1:
            total += (1 - alpha) * np.mean([contrast(np.concatenate([z1[b], z2[b]])) for b in range(B)])
        levels += 1
        if T == 1:
            return total / levels
        z1 = np.maximum(z1[:, 0:2 * (T // 2):2], z1[:, 1:2 * (T // 2):2])
        z2 = np.maximum(z2[:, 0:2 * (T // 2):2], z2[:, 1:2 * (T // 2):2])


@pytest.mark.parametrize("B, T", [(3, 5), (1, 4), (2, 1)])
def test_hierarchical_loss_value_and_gradient(B, T):
    rng = np.random.RandomState(1)
    z1, z2 = rng.randn(B, T, 4), rng.randn(B, T, 4)
    loss, d1, d2 = ts2vec.hierarchical_loss(z1, z2)
    assert loss == pytest.approx(direct_hierarchical_loss(z1, z2), rel=1e-10)
    for z, d in ((z1, d1), (z2, d2)):
        for index in [(0, 0, 0), (B - 1, T - 1, 3), (0, T // 2, 2)]:
            num = numeric_grad(lambda: ts2vec.hierarchical_loss(z1, z2)[0], z, index)
            assert d[index] == pytest.approx(num, rel=1e-5, abs=1e-8)


def test_training_lowers_the_loss_and_is_deterministic():
    rng = np.random.RandomState(2)
    t = np.arange(16)[None, :, None]
    seqs = list(np.sin(rng.uniform(0.2, 0.8, (64, 1, 3)) * t + rng.uniform(0, 6, (64, 1, 3))).astype(np.float32))
    sizes = dict(hidden=8, depth=3, output=16)

    def loss_of(enc):  # the loss of fixed crops, without masks or dropout
        crop_rng = np.random.RandomState(5)
        total = 0.0
        for _ in range(10):
            v1, v2, n = ts2vec._crops(crop_rng, seqs, crop_rng.permutation(len(seqs))[:8])
            total += ts2vec.hierarchical_loss(enc.forward(v1)[0][:, -n:], enc.forward(v2)[0][:, :n])[0]
        return total

    untrained = ts2vec.train_encoder(seqs, 0, np.random.RandomState(3), progress=False, **sizes)
    trained = ts2vec.train_encoder(seqs, 150, np.random.RandomState(3), progress=False, **sizes)
    again = ts2vec.train_encoder(seqs, 150, np.random.RandomState(3), progress=False, **sizes)
    assert loss_of(trained) < 0.8 * loss_of(untrained)
    for k in trained.params:
        np.testing.assert_array_equal(trained.params[k], again.params[k])
    emb = ts2vec.embed(trained, seqs[:5] + [s[:9] for s in seqs[5:8]])
    assert emb.shape == (8, 16)
    direct = trained.forward(seqs[5][None, :9])[0].max(axis=1)[0]  # a short sequence is encoded on its own steps
    np.testing.assert_allclose(emb[5], direct, rtol=1e-6)


def test_embedding_keeps_no_backward_cache_and_batches_by_steps(monkeypatch):
    """embed's peak memory (NumPy's allocations, traced) stays near one block's arrays for one batch, where
    keeping every block's intermediates for a backward pass would hold depth times as much; its batches are
    split by steps, and the result is the same as one sequence at a time."""
    import tracemalloc

    rng = np.random.RandomState(0)
    enc = ts2vec.Encoder(3, rng, hidden=16, depth=6, output=32)
    seqs = [rng.randn(64, 3).astype(np.float32) for _ in range(40)]
    monkeypatch.setattr(ts2vec, "ENCODE_STEPS", 64 * 16)  # batches of 16 windows of 64 steps: 3 batches
    one_batch = 16 * 64 * 4  # bytes per float32 channel of one batch
    tracemalloc.start()
    try:
        emb = ts2vec.embed(enc, seqs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # about 390 channels of one batch here (the output block's arrays and temporaries); with every block's
    # intermediates kept for a backward pass, and 16 windows per batch, about 2,750
    assert peak < 800 * one_batch, f"embed traced {peak / one_batch:.0f} channels of one batch at its peak"
    direct = np.stack([enc.forward(s[None])[0].max(axis=1)[0] for s in seqs])
    np.testing.assert_allclose(emb, direct, rtol=1e-5)
    _, cache = enc.forward(seqs[0][None], cache=False)
    assert cache is None
