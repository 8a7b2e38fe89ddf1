"""The CUDA backend of the SRU recurrence: gan_sru/ops/sru/sru.cu and gan_sru/ops/sru/cuda.py, float32 and float16.

Three levels, from no GPU at all to a real device:

* nvcc compiles sru.cu for sm_80 and sm_90 with every warning an error, and every kernel is in the output.
* Host emulation: sru.cu compiled by g++ as plain C++ (the CUDA qualifiers defined away, blockIdx and
  threadIdx as globals) and every launch of the real launch plans (`forward_launches`,
  `backward_launches`) run thread by thread over the real grid. The kernels share nothing between threads
  (no shared memory, no atomics, no barriers), so this runs exactly the per-thread code of the device
  and checks indices, directions, masks, strides, accumulate flags, scratch buffers and reductions
  against the NumPy reference; also the nnabla adapter (`function_forward` / `function_backward`).
* On a CUDA device through CuPy (skipped without CuPy or a device): the same comparisons.
"""
import ctypes
import os
import re
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest

from gan_sru import GanSruError
from gan_sru.ops.sru import bandwidth
from gan_sru.ops.sru import cuda as sru_cuda
from gan_sru.ops.sru.reference import reference_backward, reference_forward

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOL = 1e-5  # max |kernel - reference| / max |reference|, reference in float64
# The float16 kernels against the float64 reference on the same float16-rounded inputs: each output is
# rounded once to float16 (a unit u = 2^-11 = 4.9e-4 relative), and the backward also reads the forward's
# rounded c and, with two directions, stores dx per direction before summing them. Over CASES with three
# seeds the worst is 0.98 u for h and c and 1.8 u for the gradients (dwc, dx), measured by the emulation;
# 4 u leaves room for other shapes and the device's fast sigmoid.
TOL16 = 4 * 2.0 ** -11
TOLS = {"float32": TOL, "float16": TOL16}
GRADS = ("du", "dx", "dbias", "dwc", "dc0")


def max_rel_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    if want.size == 0:
        return 0.0
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def make_case(L, B, R, K, D, wc=True, ragged=False, seed=0, x_dirs=1):
    """float32 inputs of the recurrence and the gradients arriving at h and c; x (L, B, D), or (L, B, R, D)
    read per direction with x_dirs = R."""
    rng = np.random.default_rng(seed)

    def rnd(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    mask = None
    if ragged:  # right padding; lengths include the full length, and 0 when there is room for it
        lengths = rng.integers(0, L + 1, size=B)
        lengths[0] = L
        if B > 2:
            lengths[-1] = 0
        mask = (np.arange(L)[:, None] < lengths[None, :]).astype(np.float32)
    return {
        "u": rnd(L, B, R, K, D), "x": (rnd(L, B, D) if x_dirs == 1 else rnd(L, B, R, D)) if K == 3 else None,
        "bias": rnd(R, 2, D, scale=0.5),
        "c0": rnd(B, R, D), "wc": rnd(R, 2, D, scale=0.5) if wc else None, "mask": mask,
        "dh": rnd(L, B, R, D), "dc": rnd(L, B, R, D),
    }


def x_dirs_of(case):
    """1 for a shared x (or none), R for an (L, B, R, D) x."""
    x = case["x"]
    return 1 if x is None or x.ndim == 3 else x.shape[2]


def f64(a):
    return None if a is None else np.asarray(a, np.float64)


def as_dtype(case, dtype):
    """The case with every array in `dtype` (float16: the inputs the float16 kernels read)."""
    return {k: None if v is None else v.astype(dtype) for k, v in case.items()}


def reference(case, activation, scale_x):
    """(h, c, grads) of the float64 reference on the float32 inputs."""
    a = {k: f64(v) for k, v in case.items()}
    h, c = reference_forward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], activation, scale_x)
    g = reference_backward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], c, a["dh"], a["dc"],
                           activation, scale_x)
    return h, c, g


# Cases: (L, B, R, K, D, wc, ragged, activation, scale_x). Covers both activations, K = 3/4, with and without
# wc, one and two directions, ragged masks, B == 1 (partials written directly), L = 1..3 (the edges of
# the two-step prefetch), and more columns
# than one block (B*R*D > 128) so that several blocks run.
CASES = [
    (L, B, R, K, D, wc, ragged, act, 0.7 if K == 4 else 1.0)
    for act in ("tanh", "identity") for K in (3, 4) for wc in (True, False) for R in (1, 2)
    for ragged in (False, True) for (L, B, D) in ((6, 4, 8),)
] + [
    (1, 3, 2, 3, 5, True, False, "tanh", 1.0),
    (2, 3, 2, 3, 5, True, True, "tanh", 1.0),
    (3, 2, 2, 4, 4, True, False, "tanh", 0.7),
    (5, 1, 2, 3, 8, True, True, "tanh", 1.0),
    (5, 1, 1, 4, 8, True, False, "identity", 0.5),
    (7, 5, 2, 3, 20, True, True, "tanh", 1.0),
]


