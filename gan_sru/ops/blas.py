"""The host BLAS behind the SRU's matmul on CPU: NumPy's OpenBLAS or SciPy's, chosen per machine.

NumPy 1.26's wheels carry OpenBLAS 0.3.23, which does not recognise Intel's Sapphire/Emerald Rapids and
falls back to a generic kernel there (the SRU's (2048x256)(256x768) product: 28 ms instead of ~5 ms).
`OPENBLAS_CORETYPE` fixes that only if set before NumPy is first imported, which a library cannot promise
(a notebook, pandas or the Python API import NumPy first). SciPy's wheels carry a newer OpenBLAS that
recognises those cores. So: read the core each library's OpenBLAS picked (threadpoolctl) and use the
better one; NumPy on a tie. The choice depends only on the machine, never on a timing, so every process
of a run (and a resumed run) computes with the same BLAS. `GAN_SRU_BLAS=numpy|scipy` overrides it.
"""
import os
import warnings

import numpy as np

# OpenBLAS core names -> how wide their float32 GEMM kernels are (higher is better; unknown names: 0).
CORE_RANK = {"prescott": 0, "core2": 1, "penryn": 1, "dunnington": 1, "nehalem": 2, "sandybridge": 3,
             "haswell": 4, "zen": 4, "skylakex": 5, "cooperlake": 5, "sapphirerapids": 6}
BACKENDS = ("numpy", "scipy")
_chosen = None


def choose(numpy_core, scipy_core):
    """'numpy' or 'scipy' for the two OpenBLAS core names (None: that library's OpenBLAS was not found)."""
    rank = {k: -1 if c is None else CORE_RANK.get(c.lower(), 0) for k, c in (("numpy", numpy_core),
                                                                            ("scipy", scipy_core))}
    return "scipy" if rank["scipy"] > rank["numpy"] else "numpy"


def openblas_cores():
    """{'numpy': core or None, 'scipy': core or None}: the kernels each library's OpenBLAS runs with."""
    import scipy.linalg.blas  # noqa: F401  (loads SciPy's OpenBLAS so that threadpoolctl sees it)
    from threadpoolctl import threadpool_info

    cores = {"numpy": None, "scipy": None}
    for lib in threadpool_info():
        if lib.get("internal_api") != "openblas":
            continue
        path = os.path.basename(lib.get("filepath", "")).lower()
        owner = "scipy" if "scipy" in path else "numpy"
        cores[owner] = cores[owner] or lib.get("architecture")
    return cores


def backend():
    """The BLAS used by `matmul` in this process ('numpy' or 'scipy'), decided on first use."""
    global _chosen
    if _chosen is None:
        forced = os.environ.get("GAN_SRU_BLAS")
        if forced:
            if forced not in BACKENDS:
                raise ValueError(f"GAN_SRU_BLAS={forced!r}: expected one of {', '.join(BACKENDS)}")
            _chosen = forced
        else:
            cores = openblas_cores()
            _chosen = choose(cores["numpy"], cores["scipy"])
            if max(CORE_RANK.get((c or "").lower(), 0) for c in cores.values()) < 4 and _has_avx2():
                warnings.warn(f"neither NumPy's nor SciPy's OpenBLAS recognises this CPU ({cores}); matrix "
                              "products run on a generic kernel. Set OPENBLAS_CORETYPE (e.g. Haswell or SkylakeX) "
                              "before starting Python.", RuntimeWarning, stacklevel=2)
    return _chosen


def _has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx2" in line for line in f)
    except OSError:
        return False


def _fortran_operand(m):
    """(F-contiguous array, trans) with op(array) == m.T, without a copy when m is C- or F-contiguous."""
    if m.T.flags.f_contiguous:
        return m.T, 0
    if m.flags.f_contiguous:
        return m, 1
    return np.ascontiguousarray(m).T, 0


def _one_row(a, b, out, accumulate):
    """out = a @ b (or +=) for a of one row, as a vector-matrix product: OpenBLAS's GEMM ran D's time-mean,
    (1, L) x (L, B H), at a twentieth of its speed."""
    row = np.dot(a[0], b)
    if accumulate:
        out[0] += row
    else:
        out[0] = row
    return out


def matmul(a, b, out, accumulate=False):
    """out = a @ b (or out += a @ b) for float32 2-D arrays; out must be C-contiguous."""
    if a.shape[0] == 1:
        return _one_row(a, b, out, accumulate)
    if backend() == "numpy":
        if accumulate:
            out += a @ b
        else:
            np.matmul(a, b, out=out)
        return out
    from scipy.linalg.blas import sgemm

    # C-order out = a @ b  <=>  F-order out.T = b.T @ a.T: Fortran GEMM straight into out's memory
    fb, tb = _fortran_operand(b)
    fa, ta = _fortran_operand(a)
    res = sgemm(1.0, fb, fa, beta=1.0 if accumulate else 0.0, c=out.T, trans_a=tb, trans_b=ta, overwrite_c=1)
    if not np.shares_memory(res, out):  # f2py copied (it should not for a C-contiguous out)
        out[...] = res.T
    return out


def product(a, b):
    """a @ b for 2-D arrays, a new array: on `matmul`'s BLAS when both are float32, else NumPy's (whose OpenBLAS
    may run a generic kernel on this CPU, see above)."""
    if a.dtype == b.dtype == np.float32:
        return matmul(a, b, np.empty((a.shape[0], b.shape[1]), np.float32))
    return a @ b
