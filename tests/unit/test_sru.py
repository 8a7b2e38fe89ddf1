"""The SRU recurrence and layer against the NumPy reference, finite differences and each other."""
import itertools

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np
import pytest
from conftest import max_rel_err, numeric_grad

from gan_sru.ops.sru import SRURecurrence, sru, sru_recurrence
from gan_sru.ops.sru import cpu as sru_cpu
from gan_sru.ops.sru.reference import reference_backward, reference_forward

TOL = 1e-5


def make_case(rng, L=7, B=5, D=6, R=1, K=3, weight_c=False, masked=False, dtype=np.float64, x_dirs=1):
    """Random inputs in the kernel layout; ragged right padding when `masked` (one row fully valid). x is
    (L, B, D), or (L, B, R, D) read per direction with x_dirs = R."""
    case = dict(
        u=rng.standard_normal((L, B, R, K, D)),
        x=(rng.standard_normal((L, B, D) if x_dirs == 1 else (L, B, R, D))) if K == 3 else None,
        bias=rng.standard_normal((R, 2, D)),
        c0=rng.standard_normal((B, R, D)),
        wc=rng.standard_normal((R, 2, D)) if weight_c else None,
        mask=None,
    )
    if masked:
        lengths = rng.integers(1, L + 1, B)
        lengths[0] = L
        case["mask"] = (np.arange(L)[:, None] < lengths[None, :]).astype(np.float64)
    return {k: (None if v is None else v.astype(dtype)) for k, v in case.items()}


# (activation, K, weight_c, R, masked, x_dirs): x_dirs 2, two directions reading their own halves of x
CONFIGS = [c + (1,) for c in itertools.product(("tanh", "identity"), (3, 4), (False, True), (1, 2), (False, True))]
CONFIGS += [(a, 3, w, 2, m, 2) for a, w, m in itertools.product(("tanh", "identity"), (False, True), (False, True))]


@pytest.mark.parametrize("activation,K,weight_c,R,masked,x_dirs", CONFIGS)
def test_kernel_float64_matches_reference(activation, K, weight_c, R, masked, x_dirs):
    rng = np.random.default_rng(1)
    a = make_case(rng, R=R, K=K, weight_c=weight_c, masked=masked, x_dirs=x_dirs)
    args = (a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"])
    h_ref, c_ref = reference_forward(*args, activation=activation, scale_x=1.3)
    h, c = sru_cpu.forward(*args, activation=activation, scale_x=1.3)
    np.testing.assert_allclose(h, h_ref, atol=1e-12)
    np.testing.assert_allclose(c, c_ref, atol=1e-12)
    dh, dc = rng.standard_normal(h.shape), rng.standard_normal(c.shape)
    g_ref = reference_backward(*args, c_ref, dh, dc, activation=activation, scale_x=1.3)
    g = sru_cpu.backward(*args, c, dh, dc, activation=activation, scale_x=1.3)
    for k, v in g_ref.items():
        if v is None:
            assert g[k] is None
        else:
            np.testing.assert_allclose(g[k], v, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("K,R,weight_c,x_dirs", [(3, 1, True, 1), (3, 2, True, 1), (4, 2, True, 1), (4, 1, False, 1),
                                                 (3, 2, True, 2)])
@pytest.mark.parametrize("impl", ["reference", "kernel"])
def test_gradients_match_finite_differences_float64(impl, K, R, weight_c, x_dirs):
    rng = np.random.default_rng(2)
    a = make_case(rng, L=4, B=3, D=2, R=R, K=K, weight_c=weight_c, masked=True, x_dirs=x_dirs)
    fwd, bwd = ((reference_forward, reference_backward) if impl == "reference"
                else (sru_cpu.forward, sru_cpu.backward))
    dh = rng.standard_normal((4, 3, R, 2))
    dc = rng.standard_normal((4, 3, R, 2))
    names = ["u", "x", "bias", "c0", "wc"]

    def loss():
        h, c = fwd(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], "tanh", 1.2)
        return float((h * dh).sum() + (c * dc).sum())

    _, c = fwd(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], "tanh", 1.2)
    g = bwd(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], c, dh, dc, "tanh", 1.2)
    grad_of = dict(u="du", x="dx", bias="dbias", c0="dc0", wc="dwc")
    eps = 1e-6
    for name in names:
        arr = a[name]
        if arr is None:
            continue
        numeric = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            numeric[idx] = numeric_grad(loss, arr, idx, eps)
        assert max_rel_err(g[grad_of[name]], numeric) < 1e-7, name