# Two directions reading their own halves of an (L, B, 2, D) x (x_dirs = 2; the official SRU's bidirectional
# layer on an R*D input): (L, B, D, wc, ragged, activation), more columns than one block in the last.
PER_DIRECTION_CASES = [(6, 4, 8, True, False, "tanh"), (6, 4, 8, False, True, "identity"),
                       (1, 3, 5, True, True, "tanh"), (7, 5, 20, True, True, "tanh")]


def per_direction_case(cfg, dtype):
    """(case, activation, the reference's (h, c, grads) with scale_x 1.3) of a PER_DIRECTION_CASES entry."""
    L, B, D, wc, ragged, act = cfg
    case = as_dtype(make_case(L, B, 2, 3, D, wc=wc, ragged=ragged, seed=L + B, x_dirs=2), dtype)
    return case, act, reference(case, act, 1.3)


def case_id(c):
    L, B, R, K, D, wc, ragged, act, s = c
    return f"L{L}B{B}R{R}K{K}D{D}-{'wc' if wc else 'nowc'}-{'ragged' if ragged else 'full'}-{act}-s{s}"


# ---------------------------------------------------------------------------------------------------
# The source and nvcc
# ---------------------------------------------------------------------------------------------------


def expanded_kernels(src):
    """sru.cu's kernel entries as the preprocessor writes them: each SRU_KERNELS(T, SUFFIX) instantiation of
    the macro's body, with T and ##SUFFIX replaced."""
    lines = src.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("#define SRU_KERNELS(T, SUFFIX)"))
    body = []
    while lines[i].rstrip().endswith("\\"):  # the macro's continuation lines
        i += 1
        body.append(lines[i].rstrip().rstrip("\\"))
    body = "\n".join(body)
    out = []
    for m in re.finditer(r"^SRU_KERNELS\((\w+), *(\w*)\)", src, re.M):
        out.append(re.sub(r"\bT\b", m.group(1), body).replace("##SUFFIX", m.group(2)))
    return "\n".join(out)


def kernel_signatures():
    """{kernel name: [C parameter type, ...]} parsed from sru.cu (its SRU_KERNELS macro expanded)."""
    src = expanded_kernels(sru_cuda.kernel_source())
    sigs = {}
    for m in re.finditer(r'extern "C" __global__ void __launch_bounds__\(SRU_BLOCK\)\s*(\w+)\((.*?)\)\s*\{',
                         src, re.DOTALL):
        params = [p.strip() for p in m.group(2).split(",")]
        sigs[m.group(1)] = [re.sub(r"\s*__restrict__\s*", " ", p).rsplit(None, 1)[0].strip() for p in params]
    return sigs


C_TYPES = {"const float*": np.uint64, "float*": np.uint64, "const sru_half*": np.uint64, "sru_half*": np.uint64,
           "const int": np.int32, "const float": np.float32}


def test_source_is_nvrtc_plain_cuda_c():
    src = sru_cuda.kernel_source()
    assert not re.search(r"^\s*#\s*include", src, re.M), "NVRTC compiles sru.cu without the toolkit headers"
    assert "<<<" not in src
    assert int(re.search(r"#define SRU_BLOCK (\d+)", src).group(1)) == sru_cuda.BLOCK
    sigs = kernel_signatures()
    assert set(sigs) == set(sru_cuda.KERNEL_NAMES), "every kernel is extern \"C\" with __launch_bounds__"
    for name, params in sigs.items():
        assert all(p in C_TYPES for p in params), (name, params)


@pytest.mark.parametrize("arch,prefetch",
                         [("sm_80", sru_cuda.PREFETCH), ("sm_90", sru_cuda.PREFETCH), ("sm_90", (8, 8))])
