"""G's whitened sequence term (gan_sru/ops/whitened.py): its reference, the loss against NumPy, its gradient against
finite differences, the fused form against the plain ops, and what it sees that the per-entry term does not."""
import nnabla as nn
import numpy as np
import pytest
from conftest import max_rel_err, numeric_grad

from gan_sru.ops.whitened import WhitenedReference, reference, whitened_loss_and_grad
from gan_sru.train.losses import sequence_moment_loss, whitened_sequence_loss


def _bands(K, bands=8):
    """[(first, end)] of at most `bands` log-spaced bands of the frequencies 1..K (0-based)."""
    edges = sorted(set(int(round(e)) - 1 for e in np.geomspace(1, K + 1, min(bands, K) + 1)))
    return list(zip(edges[:-1], edges[1:]))


def _mean_std_acf(v, m):
    """Per feature of one sequence's valid steps v (n, k) (m its mask over L steps): mean, std (var + 1e-6),
    lag-1 autocorrelation over the pairs of valid steps."""
    mean, var = v.mean(0), v.var(0) + 1e-6
    cf = np.zeros((len(m), v.shape[1]))
    cf[m] = v - mean
    pair = m[1:] & m[:-1]
    return mean, np.sqrt(var), (cf[1:] * cf[:-1]).sum(0) / max(pair.sum(), 1) / var