def _variables(case, need_grad):
    """nnabla float32 Variables in the function's input order, with their names."""
    L, B, R, K, D = case["u"].shape
    x = None if case["x"] is None else case["x"].reshape(L, B, -1)  # (L, B, R, D) -> (L, B, R*D)
    values = dict(u=case["u"].reshape(L, B, R * K * D), x=x, bias=case["bias"],
                  c0=case["c0"].reshape(B, R * D), weight_c=case["wc"], mask=case["mask"])
    names = [n for n in ("u", "x", "bias", "c0", "weight_c", "mask") if values[n] is not None]
    vs = []
    for n in names:
        v = nn.Variable(values[n].shape, need_grad=(n != "mask" and n in need_grad))
        v.d = values[n]
        vs.append(v)
    return names, vs


@pytest.mark.parametrize("activation,K,weight_c,R,masked,x_dirs", CONFIGS)
@pytest.mark.parametrize("zero_c0", [False, True])
def test_function_float32_matches_reference(activation, K, weight_c, R, masked, x_dirs, zero_c0):
    rng = np.random.default_rng(3)
    a = make_case(rng, R=R, K=K, weight_c=weight_c, masked=masked, x_dirs=x_dirs)
    if zero_c0:
        a["c0"][...] = 0
    a32 = {k: None if v is None else v.astype(np.float32) for k, v in a.items()}
    names, inputs = _variables(a32, need_grad={"u", "x", "bias", "c0", "weight_c"})
    fn = SRURecurrence(nn.get_current_context(), R, K, activation, 1.3, weight_c, masked)
    h, c = fn(*inputs)
    F.sink(h, c).forward()
    args = tuple(a[k] for k in ("u", "x", "bias", "c0", "wc", "mask"))
    h_ref, c_ref = reference_forward(*args, activation=activation, scale_x=1.3)
    L, B, _, _, D = a["u"].shape
    assert max_rel_err(h.d, h_ref.reshape(L, B, R * D)) < TOL
    assert max_rel_err(c.d, c_ref.reshape(L, B, R * D)) < TOL

    dh, dc = rng.standard_normal(h_ref.shape), rng.standard_normal(c_ref.shape)
    h.g, c.g = dh.reshape(h.shape), dc.reshape(c.shape)
    for v in inputs:
        v.grad.zero()
    h.parent.backward(inputs, [h, c])
    g = reference_backward(*args, c_ref, dh, dc, activation=activation, scale_x=1.3)
    expected = dict(u=g["du"], x=g["dx"], bias=g["dbias"], c0=g["dc0"], weight_c=g["dwc"])
    for n, v in zip(names, inputs):
        if n != "mask":
            assert max_rel_err(v.g, expected[n].reshape(v.shape)) < TOL, n


