"""The moment-matching term of G's loss against a NumPy computation, and its gradient against finite differences."""
import nnabla as nn
import numpy as np
import pytest
from conftest import max_rel_err, numeric_grad

from gan_sru.ops.moments import sequence_reference
from gan_sru.ops.pooled_moments import pooled_reference, step_change_reference
from gan_sru.train.losses import moment_loss


def _reference(fake, real, mask):
    """NumPy: per-feature mean, std and lag-1 autocorrelation and the lag-0 correlation matrix over the valid steps."""
    m = mask.astype(bool)

    def stats(x):
        v = x[m]  # (N, C)
        mean, std = v.mean(0), v.std(0)
        pairs = m[1:] & m[:-1]  # consecutive valid steps
        acf1 = ((x[1:] - mean) * (x[:-1] - mean))[pairs].mean(0) / std ** 2
        return mean, std, np.corrcoef(v, rowvar=False), acf1

    (mf, sf, cf, af), (mr, sr, cr, ar) = stats(fake), stats(real)
    return (np.abs(mf - mr).mean() + np.abs(sf - sr).mean() + np.abs(cf - cr).mean()
            + np.abs(af - ar).mean())


def _data(rng, L=6, B=5, C=4, padded=True):
    mask = np.ones((L, B), np.float32)
    if padded:
        mask[4:, :2] = 0  # two shorter sequences
    mix = rng.standard_normal((C, C))
    fake = (rng.standard_normal((L, B, C)) @ mix * 0.3 + 0.5) * mask[..., None]
    real = (rng.standard_normal((L, B, C)) * 0.2 + 0.4) * mask[..., None]
    return fake.astype(np.float32), real.astype(np.float32), mask


def _graph(fake, real, mask, impl="auto"):
    """The term of fake against the reference computed from real (the same mask)."""
    f, m = (nn.Variable.from_numpy_array(a) for a in (fake, mask))
    f.need_grad = True
    loss = moment_loss(f, m, pooled_reference(real, mask), impl)
    return f, loss


# "auto": the fused host function (gan_sru/ops/moments.py) on this CPU context; "ref": plain nnabla ops
@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_moment_loss_is_zero_for_the_same_batch_and_grows_with_a_shift(impl):
    fake, real, mask = _data(np.random.default_rng(1), padded=False)
    values = []
    for shift in (0.0, 0.1, 0.3):
        _, loss = _graph(fake + shift, fake, mask, impl)
        loss.forward()
        values.append(float(loss.d))
    assert values[0] < 1e-5 and values[0] < values[1] < values[2]


def _check_gradient(graph, reference, data_seed, pick_seed):
    """The graph's gradient w.r.t. fake against central differences of the NumPy reference at 8 valid entries."""
    fake, real, mask = _data(np.random.default_rng(data_seed))
    f, loss = graph(fake, real, mask)
    f.grad.zero()
    loss.forward()
    loss.backward()
    grad = f.g.copy()
    x = fake.astype(np.float64)
    rng = np.random.default_rng(pick_seed)
    valid = np.argwhere(mask.astype(bool))
    for k in rng.choice(len(valid), 8, replace=False):
        t, b = valid[k]
        idx = (t, b, int(rng.integers(fake.shape[2])))
        num = numeric_grad(lambda: reference(x, real, mask), x, idx)
        assert max_rel_err(grad[idx], num) < 2e-2 or abs(grad[idx] - num) < 1e-4, (idx, grad[idx], num)


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_moment_loss_equals_numpy_on_a_padded_batch(impl):
    fake, real, mask = _data(np.random.default_rng(16), L=9, B=7, C=5)
    _, loss = _graph(fake, real, mask, impl)
    assert loss.shape == ()
    loss.forward()
    assert abs(float(loss.d) - _reference(fake, real, mask)) < 1e-5


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_moment_loss_gradient_matches_finite_differences(impl):
    _check_gradient(lambda f, r, m: _graph(f, r, m, impl), _reference, 2, 3)



# ---------------------------------------------------------------- the step-change term