def test_nvcc_compiles_every_kernel_without_warnings(arch, prefetch, tmp_path):
    """float32 and float16 kernels, at the prefetch depths cuda.py compiles with and the deepest gpu_speed.py
    measures (a ring of registers that must not spill to local memory)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    strict = ["-std=c++11", "-Werror", "all-warnings", f"-DSRU_PREFETCH_FWD={prefetch[0]}",
              f"-DSRU_PREFETCH_BWD={prefetch[1]}"]
    ptx = tmp_path / "sru.ptx"
    subprocess.run([nvcc, f"-arch={arch}", "-ptx", *strict, "-o", str(ptx), sru_cuda.KERNEL_PATH],
                   check=True, capture_output=True, text=True)
    entries = re.findall(r"\.entry\s+(\w+)\s*\(", ptx.read_text())
    assert sorted(entries) == sorted(sru_cuda.KERNEL_NAMES)
    # ptxas too: any spill, local memory or double-precision use is an error (the arithmetic is float32).
    cubin = tmp_path / "sru.cubin"
    out = subprocess.run([nvcc, f"-arch={arch}", "-cubin", *strict, "--resource-usage",
                          "-Xptxas", "-Werror,-warn-spills,-warn-lmem-usage,-warn-double-usage",
                          "-o", str(cubin), sru_cuda.KERNEL_PATH], check=True, capture_output=True, text=True)
    assert cubin.stat().st_size > 0
    usage = out.stdout + out.stderr
    for name in sru_cuda.KERNEL_NAMES:
        assert f"entry function '{name}'" in usage
    no_stack = "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    assert usage.count(no_stack) == len(sru_cuda.KERNEL_NAMES), usage


# ---------------------------------------------------------------------------------------------------
# Launch plans
# ---------------------------------------------------------------------------------------------------


def test_launch_args_match_kernel_signatures():
    """CuPy passes each argument with its NumPy dtype and does not check it against the C signature."""
    sigs = kernel_signatures()
    temp = iter(range(4096, 10**6, 4096)).__next__
    plans = []
    for dtype in sru_cuda.DTYPES:
        plans += sru_cuda.forward_launches(1, 2, 3, 4, 5, 6, 7, 8, shape=(3, 2, 2, 3, 4), dtype=dtype)
        plans += sru_cuda.forward_launches(1, 2, 3, 4, 5, 6, 7, 8, shape=(3, 2, 2, 3, 4), dtype=dtype, x_dirs=2)
        for K, x_dirs in ((3, 1), (4, 1), (3, 2)):
            plans += sru_cuda.backward_launches(*range(1, 15), shape=(3, 2, 2, K, 4), dtype=dtype, x_dirs=x_dirs,
                                                temp=lambda n, dtype: temp())
    assert {p.kernel for p in plans} == set(sru_cuda.KERNEL_NAMES)
    for p in plans:
        assert [type(a) for a in p.args] == [C_TYPES[t] for t in sigs[p.kernel]], p.kernel


def test_launch_plans_reject_bad_arguments():
    with pytest.raises(sru_cuda.SruArgumentError, match="activation"):
        sru_cuda.forward_launches(1, 1, 1, 0, 0, 0, 1, 1, shape=(2, 1, 1, 3, 4), activation="relu")
    with pytest.raises(sru_cuda.SruArgumentError, match="null pointer for x"):
        sru_cuda.forward_launches(1, 0, 1, 0, 0, 0, 1, 1, shape=(2, 1, 1, 3, 4))
    with pytest.raises(sru_cuda.SruArgumentError, match="shape"):
        sru_cuda.forward_launches(1, 1, 1, 0, 0, 0, 1, 1, shape=(2, 1, 3, 3, 4))
    with pytest.raises(sru_cuda.SruArgumentError, match="pointer"):
        sru_cuda.forward_launches(1.5, 1, 1, 0, 0, 0, 1, 1, shape=(2, 1, 1, 3, 4))
    with pytest.raises(sru_cuda.SruArgumentError, match="dtype='float64': expected one of"):
        sru_cuda.forward_launches(1, 1, 1, 0, 0, 0, 1, 1, shape=(2, 1, 1, 3, 4), dtype="float64")
    assert isinstance(sru_cuda.SruArgumentError("x"), GanSruError)
    with pytest.raises(sru_cuda.SruArgumentError, match=r"x_dirs=2 with shape=\(2, 1, 1, 3, 4\): expected 1, or R = 1"):
        sru_cuda.forward_launches(1, 1, 1, 0, 0, 0, 1, 1, shape=(2, 1, 1, 3, 4), x_dirs=2)
    with pytest.raises(sru_cuda.SruArgumentError, match="x_dirs=2 .* when K == 3"):
        sru_cuda.backward_launches(*range(1, 15), shape=(2, 1, 2, 4, 4), x_dirs=2, temp=lambda n, dtype: 4096)
    # K == 4 needs no x
    assert sru_cuda.forward_launches(1, 0, 1, 0, 0, 0, 1, 1, shape=(2, 1, 1, 4, 4))


# ---------------------------------------------------------------------------------------------------
# Host emulation of the kernels
# ---------------------------------------------------------------------------------------------------

SHIM = r"""
#include <math.h>
struct sru_dim3 { unsigned int x, y, z; };
extern "C" { sru_dim3 blockIdx, threadIdx, blockDim, gridDim; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#include "{path}"
extern "C" float sru_test_h2f(unsigned short v) { return sru_h2f(v); }
extern "C" unsigned short sru_test_f2h(float f) { return sru_f2h(f); }
"""


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class HostEmulator:
    """Runs launch plans on the host: sru.cu built by g++, one call per (block, thread) of the real grid."""

    def __init__(self, lib_path):
        self.lib = ctypes.CDLL(lib_path)
        self.dim = {n: Dim3.in_dll(self.lib, n) for n in ("blockIdx", "threadIdx", "blockDim", "gridDim")}
        self.sigs = kernel_signatures()

    def run(self, launches, grid=None):
        to_c = {np.uint64: ctypes.c_void_p, np.int32: ctypes.c_int, np.float32: ctypes.c_float}
        for launch in launches:
            fn = getattr(self.lib, launch.kernel)
            fn.restype = None
            fn.argtypes = [to_c[C_TYPES[t]] for t in self.sigs[launch.kernel]]
            args = [int(a) if isinstance(a, np.integer) else float(a) for a in launch.args]
            blocks = sru_cuda.launch_grid(launch.threads) if grid is None else grid
            for name, value in (("blockDim", sru_cuda.BLOCK), ("gridDim", blocks)):
                self.dim[name].x, self.dim[name].y, self.dim[name].z = value, 1, 1
            for b in range(blocks):
                self.dim["blockIdx"].x = b
                for t in range(sru_cuda.BLOCK):
                    self.dim["threadIdx"].x = t
                    fn(*args)

    # The counterparts of sru_cuda.forward_ptrs / backward_ptrs on host buffers (same signatures).
    def forward_ptrs(self, *ptrs, shape, activation="tanh", scale_x=1.0, device_id=None, grid=None,
                     dtype="float32", x_dirs=1):
        self.run(sru_cuda.forward_launches(*ptrs, shape=shape, activation=activation, scale_x=scale_x,
                                           dtype=dtype, x_dirs=x_dirs), grid)

    def backward_ptrs(self, *ptrs, device_id=None, grid=None, **kw):
        scratch = []

        def temp(n, dtype):  # NaN: scratch that is read before being written shows up in the results
            scratch.append(np.full(n, np.nan, dtype))
            return scratch[-1].ctypes.data

        self.run(sru_cuda.backward_launches(*ptrs, temp=temp, **kw), grid)


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler (g++) for the host emulation of sru.cu")
    d = tmp_path_factory.mktemp("sru_emu")
    (d / "shim.cpp").write_text(SHIM.replace("{path}", sru_cuda.KERNEL_PATH))
    lib = d / "libsru_emu.so"
    # -Wno-unknown-pragmas: `#pragma unroll` is nvcc's (g++ runs the loops as written)
    subprocess.run([cxx, "-O1", "-shared", "-fPIC", "-ffp-contract=off", "-Wall", "-Werror", "-Wno-unknown-pragmas",
                    "-o", str(lib), str(d / "shim.cpp")], check=True, capture_output=True, text=True)
    return HostEmulator(str(lib))


def addr(a):
    return 0 if a is None else a.ctypes.data


def emu_forward(emu, case, activation, scale_x, grid=None):
    """The forward in the storage type of the case's arrays (float32 or float16)."""
    u = case["u"]
    L, B, R, _, D = u.shape
    h = np.full((L, B, R, D), np.nan, u.dtype)  # NaN: anything left unwritten fails the comparison
    c = np.full((L, B, R, D), np.nan, u.dtype)
    emu.forward_ptrs(*(addr(case[k]) for k in ("u", "x", "bias", "c0", "wc", "mask")), addr(h), addr(c),
                     shape=u.shape, activation=activation, scale_x=scale_x, grid=grid, dtype=u.dtype.name,
                     x_dirs=x_dirs_of(case))
    return h, c


def grad_shapes(shape, wc, x_dirs=1):
    L, B, R, K, D = shape
    return {"du": shape, "dx": ((L, B, D) if x_dirs == 1 else (L, B, R, D)) if K == 3 else None, "dbias": (R, 2, D),
            "dwc": (R, 2, D) if wc else None, "dc0": (B, R, D)}


def emu_backward(emu, case, c, activation, scale_x, init=None, accum=None, want=GRADS, grid=None,
                 dh=True, dc=True):
    """Runs the backward into fresh buffers: NaN-filled, or `init[k]` where given. Returns {name: array}."""
    shape, dtype = case["u"].shape, case["u"].dtype
    out = {}
    for k, s in grad_shapes(shape, case["wc"] is not None, x_dirs_of(case)).items():
        if s is not None and k in want:
            out[k] = np.full(s, np.nan, dtype) if init is None else init[k].astype(dtype)
    accum = accum or {}
    emu.backward_ptrs(
        *(addr(case[k]) for k in ("u", "x", "bias", "c0", "wc", "mask")), addr(c),
        addr(case["dh"] if dh else None), addr(case["dc"] if dc else None),
        *(addr(out.get(k)) for k in GRADS), shape=shape, activation=activation, scale_x=scale_x,
        grid=grid, dtype=dtype.name, x_dirs=x_dirs_of(case), **{f"accum_{k}": bool(accum.get(k)) for k in GRADS})
    return out


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("cfg", CASES, ids=case_id)
def test_emulated_kernels_match_reference(emu, cfg, dtype):
    L, B, R, K, D, wc, ragged, act, scale_x = cfg
    case = as_dtype(make_case(L, B, R, K, D, wc=wc, ragged=ragged), dtype)
    h_ref, c_ref, g_ref = reference(case, act, scale_x)
    h, c = emu_forward(emu, case, act, scale_x)
    assert h.dtype == c.dtype == np.dtype(dtype)
    assert max_rel_err(h, h_ref) <= TOLS[dtype]
    assert max_rel_err(c, c_ref) <= TOLS[dtype]
    g = emu_backward(emu, case, c, act, scale_x)
    assert set(g) == {k for k in GRADS if g_ref[k] is not None}
    for k in g:
        assert max_rel_err(g[k], g_ref[k]) <= TOLS[dtype], k


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("cfg", PER_DIRECTION_CASES, ids=str)
def test_emulated_per_direction_skip_matches_reference(emu, cfg, dtype):
    """x (L, B, 2, D): direction r reads x[:, :, r], and dx comes back per direction (no sum over them)."""
    case, act, (h_ref, c_ref, g_ref) = per_direction_case(cfg, dtype)
    L, B, D = cfg[:3]
    h, c = emu_forward(emu, case, act, 1.3)
    assert max_rel_err(h, h_ref) <= TOLS[dtype] and max_rel_err(c, c_ref) <= TOLS[dtype]
    g = emu_backward(emu, case, c, act, 1.3)
    assert g["dx"].shape == (L, B, 2, D)
    for k in g:
        assert max_rel_err(g[k], g_ref[k]) <= TOLS[dtype], k
    shared = dict(case, x=case["x"][:, :, 0].copy())  # the same numbers read by both directions: not the same h
    assert max_rel_err(emu_forward(emu, shared, act, 1.3)[0], h_ref) > 1e-3


def test_emulated_float16_conversions_round_like_numpy(emu):
    """sru.cu's host conversions (the emulation's stand-in for the device's cvt instructions): every float16
    value to float32 exactly, and float32 to float16 rounded to nearest even like NumPy, at the edges too
    (subnormals, ties, overflow to inf, nan)."""
    emu.lib.sru_test_h2f.restype, emu.lib.sru_test_h2f.argtypes = ctypes.c_float, [ctypes.c_ushort]
    emu.lib.sru_test_f2h.restype, emu.lib.sru_test_f2h.argtypes = ctypes.c_ushort, [ctypes.c_float]
    bits = np.arange(2 ** 16, dtype=np.uint16)
    want = bits.view(np.float16).astype(np.float32)
    got = np.array([emu.lib.sru_test_h2f(int(b)) for b in bits], np.float32)
    finite = ~np.isnan(want)
    assert np.array_equal(got[finite].view(np.uint32), want[finite].view(np.uint32))
    assert np.all(np.isnan(got[~finite]))
    rng = np.random.default_rng(0)
    halves = want[finite & (np.abs(want) < 65504)]
    edges = np.concatenate([
        halves, np.nextafter(halves, np.float32(np.inf)), np.nextafter(halves, -np.float32(np.inf)),
        (halves[:-1] + np.diff(halves) / 2).astype(np.float32),  # ties (exact in float32)
        [65504, 65519.996, 65520, 1e6, -1e6, 2.0 ** -25, 2.0 ** -26, 3 * 2.0 ** -26, 1e-30, 0.0, -0.0, np.inf,
         -np.inf],
        rng.standard_normal(2000) * 10.0 ** rng.uniform(-8, 5, 2000)]).astype(np.float32)
    with np.errstate(over="ignore"):  # beyond 65504 rounds to inf, as it should
        want16 = edges.astype(np.float16).view(np.uint16)
    got16 = np.array([emu.lib.sru_test_f2h(float(f)) for f in edges], np.uint16)
    assert np.array_equal(got16, want16), edges[got16 != want16][:5]
    assert np.isnan(np.uint16(emu.lib.sru_test_f2h(float("nan"))).view(np.float16))


@pytest.mark.parametrize("R", [1, 2])
def test_emulated_padding_semantics(emu, R):
    """Padded steps: h = 0, c carried; no gradient there (du = 0, dx = 0)."""
    case = make_case(6, 4, R, 3, 8, ragged=True, seed=3)
    mask = case["mask"]
    h, c = emu_forward(emu, case, "tanh", 1.0)
    g = emu_backward(emu, case, c, "tanh", 1.0)
    pad = mask == 0
    assert pad.any()
    assert np.all(h[pad] == 0) and np.all(g["du"][pad] == 0) and np.all(g["dx"][pad] == 0)
    b = int(np.argmin(mask.sum(0)))  # the shortest sequence (length 0): c stays c0 in both directions
    assert np.all(c[:, b] == case["c0"][b])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("mode", ["all", "mixed"])
@pytest.mark.parametrize("B,R,K,x_dirs", [(3, 2, 3, 1), (1, 1, 3, 1), (1, 2, 4, 1), (3, 1, 4, 1), (3, 2, 3, 2)])
def test_emulated_accumulate_flags(emu, B, R, K, x_dirs, mode, dtype):
    """out = accum ? out + grad : grad, per output; every path (direct, scratch + reduction, dx sum, dx per
    direction)."""
    case = as_dtype(make_case(5, B, R, K, 8, wc=True, ragged=True, seed=B + R + K, x_dirs=x_dirs), dtype)
    _, _, g_ref = reference(case, "tanh", 1.0)
    _, c = emu_forward(emu, case, "tanh", 1.0)
    rng = np.random.default_rng(7)
    shapes = grad_shapes(case["u"].shape, True, x_dirs)
    init = {k: rng.standard_normal(s).astype(dtype) for k, s in shapes.items() if s is not None}
    accum = {k: (mode == "all" or i % 2 == 0) for i, k in enumerate(GRADS)}
    g = emu_backward(emu, case, c, "tanh", 1.0, init=init, accum=accum)
    for k, before in init.items():
        want = g_ref[k] + before if accum[k] else g_ref[k]
        assert max_rel_err(g[k], want) <= TOLS[dtype], k


def test_emulated_dx_with_k4_is_zero(emu):
    """K == 4 does not read x; a dx buffer handed in anyway is zeroed (or left as is when accumulating)."""
    case = make_case(4, 2, 2, 4, 8)
    _, c = emu_forward(emu, case, "tanh", 1.0)
    dx = np.full((4, 2, 8), np.nan, np.float32)
    emu.backward_ptrs(*(addr(case[k]) for k in ("u", "x", "bias", "c0", "wc", "mask")), addr(c),
                      addr(case["dh"]), addr(case["dc"]), 0, addr(dx), 0, 0, 0, shape=case["u"].shape)
    assert np.all(dx == 0)
    dx[...] = 3.0
    emu.backward_ptrs(*(addr(case[k]) for k in ("u", "x", "bias", "c0", "wc", "mask")), addr(c),
                      addr(case["dh"]), addr(case["dc"]), 0, addr(dx), 0, 0, 0, shape=case["u"].shape,
                      accum_dx=True)
    assert np.all(dx == 3.0)


def test_emulated_optional_inputs_and_outputs(emu):
    """dh, dc, c0 null (zeros) and outputs requested one at a time."""
    case = make_case(5, 3, 2, 3, 8, wc=True, ragged=True, seed=11)
    case0 = dict(case, c0=np.zeros_like(case["c0"]))
    a = {k: f64(v) for k, v in case0.items()}
    _, c_ref = reference_forward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"])
    _, c = emu_forward(emu, dict(case, c0=None), "tanh", 1.0)
    assert max_rel_err(c, c_ref) <= TOL
    for dh, dc in ((True, False), (False, True)):
        g_ref = reference_backward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], c_ref,
                                   a["dh"] if dh else None, a["dc"] if dc else None)
        for k in GRADS:
            g = emu_backward(emu, dict(case, c0=None), c, "tanh", 1.0, want=(k,), dh=dh, dc=dc)
            assert set(g) == {k}
            assert max_rel_err(g[k], g_ref[k]) <= TOL, k


