"""The host BLAS choice: a rule on OpenBLAS core names, and the same products whichever library runs them."""
import numpy as np
import pytest

from gan_sru.ops import blas


@pytest.mark.parametrize("numpy_core,scipy_core,expected", [
    ("Prescott", "SapphireRapids", "scipy"),   # numpy 1.26's OpenBLAS on Sapphire Rapids: a generic kernel
    ("Prescott", "Cooperlake", "scipy"),
    ("SkylakeX", "SapphireRapids", "scipy"),
    ("Zen", "Haswell", "numpy"),               # AMD EPYC: NumPy's Zen kernels, SciPy's Haswell ones: a tie
    ("SkylakeX", "SkylakeX", "numpy"),
    ("Haswell", None, "numpy"),                # SciPy's OpenBLAS not found
    ("SomethingNew", "Haswell", "scipy"),      # an unknown name ranks lowest
])
def test_choice_prefers_the_better_recognised_core(numpy_core, scipy_core, expected):
    assert blas.choose(numpy_core, scipy_core) == expected


def test_cores_are_read_from_both_libraries():
    cores = blas.openblas_cores()
    assert cores["numpy"] and cores["scipy"], cores  # both wheels bundle OpenBLAS here
    assert blas.backend() in blas.BACKENDS


@pytest.mark.parametrize("backend", blas.BACKENDS)
@pytest.mark.parametrize("accumulate", [False, True])
def test_matmul_equals_numpy_for_every_operand_layout(monkeypatch, backend, accumulate):
    monkeypatch.setattr(blas, "_chosen", backend)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 11)).astype(np.float32)
    w = rng.standard_normal((11, 23)).astype(np.float32)
    dy = rng.standard_normal((37, 23)).astype(np.float32)
    one = x[:1]  # a single row: a vector-matrix product
    for a, b in ((x, w), (dy, np.ascontiguousarray(w.T).T.T), (x.T.copy().T, w), (x.T, dy), (dy, w.T), (one, w),
                 (one, dy.T[:, :11].T)):
        expected = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
        start = rng.standard_normal(expected.shape).astype(np.float32)
        out = start.copy()
        got = blas.matmul(a, b, out, accumulate=accumulate)
        assert got is out
        np.testing.assert_allclose(out, expected + (start if accumulate else 0), rtol=1e-5, atol=1e-4)


def test_forced_backend_is_checked(monkeypatch):
    monkeypatch.setattr(blas, "_chosen", None)
    monkeypatch.setenv("GAN_SRU_BLAS", "mkl")
    with pytest.raises(ValueError, match=r"GAN_SRU_BLAS='mkl': expected one of numpy, scipy"):
        blas.backend()
    monkeypatch.setenv("GAN_SRU_BLAS", "scipy")
    assert blas.backend() == "scipy"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_product_equals_numpy_in_the_operands_dtype(dtype):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((9, 5)).astype(dtype), rng.standard_normal((5, 7)).astype(dtype)
    for x, y in ((a, b), (np.ascontiguousarray(a.T).T, b), (a[:1], b)):
        got = blas.product(x, y)
        assert got.dtype == dtype and got.shape == (x.shape[0], 7)
        np.testing.assert_allclose(got, np.asarray(x, np.float64) @ np.asarray(y, np.float64), rtol=1e-5, atol=1e-5)