def _numpy_statistics(x, mask, minor=None):
    """Per sequence (x (L, B, C), mask (L, B)), over its valid steps: each feature's mean and std (var + 1e-6),
    the correlation of each pair of features, each feature's lag-1 autocorrelation and its log(|DFT| / n + 1e-3)
    at pi f / (L // 2), f = 1..L // 2, averaged in bands, its third and fourth standardised moments; with
    minor = (mean, directions), the mean, std and lag-1 autocorrelation of (x - mean) @ directions; (B, d) in
    that order."""
    L, B, C = x.shape
    freqs = np.pi * np.arange(1, L // 2 + 1) / (L // 2)
    rows = []
    for b in range(B):
        m = mask[:, b].astype(bool)
        v = x[m, b]
        mean, var = v.mean(0), v.var(0) + 1e-6
        c = v - mean
        corr = (c.T @ c / len(v)) / np.sqrt(np.outer(var, var))
        row = [mean, np.sqrt(var), corr[np.triu_indices(C, 1)]]
        if L >= 2:
            cf = (x[:, b] - mean) * m[:, None]
            pair = m[1:] & m[:-1]
            row.append((cf[1:] * cf[:-1]).sum(0) / max(pair.sum(), 1) / var)
            spec = np.log(np.sqrt(np.abs(np.exp(-1j * np.outer(freqs, np.arange(L))) @ cf) ** 2 + 1e-8) / len(v)
                          + 1e-3)  # (L // 2, C)
            row.append(np.array([spec[a:b].mean(0) for a, b in _bands(L // 2)]).T.ravel())
            z = c / np.sqrt(var)
            row += [(z ** 3).mean(0), (z ** 4).mean(0)]  # skewness, kurtosis (not in excess)
            if minor is not None and minor[1].shape[1]:
                row += list(_mean_std_acf((v - minor[0]) @ minor[1], m))
        rows.append(np.concatenate(row))
    return np.array(rows)


def _numpy_loss(x, mask, ref):
    """|mean_b w_b - ref.mean|^2 / d over distinct pairs (the U-statistic) + mean_k |std_b w_bk - ref.spread_k|."""
    w = ((_numpy_statistics(x, mask, (ref.minor_mean, ref.minor)) - ref.mu) / ref.scale) @ ref.axes - ref.mean
    B, d = w.shape
    pairs = sum(w[i] @ w[j] for i in range(B) for j in range(B) if i != j) / (B * (B - 1))
    return pairs / d + np.abs(np.sqrt(w.var(0) + 1e-12) - ref.spread).mean()


def _real(rng, N, L, C, ragged=True):
    """Sequences (N, L, C) driven by one shared factor plus noise (so their statistics are tied), mask (N, L, 1)."""
    t = np.arange(L)[None, :, None]
    factor = np.sin(0.7 * t + rng.uniform(0, 6, (N, 1, 1))) * rng.uniform(0.5, 1.5, (N, 1, 1))
    x = 0.5 + 0.2 * factor * np.linspace(-1, 1, C) + 0.05 * rng.standard_normal((N, L, C))
    m = np.ones((N, L, 1))
    if ragged:
        m[::3, L - 2:] = 0
    return x * m, m


def _batch(rng, L=7, B=6, C=3):
    x, m = _real(rng, B, L, C)
    x = x + 0.03 * rng.standard_normal(x.shape) * m  # not quite the reference's distribution
    return np.ascontiguousarray(x.transpose(1, 0, 2)).astype(np.float32), np.ascontiguousarray(m[:, :, 0].T)


def _graph(x, mask, ref, impl):
    f = nn.Variable.from_numpy_array(x, need_grad=True)
    return f, whitened_sequence_loss(f, nn.Variable.from_numpy_array(mask.astype(np.float32)), ref, impl)


@pytest.fixture(scope="module")
def ref3():
    x, m = _real(np.random.default_rng(0), 600, 7, 3)
    return reference(x, m)


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_the_term_equals_numpy_on_a_padded_batch(ref3, impl):
    x, mask = _batch(np.random.default_rng(1))
    _, loss = _graph(x, mask, ref3, impl)
    assert loss.shape == ()
    loss.forward()
    assert float(loss.d) == pytest.approx(_numpy_loss(x.astype(np.float64), mask, ref3), rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_the_term_gradient_matches_finite_differences(ref3, impl):
    x, mask = _batch(np.random.default_rng(2))
    f, loss = _graph(x, mask, ref3, impl)
    f.grad.zero()
    loss.forward()
    loss.backward()
    x64 = x.astype(np.float64)
    rng = np.random.default_rng(3)
    valid = np.argwhere(mask.astype(bool))
    for k in rng.choice(len(valid), 10, replace=False):
        idx = tuple(valid[k]) + (int(rng.integers(x.shape[2])),)
        num = numeric_grad(lambda: _numpy_loss(x64, mask, ref3), x64, idx)
        assert abs(f.g[idx] - num) < 2e-2 * abs(num) + 2e-4, (idx, f.g[idx], num)


def test_the_fused_term_equals_the_plain_ops_one_on_a_wide_padded_batch_and_accumulates():
    rng = np.random.default_rng(4)
    L, B, C = 30, 16, 28
    real, m = _real(rng, 500, L, C)
    ref = reference(real, m)
    x, mask = _batch(rng, L, B, C)
    out = {}
    for impl in ("ref", "auto"):
        f, loss = _graph(x, mask, ref, impl)
        f.grad.zero()
        loss.forward()
        loss.backward()
        out[impl] = float(loss.d), f.g.copy() * mask[:, :, None]
    assert out["auto"][0] == pytest.approx(out["ref"][0], rel=1e-4)
    assert max_rel_err(out["auto"][1], out["ref"][1]) < 1e-3
    f, loss = _graph(x, mask, ref, "auto")
    f.grad.zero()
    loss.forward()
    loss.backward()
    loss.backward()  # a second backward after one forward recomputes what the first used up
    assert max_rel_err(f.g * mask[:, :, None], 2 * out["ref"][1]) < 1e-3


def test_in_the_reference_axes_real_statistics_are_white():
    """The statistics of new real sequences, in the reference's coordinates: mean ~0, covariance ~identity, and
    the reference's own mean and spreads say so (two features, 12 steps: 7 statistics, 2 x 5 spectrum bands,
    2 x 2 third and fourth moments and one minor direction's mean, std and lag-1 autocorrelation; 4000
    sequences). One axis is dead: the minor coordinate's mean is a fixed combination of the two features'
    means, so real statistics never move along it, and its spread is 0."""
    rng = np.random.default_rng(5)
    x, m = _real(rng, 4000, 12, 2, ragged=False)
    ref = reference(x, m, floor=1e-6)
    assert ref.dim == 24 and ref.axes.shape == (24, 24) and ref.minor.shape == (2, 1)
    new, _ = _real(rng, 4000, 12, 2, ragged=False)
    w = ((_numpy_statistics(new.transpose(1, 0, 2), np.ones((12, 4000)), (ref.minor_mean, ref.minor)) - ref.mu)
         / ref.scale) @ ref.axes
    assert np.abs(w.mean(0)).max() < 0.1
    dead = ref.spread < 0.01
    assert dead.sum() == 1
    assert np.abs(np.cov(w.T) - np.diag(np.where(dead, 0.0, 1.0))).max() < 0.15
    assert np.abs(ref.mean).max() < 0.1 and np.abs(ref.spread[~dead] - 1).max() < 0.1


def test_rescaled_axes_keep_new_real_statistics_at_unit_spread_where_few_sequences_inflate_them():
    """240 sequences for 90 statistics (six features, 24 steps): the half that finds the axes underestimates
    the least varying ones, so new real sequences spread up to several times more along them; with rescale
    each axis is scaled by the other half's spread, and new real sequences spread about 1 along every axis
    (the dead one, the minor coordinate's mean, stays 0)."""
    rng = np.random.default_rng(7)
    x, m = _real(rng, 240, 24, 6, ragged=False)
    new, new_mask = _real(rng, 3000, 24, 6, ragged=False)
    spreads = {}
    for rescale in (False, True):
        ref = reference(x, m, rescale=rescale)
        live = ref.spread > 0.01
        assert ref.dim == 90 and live.sum() == 89
        s = _numpy_statistics(new.transpose(1, 0, 2), new_mask[:, :, 0].T, (ref.minor_mean, ref.minor))
        spreads[rescale] = (((s - ref.mu) / ref.scale) @ ref.axes).std(axis=0)[live]
        if rescale:
            assert np.allclose(ref.spread[live], 1.0)
    assert spreads[False].max() > 3.0
    assert 0.75 < spreads[True].min() and spreads[True].max() < 1.4


def test_the_mean_part_is_unbiased_where_the_squared_batch_mean_is_not():
    """Batches of B = 8 drawn from the reference's own distribution (w ~ N(0, I), each batch's spreads given):
    the term averages to 0, where |batch mean|^2 / d would average to 1 / B."""
    rng = np.random.default_rng(6)
    d, B = 20, 8
    values, biased = [], []
    for _ in range(3000):
        w = rng.standard_normal((B, d))
        spread = np.sqrt(((w - w.mean(0)) ** 2).mean(0) + 1e-12)
        ref = WhitenedReference(np.zeros(d), np.ones(d), np.eye(d), np.zeros(d), spread, None, None)
        values.append(whitened_loss_and_grad(w, ref)[0])
        biased.append((w.mean(0) ** 2).mean())
    assert abs(np.mean(values)) < 4 * np.std(values) / np.sqrt(len(values))
    assert np.mean(biased) == pytest.approx(1 / B, rel=0.05)


def test_the_term_sees_statistics_that_break_the_datas_ties_where_the_per_entry_term_does_not():
    """Real sequences: both features share one level per sequence. Fake: each feature's level drawn on its own
    from the same distribution. Entry by entry every statistic has the same mean and spread, so the per-entry
    term scores the fake batch like another real one; in the data's axes, the levels' difference (which real
    sequences hardly vary along) varies, and the term says so."""
    rng = np.random.default_rng(7)
    L, B = 16, 256

    def draw(tied):
        level = rng.uniform(0.2, 0.8, (B, 1, 1))
        levels = np.concatenate([level, level if tied else rng.uniform(0.2, 0.8, (B, 1, 1))], axis=2)
        return levels + 0.05 * rng.standard_normal((B, L, 2))

    ref = reference(np.concatenate([draw(True) for _ in range(8)]), np.ones((8 * B, L, 1)))
    mask = np.ones((L, B), np.float32)
    real = draw(True).transpose(1, 0, 2).astype(np.float32)

    def terms(x):
        x = np.ascontiguousarray(x.transpose(1, 0, 2)).astype(np.float32)
        v = [nn.Variable.from_numpy_array(a) for a in (x, real, mask)]
        out = whitened_sequence_loss(v[0], v[2], ref), sequence_moment_loss(v[0], v[1], v[2])
        for o in out:
            o.forward()
        return [float(o.d) for o in out]

    (w_real, s_real), (w_fake, s_fake) = terms(draw(True)), terms(draw(False))
    assert w_fake > 10 * w_real
    assert s_fake < 2 * s_real + 0.02


def test_the_term_sees_a_flatter_distribution_within_each_sequence():
    """Real: white Gaussian noise. Flat: white uniform noise of the same mean and variance (excess kurtosis -1.2
    against 0; a sine's is -1.5): the same levels, spreads, lags, correlations and spectra in expectation, the
    values' distribution within a sequence flatter. The term scores a flat batch far above a real one."""
    rng = np.random.default_rng(10)
    L, B, C = 48, 128, 3

    def draw(flat):
        e = rng.uniform(-np.sqrt(3), np.sqrt(3), (B, L, C)) if flat else rng.standard_normal((B, L, C))
        return 0.5 + 0.1 * e

    ref = reference(np.concatenate([draw(False) for _ in range(16)]), np.ones((16 * B, L, 1)))
    mask = nn.Variable.from_numpy_array(np.ones((L, B), np.float32))

    def term(x):
        out = whitened_sequence_loss(nn.Variable.from_numpy_array(x.transpose(1, 0, 2).astype(np.float32)), mask, ref)
        out.forward()
        return float(out.d)

    assert term(draw(True)) > 3 * term(draw(False)) + 0.05  # 0.31 against 0.05; without the moments 0.07


def test_the_term_refuses_too_few_sequences_and_a_reference_of_other_statistics():
    x, m = _real(np.random.default_rng(8), 3, 6, 2)
    with pytest.raises(ValueError, match="needs at least 4 real sequences of a length; got 3"):
        reference(x, m)
    ref = reference(*_real(np.random.default_rng(8), 40, 6, 2))
    f = nn.Variable((6, 4, 3))
    with pytest.raises(ValueError, match="a reference of 20 statistics does not fit sequences of 6 steps and 3 "
                                         "features"):
        whitened_sequence_loss(f, nn.Variable((6, 4)), ref)
    with pytest.raises(ValueError, match=r"WhitenedMoments expects fake \(L, B, C\) and mask \(L, B\); got "
                                         r"\[\(6, 4, 2\), \(6, 5\)\]"):
        whitened_sequence_loss(nn.Variable((6, 4, 2)), nn.Variable((6, 5)), ref)


def test_the_term_tells_smooth_noise_from_the_datas_white_noise_along_its_minor_directions():
    """Real: three features on one shared slow factor plus each feature's own white noise. Fake: the same with
    the noise as strong but smooth (an AR(1) at 0.8). The reference finds the two minor directions (the noise)
    and the term scores the fake batch far above another real one."""
    rng = np.random.default_rng(9)
    L, B = 24, 256

    def draw(n, smooth):
        level = rng.uniform(0.3, 0.7, (n, 1, 1)) + 0.1 * np.sin(0.3 * np.arange(L) + rng.uniform(0, 6, (n, 1)))[
            :, :, None]
        e = rng.standard_normal((n, L, 3))
        if smooth:
            for t in range(1, L):
                e[:, t] = 0.8 * e[:, t - 1] + 0.6 * e[:, t]
        return level + 0.02 * e

    ref = reference(draw(3000, False), np.ones((3000, L, 1)))
    assert ref.minor.shape == (3, 2)
    mask = nn.Variable.from_numpy_array(np.ones((L, B), np.float32))
    values = []
    for smooth in (False, True):
        x = nn.Variable.from_numpy_array(np.ascontiguousarray(draw(B, smooth).transpose(1, 0, 2)).astype(np.float32))
        loss = whitened_sequence_loss(x, mask, ref)
        loss.forward()
        values.append(float(loss.d))
    assert values[1] > 10 * values[0], values