def test_emulated_grid_stride_loop(emu):
    """A grid smaller than the work (one block for 200 columns) gives the same results."""
    case = make_case(4, 5, 2, 3, 20, ragged=True, seed=5)
    h_ref, c_ref, g_ref = reference(case, "tanh", 1.0)
    h, c = emu_forward(emu, case, "tanh", 1.0, grid=1)
    assert max_rel_err(h, h_ref) <= TOL and max_rel_err(c, c_ref) <= TOL
    g = emu_backward(emu, case, c, "tanh", 1.0, grid=1)
    for k in g:
        assert max_rel_err(g[k], g_ref[k]) <= TOL, k


def test_emulated_zero_length(emu):
    case = make_case(0, 3, 2, 3, 4)
    h, c = emu_forward(emu, case, "tanh", 1.0)
    assert h.shape == (0, 3, 2, 4)
    g = emu_backward(emu, case, c, "tanh", 1.0)
    assert np.all(g["dc0"] == 0) and np.all(g["dbias"] == 0) and np.all(g["dwc"] == 0)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("x_dirs", [1, 2])
def test_nnabla_adapter_on_emulated_kernels(emu, monkeypatch, dtype, x_dirs):
    """function_forward / function_backward: pointers from NdArray.data_ptr in the context's storage type
    (float16 under the `half` type config), propagate_down and accum; x shared or per direction."""
    nn = pytest.importorskip("nnabla")
    monkeypatch.setattr(sru_cuda, "forward_ptrs", emu.forward_ptrs)
    monkeypatch.setattr(sru_cuda, "backward_ptrs", emu.backward_ptrs)
    L, B, R, K, D = 5, 3, 2, 3, 8
    case = as_dtype(make_case(L, B, R, K, D, wc=True, ragged=True, seed=21, x_dirs=x_dirs), dtype)
    h_ref, c_ref, g_ref = reference(case, "tanh", 1.0)
    ctx = nn.Context([{"float32": "cpu:float", "float16": "cpu:half"}[dtype]], "CpuCachedArray", "0")
    assert sru_cuda.context_dtype(ctx) == np.dtype(dtype)
    tol = TOLS[dtype]
    fn = types.SimpleNamespace(ctx=ctx, dims=(L, B, R, K, D), activation="tanh", scale_x=1.0, x_dirs=x_dirs)
    shapes = {"u": (L, B, R * K * D), "x": (L, B, x_dirs * D), "bias": (R, 2, D), "c0": (B, R * D),
              "weight_c": (R, 2, D), "mask": (L, B)}
    keys = {"u": "u", "x": "x", "bias": "bias", "c0": "c0", "weight_c": "wc", "mask": "mask"}
    inputs = {}
    for name, s in shapes.items():
        inputs[name] = nn.Variable(s, need_grad=name != "mask")
        inputs[name].d = case[keys[name]].reshape(s)
    outputs = [nn.Variable((L, B, R * D)), nn.Variable((L, B, R * D))]
    sru_cuda.function_forward(fn, inputs, outputs)
    assert max_rel_err(outputs[0].d, h_ref.reshape(L, B, R * D)) <= tol
    assert max_rel_err(outputs[1].d, c_ref.reshape(L, B, R * D)) <= tol
    outputs[0].g = case["dh"].reshape(L, B, R * D)
    outputs[1].g = case["dc"].reshape(L, B, R * D)
    init = {name: np.full(s, 2.0, np.float32) for name, s in shapes.items()}
    for name, v in inputs.items():
        v.g = init[name]
    propagate = {"u": True, "x": True, "bias": True, "c0": False, "weight_c": True, "mask": False}
    accum = {"u": False, "x": True, "bias": True, "c0": False, "weight_c": False, "mask": False}
    sru_cuda.function_backward(fn, inputs, outputs, propagate, accum)
    grads = {"u": "du", "x": "dx", "bias": "dbias", "weight_c": "dwc", "c0": "dc0"}
    for name, g in grads.items():
        got = inputs[name].g
        if not propagate[name]:
            assert np.all(got == init[name]), name
            continue
        want = g_ref[g].reshape(shapes[name]) + (init[name] if accum[name] else 0)
        assert max_rel_err(got, want) <= tol, name


