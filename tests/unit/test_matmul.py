"""`gan_sru.ops.matmul`: the BLAS product (any leading axes, an optional bias) against nnabla's own affine,
forward and backward, and the dense layer on it against `PF.affine` (same parameters, same values)."""
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np
import pytest

from gan_sru.ops.matmul import affine, matmul


def _grads(impl, x, w, b, dy, accumulate):
    """y = matmul(x, w, b) with the given impl, backward from dy (onto the grads' start values when
    accumulate, as nnabla does for a variable read twice); returns (y, dx, dw, db)."""
    xv, wv = nn.Variable.from_numpy_array(x, need_grad=True), nn.Variable.from_numpy_array(w, need_grad=True)
    bv = None if b is None else nn.Variable.from_numpy_array(b, need_grad=True)
    y = matmul(xv, wv, bv, impl=impl)
    y.forward()
    for v in (xv, wv, bv):
        if v is not None:
            v.g = np.full(v.shape, 0.5 if accumulate else 0.0)
    y.backward(grad=dy)
    return y.d.copy(), xv.g.copy(), wv.g.copy(), None if bv is None else bv.g.copy()


@pytest.mark.parametrize("lead", [(13,), (5, 3), (2, 3, 4)])
@pytest.mark.parametrize("bias", [False, True])
def test_blas_matmul_equals_nnabla_affine_forward_and_backward(lead, bias):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(lead + (7,)).astype(np.float32)
    w = rng.standard_normal((7, 9)).astype(np.float32)
    b = rng.standard_normal(9).astype(np.float32) if bias else None
    dy = rng.standard_normal(lead + (9,)).astype(np.float32)
    expected = np.tensordot(x.astype(np.float64), w, 1) + (0 if b is None else b)
    for accumulate in (False, True):
        got = _grads("auto", x, w, b, dy, accumulate)
        ref = _grads("ref", x, w, b, dy, accumulate)
        assert got[0].shape == lead + (9,)
        np.testing.assert_allclose(got[0], expected, rtol=1e-5, atol=1e-5)
        for name, g, r in zip(("y", "dx", "dw", "db"), got, ref):
            if r is not None:
                np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5, err_msg=f"{name}, accumulate {accumulate}")
    # the gradients themselves against the closed form
    _, dx, dw, db = _grads("auto", x, w, b, dy, False)
    rows = int(np.prod(lead))
    np.testing.assert_allclose(dx, (dy.reshape(rows, 9) @ w.T).reshape(x.shape), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, x.reshape(rows, 7).T @ dy.reshape(rows, 9), rtol=1e-5, atol=1e-4)
    if bias:
        np.testing.assert_allclose(db, dy.reshape(rows, 9).sum(axis=0), rtol=1e-5, atol=1e-5)


def test_blas_matmul_refuses_mismatched_shapes():
    x, w = nn.Variable((4, 3)), nn.Variable((5, 2))
    with pytest.raises(ValueError, match=r"x \(\.\.\., I\) and w \(I, O\), got \(4, 3\) and \(5, 2\)"):
        matmul(x, w)
    with pytest.raises(ValueError, match=r"a bias of shape \(2,\), got \(3,\)"):
        matmul(nn.Variable((4, 5)), w, nn.Variable((3,)))


@pytest.mark.parametrize("shape", [(6, 5), (4, 3, 5)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_affine_has_pf_affines_parameters_and_values(shape, with_bias):
    nn.clear_parameters()
    x = nn.Variable.from_numpy_array(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
    ys = {}
    for scope in ("pf", "ours"):
        nn.random.prng = np.random.RandomState(3)
        with nn.parameter_scope(scope):
            ys[scope] = (PF.affine(x, 4, base_axis=len(shape) - 1, with_bias=with_bias, name="out")
                         if scope == "pf" else affine(x, 4, name="out", with_bias=with_bias))
    params = nn.get_parameters(grad_only=False)
    names = {scope: sorted(k.split("/", 1)[1] for k in params if k.startswith(scope + "/")) for scope in ys}
    assert names["pf"] == names["ours"] == (["out/affine/W", "out/affine/b"] if with_bias else ["out/affine/W"])
    for name in names["pf"]:
        np.testing.assert_array_equal(params[f"ours/{name}"].d, params[f"pf/{name}"].d)  # the same draws
    if with_bias:
        params["pf/out/affine/b"].d = params["ours/out/affine/b"].d = np.arange(4.0)
    F.sink(*ys.values()).forward()
    np.testing.assert_allclose(ys["ours"].d, ys["pf"].d, rtol=1e-5, atol=1e-6)
    nn.clear_parameters()