@pytest.mark.parametrize("need_grad,accum", [
    ({"u", "x", "bias", "c0", "weight_c"}, [True] * 6),
    ({"u", "bias"}, [False, True, False, True, False, False]),
    ({"x", "c0", "weight_c"}, [True, False, True, False, True, False]),
    ({"u"}, [True, True, True, True, True, False]),
])
def test_function_honours_accum_and_propagate_down(need_grad, accum):
    rng = np.random.default_rng(4)
    a = make_case(rng, R=2, K=3, weight_c=True, masked=True)
    a32 = {k: None if v is None else v.astype(np.float32) for k, v in a.items()}
    names, inputs = _variables(a32, need_grad=need_grad)
    fn = SRURecurrence(nn.get_current_context(), 2, 3, "tanh", 1.0, True, True)
    h, c = fn(*inputs)
    F.sink(h, c).forward()
    dh, dc = rng.standard_normal(h.shape), rng.standard_normal(c.shape)
    h.g, c.g = dh, dc
    before = {}
    for n, v in zip(names, inputs):
        v.g = rng.standard_normal(v.shape)
        before[n] = v.g.copy()
    h.parent.backward(inputs, [h, c], accum=accum[:len(inputs)])
    args = tuple(a[k] for k in ("u", "x", "bias", "c0", "wc", "mask"))
    _, c_ref = reference_forward(*args)
    L, B, R, _, D = a["u"].shape
    g = reference_backward(*args, c_ref, dh.reshape(L, B, R, D), dc.reshape(L, B, R, D))
    expected = dict(u=g["du"], x=g["dx"], bias=g["dbias"], c0=g["dc0"], weight_c=g["dwc"])
    for i, (n, v) in enumerate(zip(names, inputs)):
        if n == "mask" or n not in need_grad:
            np.testing.assert_array_equal(v.g, before[n], err_msg=f"{n} must be left alone")
            continue
        want = expected[n].reshape(v.shape) + (before[n] if accum[i] else 0)
        assert max_rel_err(v.g, want) < TOL, n


@pytest.mark.parametrize("weight_c", [False, True])
def test_declared_dependencies_keep_what_backward_reads(weight_c):
    """forward(clear_no_need_grad=True) frees every buffer the function does not declare it needs; the
    gradients must still equal those of a forward that keeps everything (and the plain-ops reference)."""
    rng = np.random.default_rng(3)
    L, B, D = 6, 3, 4
    arrays = dict(u=rng.standard_normal((L, B, 3 * D)), x=rng.standard_normal((L, B, D)),
                  bias=rng.standard_normal((1, 2, D)), c0=rng.standard_normal((B, D)),
                  wc=rng.standard_normal((1, 2, D)))
    grads = {}
    for impl, clear in (("fused", True), ("fused", False), ("ref", False)):
        v = {k: nn.Variable.from_numpy_array(a.astype(np.float32), need_grad=True) for k, a in arrays.items()}
        h, c_last = sru_recurrence(F.tanh(v["u"]), F.tanh(v["x"]), v["bias"], v["c0"],
                                   v["wc"] if weight_c else None, impl=impl)
        loss = F.sum(F.tanh(h) * 1.5) + F.sum(c_last * c_last)
        loss.forward(clear_no_need_grad=clear)
        for var in v.values():
            var.grad.zero()
        loss.backward(clear_buffer=True)
        grads[(impl, clear)] = {k: var.g.copy() for k, var in v.items()}
    for k in arrays:
        np.testing.assert_allclose(grads[("fused", True)][k], grads[("fused", False)][k], rtol=0, atol=0, err_msg=k)
        assert max_rel_err(grads[("fused", True)][k], grads[("ref", False)][k]) < TOL, k


def _layer(x, impl, **kw):
    with nn.parameter_scope("net"):
        return sru(x, impl=impl, **kw)


LAYER_OPTIONS = [
    dict(hidden_size=6, num_layers=2),
    dict(hidden_size=6, num_layers=2, bidirectional=True, weight_c=True),
    dict(hidden_size=5, num_layers=1, projection_size=3, activation="identity"),
    dict(hidden_size=6, num_layers=2, layer_norm=True, highway_bias=-1.0),
    dict(hidden_size=4, num_layers=3, bidirectional=True, rescale=False),
    dict(hidden_size=4, num_layers=3, bidirectional=True, weight_c=True, identity_skip=True),
]