# ---------------------------------------------------------------------------------------------------
# Without CuPy, without a device
# ---------------------------------------------------------------------------------------------------


def test_without_cupy_the_error_names_the_extra():
    code = """
import sys
sys.modules["cupy"] = None  # makes `import cupy` raise ImportError, as when it is not installed
from gan_sru import GanSruError
from gan_sru.ops.sru import cuda as sru_cuda
assert not sru_cuda.is_available()
try:
    sru_cuda.forward_ptrs(1, 1, 1, 0, 0, 0, 1, 1, shape=(2, 1, 1, 3, 4))
except sru_cuda.CudaBackendUnavailable as e:
    assert isinstance(e, GanSruError) and isinstance(e, RuntimeError)
    print("MESSAGE:" + str(e))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    msg = out.stdout.split("MESSAGE:", 1)[1]
    for part in ("pip install -e .[cuda]", "nnabla-ext-cuda120", "cupy-cuda12x"):
        assert part in msg


def test_the_cuda_backend_imports_without_nnabla():
    """A GPU machine may have CuPy but no nnabla (nnabla-ext-cuda has no wheel for its Python): the kernels,
    their launch plans, the reference and the bandwidth measurement import without it; the layer still
    imports it when asked for."""
    code = """
import sys
import importlib.util
from gan_sru.ops.sru import bandwidth, cuda, launch, reference
assert "nnabla" not in sys.modules, sorted(m for m in sys.modules if m.startswith("nnabla"))
if importlib.util.find_spec("nnabla") is not None:  # (a GPU machine without nnabla stops here)
    from gan_sru.ops.sru import sru
    assert "nnabla" in sys.modules and callable(sru)