def _innovation_reference(fake, real, mask):
    """NumPy: per-feature std and correlation matrix of x_t - x_(t-1) over pairs of consecutive valid steps."""
    pairs = mask[1:].astype(bool) & mask[:-1].astype(bool)

    def stats(x):
        d = (x[1:] - x[:-1])[pairs]  # (N, C)
        return d.std(0), np.corrcoef(d, rowvar=False)

    (sf, cf), (sr, cr) = stats(fake), stats(real)
    return np.abs(sf - sr).mean() + np.abs(cf - cr).mean()


def _innovation_graph(fake, real, mask, impl="auto"):
    from gan_sru.train.losses import innovation_loss

    f, m = (nn.Variable.from_numpy_array(a) for a in (fake, mask))
    f.need_grad = True
    return f, innovation_loss(f, m, step_change_reference(real, mask), impl)


# ---------------------------------------------------------------- each sequence's own statistics

def _sequence_reference(fake, real, mask):
    """NumPy: per sequence, over its valid steps, the per-feature mean, std, lag-1 autocorrelation and the
    correlation of each pair of features, and log(|DFT| / n + 1e-3) at the L // 2 frequencies pi f / (L // 2);
    per statistic, |batch mean fake - real| + |batch std fake - real|, entry-averaged."""
    L = fake.shape[0]
    w = np.pi * np.arange(1, L // 2 + 1) / (L // 2)

    def stats(x):
        rows = {"mean": [], "std": [], "corr": [], "acf1": [], "spec": []}
        for b in range(x.shape[1]):
            m = mask[:, b].astype(bool)
            v = x[m, b]  # (n, C)
            mean = v.mean(0)
            var = v.var(0) + 1e-6
            c = v - mean
            rows["mean"].append(mean)
            rows["std"].append(np.sqrt(var))
            corr = (c.T @ c / len(v)) / np.sqrt(np.outer(var, var))
            rows["corr"].append(corr[np.triu_indices(len(var), 1)])
            pair = m[1:] & m[:-1]
            cf = (x[:, b] - mean) * m[:, None]
            rows["acf1"].append((cf[1:] * cf[:-1]).sum(0) / max(pair.sum(), 1) / var)
            dft = np.exp(-1j * np.outer(w, np.arange(L))) @ cf  # (L // 2, C)
            rows["spec"].append(np.log(np.sqrt(np.abs(dft) ** 2 + 1e-8) / len(v) + 1e-3).T.ravel())
        return [np.array(rows[k]) for k in ("mean", "std", "corr", "acf1", "spec")]

    total = 0.0
    for sf, sr in zip(stats(fake), stats(real)):
        if sf.shape[1] == 0:  # one feature: no pairs
            continue
        total += np.abs(sf.mean(0) - sr.mean(0)).mean()
        total += np.abs(np.sqrt(sf.var(0) + 1e-8) - np.sqrt(sr.var(0) + 1e-8)).mean()
    return total


def _sequence_graph(fake, real, mask, impl="auto"):
    from gan_sru.train.losses import sequence_moment_loss

    f, m = (nn.Variable.from_numpy_array(a) for a in (fake, mask))
    f.need_grad = True
    return f, sequence_moment_loss(f, m, sequence_reference(real, mask), impl)


# "auto": the fused host function (gan_sru/ops/moments.py) on this CPU context; "ref": plain nnabla ops
@pytest.mark.parametrize("impl", ["auto", "ref"])
@pytest.mark.parametrize("C", [1, 3])
def test_sequence_moment_loss_equals_numpy_for_one_or_few_features(C, impl):
    fake, real, mask = _data(np.random.default_rng(13), L=7, B=6, C=C)
    _, loss = _sequence_graph(fake, real, mask, impl)
    assert loss.shape == ()
    loss.forward()
    assert abs(float(loss.d) - _sequence_reference(fake, real, mask)) < 1e-5


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_sequence_moment_loss_gradient_matches_finite_differences(impl):
    _check_gradient(lambda f, r, m: _sequence_graph(f, r, m, impl), _sequence_reference, 10, 11)


@pytest.mark.parametrize("term", ["moment_loss", "innovation_loss", "sequence_moment_loss"])
def test_the_fused_terms_equal_the_plain_ops_ones_on_a_wide_padded_batch(term):
    """Both forms on 28 features, 40 steps, right-padded sequences (one of a single step); then the fused form's
    gradient accumulates as nnabla asks (two backward calls after one forward: the second recomputes what the
    first used up)."""
    def graph(fake, real, mask, impl="auto"):
        if term == "moment_loss":
            return _graph(fake, real, mask, impl)
        if term == "innovation_loss":
            return _innovation_graph(fake, real, mask, impl)
        return _sequence_graph(fake, real, mask, impl)

    rng = np.random.default_rng(15)
    L, B, C = 40, 16, 28
    lengths = rng.integers(1, L + 1, B)
    lengths[:2] = (L, 1)
    mask = (np.arange(L)[:, None] < lengths[None, :]).astype(np.float32)
    fake, real = (rng.random((L, B, C)).astype(np.float32) * mask[:, :, None] for _ in range(2))
    out = {}
    for impl in ("ref", "auto"):
        f, loss = graph(fake, real, mask, impl)
        f.grad.zero()
        loss.forward()
        loss.backward()
        out[impl] = float(loss.d), f.g.copy() * mask[:, :, None]
    assert abs(out["auto"][0] - out["ref"][0]) < 1e-5 * out["ref"][0]
    assert max_rel_err(out["auto"][1], out["ref"][1]) < 1e-4
    f, loss = graph(fake, real, mask)
    f.grad.zero()
    loss.forward()
    loss.backward()
    loss.backward()
    assert max_rel_err(f.g * mask[:, :, None], 2 * out["ref"][1]) < 1e-4


def test_sequence_moment_loss_refuses_an_unknown_impl():
    with pytest.raises(ValueError, match="unknown impl 'fast'; expected 'auto' or 'ref'"):
        _sequence_graph(*_data(np.random.default_rng(0)), impl="fast")


def test_sequence_moment_loss_sees_sequences_that_all_look_alike():
    """Two batches with the same pooled moments (what moment_loss compares): every sequence a mix of two
    white-noise factors with its own loadings, or every sequence white noise with the pooled covariance. The
    pooled term hardly tells them apart; the per-sequence term does."""
    rng = np.random.default_rng(12)
    L, B, C = 24, 256, 3
    z = rng.standard_normal((L, B, 2))
    load = rng.standard_normal((B, 2, C))  # each sequence its own correlations
    varied = np.einsum("lbk,bkc->lbc", z, load) * 0.1 + 0.5
    flat = varied.reshape(-1, C)
    chol = np.linalg.cholesky(np.cov(flat, rowvar=False))
    alike = rng.standard_normal((L, B, C)) @ chol.T + flat.mean(0)
    alike, varied = alike.astype(np.float32), varied.astype(np.float32)
    mask = np.ones((L, B), np.float32)
    pooled = _graph(alike, varied, mask)[1]
    own = _sequence_graph(alike, varied, mask)[1]
    same = _sequence_graph(varied, varied, mask)[1]
    for v in (pooled, own, same):
        v.forward()
    assert float(same.d) < 1e-5
    assert float(own.d) > 0.2 and float(own.d) > 10 * float(pooled.d), (float(own.d), float(pooled.d))


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("term", ["moment", "innovation", "innovation_ref", "sequence"])
def test_loss_terms_equal_numpy(term, padded):
    graph, reference, seed = {"moment": (_graph, _reference, 0),
                              "innovation": (_innovation_graph, _innovation_reference, 4),
                              "innovation_ref": (lambda f, r, m: _innovation_graph(f, r, m, "ref"),
                                                 _innovation_reference, 4),
                              "sequence": (_sequence_graph, _sequence_reference, 9)}[term]
    fake, real, mask = _data(np.random.default_rng(seed), padded=padded)
    _, loss = graph(fake, real, mask)
    loss.forward()
    assert abs(float(loss.d) - reference(fake, real, mask)) < 1e-5


def test_innovation_loss_is_zero_for_the_same_batch_and_grows_when_time_is_shuffled():
    # the same values per sequence, reordered in time: every lag-0 moment is the real batch's, the changes are not
    rng = np.random.default_rng(5)
    L, B, C = 12, 16, 3
    walk = np.cumsum(rng.standard_normal((L, B, C)) @ np.array([[1, .8, 0], [0, .6, 0], [0, 0, 1.]]), axis=0)
    real = (0.05 * walk + 0.5).astype(np.float32)
    shuffled = real[rng.permutation(L)]
    mask = np.ones((L, B), np.float32)
    values = []
    for fake in (real, shuffled):
        _, loss = _innovation_graph(fake, real, mask)
        loss.forward()
        values.append(float(loss.d))
    assert values[0] < 1e-5 and values[1] > 0.05, values


@pytest.mark.parametrize("impl", ["auto", "ref"])
def test_innovation_loss_gradient_matches_finite_differences(impl):
    _check_gradient(lambda f, r, m: _innovation_graph(f, r, m, impl), _innovation_reference, 6, 7)


# ---------------------------------------------------------------- the moment loss within each class

def test_class_moment_loss_is_the_mean_over_classes_of_the_moment_loss_within_each():
    from gan_sru.train.losses import class_moment_loss

    def value(fake, real, mask, onehot, K):
        """class_moment_loss of fake made for classes onehot, against the per-class references of real (whose
        rows have the same classes); a class with no real row has no reference."""
        classes = onehot.argmax(axis=1)
        refs = [pooled_reference(real[:, classes == k], mask[:, classes == k]) if np.any(classes == k) else None
                for k in range(K)]
        v = class_moment_loss(*(nn.Variable.from_numpy_array(x) for x in (fake, mask, onehot)), refs)
        v.forward()
        return float(v.d)

    fake, real, mask = _data(np.random.default_rng(8), L=6, B=9, C=3)
    classes = np.array([0, 1, 0, 1, 0, 1, 0, 1, 1])  # class 2 is absent: it adds 0
    onehot = np.eye(3, dtype=np.float32)[classes]
    expected = sum(_reference(fake[:, classes == k], real[:, classes == k], mask[:, classes == k])
                   for k in (0, 1)) / 3
    assert abs(value(fake, real, mask, onehot, 3) - expected) < 1e-5

    # each class's fakes are the other class's real rows: the batch's moments are the real batch's, the classes'
    # are not
    even = np.array([0, 1] * 4)
    real2, mask2 = real[:, :8] + 0.3 * even[None, :, None], np.ones((6, 8), np.float32)
    fake2 = real2.copy()
    fake2[:, even == 0], fake2[:, even == 1] = real2[:, even == 1], real2[:, even == 0]
    pooled = moment_loss(*(nn.Variable.from_numpy_array(x) for x in (fake2, mask2)), pooled_reference(real2, mask2))
    pooled.forward()
    assert float(pooled.d) < 1e-5
    assert value(fake2, real2, mask2, np.eye(2, dtype=np.float32)[even], 2) > 0.1


@pytest.mark.parametrize("fn", ["sequence_moments", "batch_moments", "step_change_moments"])
def test_the_fused_terms_refuse_mismatched_shapes_by_name(fn):
    from gan_sru.ops import moments, pooled_moments

    name = {"sequence_moments": "SequenceMoments", "batch_moments": "BatchMoments",
            "step_change_moments": "StepChangeMoments"}[fn]
    module = moments if fn == "sequence_moments" else pooled_moments
    with pytest.raises(ValueError, match=rf"{name} expects fake \(L, B, C\) and mask \(L, B\); got "
                                         r"\[\(6, 4, 3\), \(6, 5\)\]"):
        getattr(module, fn)(nn.Variable((6, 4, 3)), nn.Variable((6, 5)), None)