@pytest.mark.parametrize("options", LAYER_OPTIONS)
def test_layer_fused_matches_ref_inside_larger_graph(options):
    """The same parameters through the fused and the plain-ops path, in a graph with clear_buffer."""
    rng = np.random.default_rng(5)
    L, B = 6, 4
    x = nn.Variable((L, B, 6), need_grad=True)
    x.d = rng.standard_normal(x.shape)
    mask = nn.Variable((L, B))
    mask.d = (np.arange(L)[:, None] < np.array([6, 2, 5, 1])).astype(np.float32)
    results = {}
    for impl in ("fused", "ref"):
        h, c_last = _layer(x, impl, mask=mask, **options)
        with nn.parameter_scope("head"):
            y = PF.affine(F.tanh(h), 3, base_axis=2)
        loss = F.mean(y * y) + F.mean(c_last * c_last)
        params = nn.get_parameters(grad_only=True)
        for p in params.values():
            p.grad.zero()
        x.grad.zero()
        loss.forward(clear_no_need_grad=True)
        loss.backward(clear_buffer=True)
        results[impl] = dict(loss=loss.d.copy(), x=x.g.copy(), **{k: p.g.copy() for k, p in params.items()})
    assert results["fused"].keys() == results["ref"].keys()
    for k in results["ref"]:
        assert max_rel_err(results["fused"][k], results["ref"][k]) < TOL, k