print("OK")
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stderr


def cupy_device_or_none():
    """(cupy, None) when a CUDA device is usable, else (cupy or None, reason)."""
    try:
        import cupy
    except ImportError:
        return None, "CuPy is not installed (pip install -e .[cuda])"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        return cupy, f"CuPy sees no CUDA device ({e})"
    return (cupy, None) if n > 0 else (cupy, "CuPy sees no CUDA device")


def test_without_device_the_error_says_so():
    cupy, reason = cupy_device_or_none()
    if cupy is None or reason is None:
        pytest.skip("needs CuPy on a machine without a usable CUDA device")
    assert not sru_cuda.is_available()
    with pytest.raises(sru_cuda.CudaBackendUnavailable, match="CUDA device"):
        sru_cuda.forward_ptrs(1, 1, 1, 0, 0, 0, 1, 1, shape=(2, 1, 1, 3, 4))


# ---------------------------------------------------------------------------------------------------
# On a CUDA device
# ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cp():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (pip install -e .[cuda])")
    _, reason = cupy_device_or_none()
    if reason is not None:
        pytest.skip(reason)
    return cupy


def to_gpu(cp, case):
    return {k: None if v is None else cp.asarray(v) for k, v in case.items()}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("cfg", CASES, ids=case_id)
def test_cuda_kernels_match_reference(cp, cfg, dtype):
    L, B, R, K, D, wc, ragged, act, scale_x = cfg
    case = as_dtype(make_case(L, B, R, K, D, wc=wc, ragged=ragged), dtype)
    h_ref, c_ref, g_ref = reference(case, act, scale_x)
    a = to_gpu(cp, case)
    h, c = sru_cuda.forward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], act, scale_x)
    assert h.dtype == c.dtype == np.dtype(dtype)
    assert max_rel_err(h.get(), h_ref) <= TOLS[dtype]
    assert max_rel_err(c.get(), c_ref) <= TOLS[dtype]
    g = sru_cuda.backward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], c, a["dh"], a["dc"], act,
                          scale_x)
    assert set(g) == set(GRADS)
    for k in GRADS:
        if g_ref[k] is None:
            assert g[k] is None, k
        else:
            assert g[k].dtype == np.dtype(dtype), k
            assert max_rel_err(g[k].get(), g_ref[k]) <= TOLS[dtype], k


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("cfg", PER_DIRECTION_CASES, ids=str)
def test_cuda_per_direction_skip_matches_reference(cp, cfg, dtype):
    case, act, (h_ref, c_ref, g_ref) = per_direction_case(cfg, dtype)
    L, B, D = cfg[:3]
    a = to_gpu(cp, case)
    h, c = sru_cuda.forward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], act, 1.3)
    assert max_rel_err(h.get(), h_ref) <= TOLS[dtype] and max_rel_err(c.get(), c_ref) <= TOLS[dtype]
    g = sru_cuda.backward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], c, a["dh"], a["dc"], act, 1.3)
    assert g["dx"].shape == (L, B, 2, D)
    for k in GRADS:
        if g_ref[k] is not None:
            assert max_rel_err(g[k].get(), g_ref[k]) <= TOLS[dtype], k


@pytest.mark.gpu
@pytest.mark.parametrize("prefetch", [1, 2, 8])
def test_cuda_prefetch_depths_agree(cp, prefetch, monkeypatch):
    """Other prefetch depths (gpu_speed.py measures them) give the default's results: only the loads move."""
    case = make_case(9, 5, 2, 3, 40, ragged=True, seed=3)
    a = to_gpu(cp, case)

    def run():
        h, c = sru_cuda.forward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"])
        g = sru_cuda.backward(a["u"], a["x"], a["bias"], a["c0"], a["wc"], a["mask"], c, a["dh"], a["dc"])
        return [h.get(), c.get()] + [g[k].get() for k in GRADS]

    want = run()
    monkeypatch.setattr(sru_cuda, "PREFETCH", (prefetch, prefetch))
    for got, ref in zip(run(), want):
        assert max_rel_err(got, ref) <= 1e-6


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("B,R,K", [(3, 2, 3), (1, 1, 3), (1, 2, 4), (3, 1, 4)])
def test_cuda_backward_ptrs_accumulate(cp, B, R, K, accumulate, dtype):
    case = as_dtype(make_case(5, B, R, K, 8, wc=True, ragged=True, seed=B + R + K), dtype)
    _, c_ref, g_ref = reference(case, "tanh", 1.0)
    a = to_gpu(cp, case)
    c = cp.asarray(c_ref.astype(dtype))
    rng = np.random.default_rng(7)
    shapes = grad_shapes(case["u"].shape, True)
    init = {k: rng.standard_normal(s).astype(dtype) for k, s in shapes.items() if s is not None}
    out = {k: cp.asarray(v) for k, v in init.items()}
    sru_cuda.backward_ptrs(*(0 if a[k] is None else a[k].data.ptr for k in ("u", "x", "bias", "c0", "wc", "mask")),
                           c.data.ptr, a["dh"].data.ptr, a["dc"].data.ptr,
                           *(out[k].data.ptr if k in out else 0 for k in GRADS), shape=case["u"].shape,
                           dtype=dtype, **{f"accum_{k}": accumulate for k in GRADS})
    cp.cuda.Stream.null.synchronize()
    for k, got in out.items():
        want = g_ref[k] + init[k] if accumulate else g_ref[k]
        assert max_rel_err(got.get(), want) <= TOLS[dtype], k


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_cuda_bandwidth_benchmark_runs(cp, dtype):
    r = bandwidth.bandwidth_benchmark(L=16, B=8, D=256, warmup=1, repeat=2, dtype=dtype)
    for k in ("forward_gbps", "backward_gbps", "copy_gbps", "forward_ms", "backward_ms", "copy_ms"):
        assert r[k] > 0, k
    itemsize = np.dtype(dtype).itemsize
    assert r["forward_bytes"] == bandwidth.traffic_bytes((16, 8, 1, 3, 256), itemsize=itemsize)[0]