def test_padded_batch_equals_each_sequence_alone():
    """Right padding in both directions: a padded row gives what the unpadded sequence gives alone."""
    rng = np.random.default_rng(6)
    L, B, n_in = 7, 3, 4
    lengths = [7, 3, 5]
    data = rng.standard_normal((L, B, n_in)).astype(np.float32)
    x = nn.Variable.from_numpy_array(data)
    mask = nn.Variable.from_numpy_array((np.arange(L)[:, None] < np.array(lengths)).astype(np.float32))
    h, c_last = _layer(x, "fused", hidden_size=5, num_layers=2, bidirectional=True, weight_c=True, mask=mask)
    F.sink(h, c_last).forward()
    for b, n in enumerate(lengths):
        xb = nn.Variable.from_numpy_array(data[:n, b:b + 1])
        hb, cb = _layer(xb, "fused", hidden_size=5, num_layers=2, bidirectional=True, weight_c=True)
        F.sink(hb, cb).forward()
        np.testing.assert_allclose(h.d[:n, b], hb.d[:, 0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(h.d[n:, b], 0.0)
        np.testing.assert_allclose(c_last.d[:, b], cb.d[:, 0], rtol=1e-5, atol=1e-6)


def test_step_mode_carries_state():
    """Running L single steps with the carried c equals one call over the whole sequence."""
    rng = np.random.default_rng(7)
    L, B, n_in, layers = 6, 3, 4, 2
    data = rng.standard_normal((L, B, n_in)).astype(np.float32)
    h_full, c_full = _layer(nn.Variable.from_numpy_array(data), "fused", hidden_size=5, num_layers=layers,
                            weight_c=True)
    F.sink(h_full, c_full).forward()
    state = np.zeros((layers, B, 5), np.float32)
    for t in range(L):
        x_t = nn.Variable.from_numpy_array(data[t:t + 1])
        h_t, c_t = _layer(x_t, "fused", hidden_size=5, num_layers=layers, weight_c=True,
                          c0=nn.Variable.from_numpy_array(state))
        F.sink(h_t, c_t).forward()
        np.testing.assert_allclose(h_t.d[0], h_full.d[t], rtol=1e-5, atol=1e-6)
        state = c_t.d.copy()
    np.testing.assert_allclose(state, c_full.d, rtol=1e-5, atol=1e-6)


def test_layer_creates_expected_parameters():
    x = nn.Variable((5, 2, 3))
    _layer(x, "fused", hidden_size=4, num_layers=2, bidirectional=True, weight_c=True, projection_size=2)
    shapes = {k: v.shape for k, v in nn.get_parameters().items()}
    assert shapes == {
        "net/sru/layer0/P": (3, 2), "net/sru/layer0/W": (2, 2 * 4 * 4), "net/sru/layer0/bias": (2, 2, 4),
        "net/sru/layer0/weight_c": (2, 2, 4),
        "net/sru/layer1/P": (8, 2), "net/sru/layer1/W": (2, 2 * 4 * 4), "net/sru/layer1/bias": (2, 2, 4),
        "net/sru/layer1/weight_c": (2, 2, 4),
    }


def test_identity_skip_drops_the_fourth_projection_of_bidirectional_layers_on_their_own_width():
    """identity_skip: a bidirectional layer whose input is R*D wide (layer 1 on) has 3 projections per direction;
    layer 0 (input width 3) keeps its fourth. Each direction's skip is its own half of the input: with the layer's
    weight and the gates made to pass the skip alone (r = 0 everywhere), h = scale_x * input."""
    x = nn.Variable.from_numpy_array(np.random.default_rng(8).standard_normal((5, 2, 3)).astype(np.float32))
    h, _ = _layer(x, "fused", hidden_size=4, num_layers=2, bidirectional=True, identity_skip=True)
    shapes = {k: v.shape for k, v in nn.get_parameters().items()}
    assert shapes["net/sru/layer0/W"] == (3, 2 * 4 * 4) and shapes["net/sru/layer1/W"] == (8, 2 * 3 * 4)
    params = nn.get_parameters()
    params["net/sru/layer1/W"].d = 0.0
    params["net/sru/layer1/bias"].d[:, 1] = -1e4  # reset gate 0: h = x'
    h.forward()
    below = h.parent.inputs[1]  # layer 1's recurrence: inputs u, x (layer 0's output), bias, c0
    assert below.shape == (5, 2, 8) and h.parent.inputs[0].shape == (5, 2, 2 * 3 * 4)
    np.testing.assert_allclose(h.d, np.sqrt(3.0) * below.d, rtol=1e-5, atol=1e-6)


def test_highway_bias_initialises_reset_gate():
    _layer(nn.Variable((5, 2, 4)), "fused", hidden_size=4, num_layers=1, highway_bias=-2.0)
    bias = nn.get_parameters()["net/sru/layer0/bias"].d
    np.testing.assert_array_equal(bias[:, 0], 0.0)
    np.testing.assert_array_equal(bias[:, 1], -2.0)


def test_dropout_only_in_training_and_shared_over_time():
    rng = np.random.default_rng(8)
    x = nn.Variable.from_numpy_array(rng.standard_normal((5, 3, 4)).astype(np.float32))
    h_eval, _ = _layer(x, "fused", hidden_size=4, num_layers=2, dropout=0.5, train=False)
    h_plain, _ = _layer(x, "fused", hidden_size=4, num_layers=2, dropout=0.0)
    h_eval.forward()
    h_plain.forward()
    np.testing.assert_array_equal(h_eval.d, h_plain.d)
    h_train, _ = _layer(x, "fused", hidden_size=4, num_layers=2, dropout=0.5, train=True)
    h_train.forward()
    assert not np.allclose(h_train.d, h_plain.d)


@pytest.mark.parametrize("kwargs,message", [
    (dict(impl="fast"), "impl must be one of"),
    (dict(activation="relu"), "activation must be one of"),
])
def test_recurrence_refuses_bad_options(kwargs, message):
    u = nn.Variable((3, 2, 12))
    x = nn.Variable((3, 2, 4))
    bias = nn.Variable((1, 2, 4))
    c0 = nn.Variable((2, 4))
    with pytest.raises(ValueError, match=message):
        sru_recurrence(u, x, bias, c0, **kwargs)


def test_recurrence_refuses_bad_shapes():
    with pytest.raises(ValueError, match=r"bias must have shape \(2, 2, D\)"):
        sru_recurrence(nn.Variable((3, 2, 24)), nn.Variable((3, 2, 4)), nn.Variable((1, 2, 4)),
                       nn.Variable((2, 8)), bidirectional=True)
    for x, bi, want in (((3, 2, 8), False, r"\(3, 2, 4\) \(the skip"),
                        ((3, 2, 6), True, r"\(3, 2, 4\) or \(3, 2, 8\)")):
        with pytest.raises(ValueError, match=rf"x must have shape {want}.*got \({x[0]}, {x[1]}, {x[2]}\)"):
            sru_recurrence(nn.Variable((3, 2, 12 * (2 if bi else 1))), nn.Variable(x),
                           nn.Variable((2 if bi else 1, 2, 4)), nn.Variable((2, 8 if bi else 4)), bidirectional=bi)
    with pytest.raises(ValueError, match="sru expects x of shape"):
        sru(nn.Variable((3, 4)), 4)
