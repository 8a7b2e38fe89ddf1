"""CUDA backend of the fused SRU recurrence: the kernels of `sru.cu` beside it, launched through CuPy.

The kernels follow the "SRU recurrence kernel contract" that `gan_sru.ops.sru.reference` implements in NumPy
(float32, C-contiguous, time-major; L steps, B batch, R directions, K projections, D units per direction):

    u (L, B, R, K, D), x (L, B, D) (K == 3 only), bias (R, 2, D), c0 (B, R, D), wc (R, 2, D) or None,
    mask (L, B) or None (nonzero = valid step, right padding), h and c (L, B, R, D).

Three levels, each built on the one below:

* `function_forward` / `function_backward`: what `gan_sru.ops.sru.SRURecurrence` calls on a CUDA context;
  pointers come from `NdArray.data_ptr(np.float32, ctx, write_only)` and nnabla's `accum` is honoured.
* `forward_ptrs` / `backward_ptrs`: raw device pointers (Python ints, 0 = null) plus the sizes.
* `forward` / `backward`: CuPy arrays in and out, the same signatures and return values as
  `reference_forward` / `reference_backward`.

The source is compiled with NVRTC (`cupy.RawModule`) on first use, once per device. Every kernel runs on
the legacy default stream (`cupy.cuda.Stream.null`, handle 0), the stream nnabla-ext-cuda launches on, so
they are ordered with nnabla's own kernels without any synchronisation. CuPy is imported lazily: this
module imports without it, and the first use raises `CudaBackendUnavailable` naming the extra to install.

Over ~350 lines on purpose: the launch plans, the argument checks and the nnabla adapter describe one set of
kernels and change together with sru.cu.
"""
import math
import os
from typing import NamedTuple

import numpy as np

from gan_sru import GanSruError

KERNEL_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sru.cu")
BLOCK = 128  # threads per block; must equal SRU_BLOCK (the __launch_bounds__) in sru.cu
ACTIVATION_CODES = {"identity": 0, "tanh": 1}  # the kernels' `use_tanh` flag
KERNEL_NAMES = ("sru_fwd", "sru_bwd", "sru_reduce_batch", "sru_sum_dirs")
INSTALL_HINT = "pip install -e .[cuda]` (nnabla-ext-cuda120 and cupy-cuda12x)"


class CudaBackendUnavailable(GanSruError, RuntimeError):
    """CuPy, a CUDA device or NVRTC is missing, so the CUDA kernels of the SRU recurrence cannot run."""


class SruArgumentError(GanSruError, ValueError):
    """Sizes, flags or pointers handed to the CUDA recurrence do not fit the kernel contract."""


class Launch(NamedTuple):
    """One kernel launch: `threads` threads in blocks of BLOCK; `args` are NumPy scalars whose dtypes are
    the C parameter types (np.uint64 for pointers, np.int32 for int, np.float32 for float)."""

    kernel: str
    threads: int
    args: tuple


# ---------------------------------------------------------------------------------------------------
# CuPy, the compiled module, and launching
# ---------------------------------------------------------------------------------------------------

_MODULES = {}  # device id -> {kernel name: cupy.RawKernel}


def _cupy():
    """The cupy module, or CudaBackendUnavailable saying which extra to install."""
    try:
        import cupy
    except ImportError as e:
        raise CudaBackendUnavailable(
            f"The CUDA backend of the SRU recurrence (gan_sru/sru_cuda.py) needs CuPy, which cannot be "
            f"imported here ({e}). Install the CUDA extra: `{INSTALL_HINT}."
        ) from e
    return cupy


def _device_id(cupy, device_id):
    """The device to launch on (the current one for None), after checking that a CUDA device exists."""
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        count, why = 0, str(e)
    else:
        why = "no CUDA device found"
    if count == 0:
        raise CudaBackendUnavailable(
            f"The CUDA backend of the SRU recurrence needs a CUDA device; CuPy reports: {why}. "
            f"On a machine with an NVIDIA GPU and driver, install the CUDA extra: `{INSTALL_HINT}."
        )
    device_id = cupy.cuda.runtime.getDevice() if device_id is None else int(device_id)
    if not 0 <= device_id < count:
        raise SruArgumentError(f"device_id={device_id}: expected 0..{count - 1} ({count} CUDA devices)")
    return device_id


def is_available():
    """True when CuPy imports and sees at least one CUDA device (the kernels are not compiled here)."""
    try:
        cupy = _cupy()
    except CudaBackendUnavailable:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except cupy.cuda.runtime.CUDARuntimeError:  # no driver, or one too old for CuPy's CUDA runtime
        return False


def kernel_source():
    with open(KERNEL_PATH, encoding="utf-8") as f:
        return f.read()


def _kernels(cupy, device_id):
    """{name: RawKernel} of sru.cu compiled for `device_id` (compiled once per device, then cached)."""
    kernels = _MODULES.get(device_id)
    if kernels is None:
        with cupy.cuda.Device(device_id):
            module = cupy.RawModule(code=kernel_source(), options=("-std=c++11",))
            try:
                kernels = {name: module.get_function(name) for name in KERNEL_NAMES}
            except cupy.cuda.compiler.CompileException:
                raise  # an error in sru.cu itself: a bug, not a missing backend
            except Exception as e:  # NVRTC library missing or unusable
                raise CudaBackendUnavailable(
                    f"Compiling {KERNEL_PATH} with NVRTC through CuPy failed on device {device_id}: {e}. "
                    f"NVRTC comes with the CUDA toolkit or the nvidia-cuda-nvrtc-cu12 wheel; the CUDA extra "
                    f"is `{INSTALL_HINT}."
                ) from e
        _MODULES[device_id] = kernels
    return kernels


def _grid(threads):
    return min(math.ceil(threads / BLOCK), 2**31 - 1)  # the kernels loop with a grid stride beyond this


def _run(cupy, device_id, launches):
    """Launch `launches` in order on the legacy default stream of `device_id`."""
    kernels = _kernels(cupy, device_id)
    with cupy.cuda.Device(device_id), cupy.cuda.Stream.null:
        for launch in launches:
            kernels[launch.kernel]((_grid(launch.threads),), (BLOCK,), launch.args)


# ---------------------------------------------------------------------------------------------------
# Launch plans (pure Python: the same plans run on CuPy here and on the host emulator in the tests)
# ---------------------------------------------------------------------------------------------------


def _ptr(name, p):
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 0:
        raise SruArgumentError(f"pointer {name}={p!r}: expected a device address as a Python int (0 = null)")
    return np.uint64(p)


def _check(shape, activation, ptrs, required):
    """Validated (L, B, R, K, D), activation code and {name: np.uint64} pointers."""
    try:
        L, B, R, K, D = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise SruArgumentError(f"shape={shape!r}: expected (L, B, R, K, D), the shape of u") from None
    if R not in (1, 2) or K not in (3, 4) or min(L, B, D) < 0:
        raise SruArgumentError(f"shape={shape!r}: expected R in (1, 2), K in (3, 4) and sizes >= 0")
    if L * B * R * K * D >= 2**62 or L * B >= 2**31 or B * R * D >= 2**31 or R * 2 * D >= 2**31:
        raise SruArgumentError(f"shape={shape!r}: too large for the kernels' 32-bit loop bounds")
    if activation not in ACTIVATION_CODES:
        raise SruArgumentError(f"activation={activation!r}: expected one of {sorted(ACTIVATION_CODES)}")
    p = {name: _ptr(name, v) for name, v in ptrs.items()}
    needed = [n for n in required if n != "x" or K == 3]
    missing = [n for n in needed if p[n] == 0]
    if missing:
        raise SruArgumentError(f"null pointer for {', '.join(missing)} with shape={shape!r}: required")
    return (L, B, R, K, D), ACTIVATION_CODES[activation], p


def forward_launches(u, x, bias, c0, wc, mask, h, c, *, shape, activation="tanh", scale_x=1.0):
    """The launch plan of the forward (see `forward_ptrs`)."""
    (L, B, R, K, D), act, p = _check(
        shape, activation, {"u": u, "x": x, "bias": bias, "c0": c0, "wc": wc, "mask": mask, "h": h, "c": c},
        required=("u", "x", "bias", "h", "c"))
    if B * R * D == 0:
        return []
    i32 = np.int32
    args = (p["u"], p["x"] if K == 3 else np.uint64(0), p["bias"], p["wc"], p["c0"], p["mask"], p["h"],
            p["c"], i32(L), i32(B), i32(R), i32(K), i32(D), i32(act), np.float32(scale_x))
    return [Launch("sru_fwd", B * R * D, args)]


def backward_launches(u, x, bias, c0, wc, mask, c, dh, dc, du, dx, dbias, dwc, dc0, *, shape,
                      activation="tanh", scale_x=1.0, accum_du=False, accum_dx=False, accum_dbias=False,
                      accum_dwc=False, accum_dc0=False, temp=None):
    """The launch plan of the backward (see `backward_ptrs`).

    `temp(n)` must return the address of a float32 scratch buffer of n elements that stays alive until the
    plan has run; it is called for the per-direction dx (K == 3, R == 2) and the per-batch-row dbias/dwc
    partials (B != 1).
    """
    (L, B, R, K, D), act, p = _check(
        shape, activation,
        {"u": u, "x": x, "bias": bias, "c0": c0, "wc": wc, "mask": mask, "c": c, "dh": dh, "dc": dc,
         "du": du, "dx": dx, "dbias": dbias, "dwc": dwc, "dc0": dc0},
        required=("u", "x", "bias", "c"))
    i32, null = np.int32, np.uint64(0)
    launches = []
    cols = B * R * D
    # Where the main kernel writes dxs and the partials, and with which accumulate flag: straight into the
    # outputs when no reduction is needed (R == 1 for dx, B == 1 for dbias/dwc), else into scratch.
    dxs, acc_dxs = null, 0
    if K == 3 and p["dx"]:
        dxs, acc_dxs = (p["dx"], int(accum_dx)) if R == 1 else (_ptr("temp", temp(L * B * R * D)), 0)
    parts = {}
    for name, accum in (("dbias", accum_dbias), ("dwc", accum_dwc)):
        if not p[name]:
            parts[name] = (null, 0)
        elif B == 1:
            parts[name] = (p[name], int(accum))
        else:
            parts[name] = (_ptr("temp", temp(B * R * 2 * D)), 0)
    if cols > 0:
        args = (p["u"], p["x"] if K == 3 else null, p["bias"], p["wc"], p["c0"], p["mask"], p["c"], p["dh"],
                p["dc"], p["du"], dxs, parts["dbias"][0], parts["dwc"][0], p["dc0"],
                i32(L), i32(B), i32(R), i32(K), i32(D), i32(act), np.float32(scale_x),
                i32(accum_du), i32(acc_dxs), i32(parts["dbias"][1]), i32(parts["dwc"][1]), i32(accum_dc0))
        launches.append(Launch("sru_bwd", cols, args))
    if p["dx"] and L * B * D > 0:
        if K == 3 and R == 2:
            launches.append(Launch("sru_sum_dirs", L * B * D,
                                   (dxs, p["dx"], i32(L * B), i32(R), i32(D), i32(accum_dx))))
        elif K == 4 and not accum_dx:  # x is not read when K == 4: its gradient is 0 (a sum over no r)
            launches.append(Launch("sru_sum_dirs", L * B * D,
                                   (null, p["dx"], i32(L * B), i32(0), i32(D), i32(0))))
    for name, accum in (("dbias", accum_dbias), ("dwc", accum_dwc)):
        if p[name] and B != 1 and R * 2 * D > 0:
            launches.append(Launch("sru_reduce_batch", R * 2 * D,
                                   (parts[name][0], p[name], i32(B), i32(R * 2 * D), i32(accum))))
    return launches


# ---------------------------------------------------------------------------------------------------
# Raw pointers
# ---------------------------------------------------------------------------------------------------


def forward_ptrs(u, x, bias, c0, wc, mask, h, c, *, shape, activation="tanh", scale_x=1.0, device_id=None):
    """Forward recurrence on raw device pointers (Python ints; 0 = null), launched on the null stream.

    Args:
        u, x, bias, c0, wc, mask: input addresses of float32 C-contiguous buffers laid out as in the module
            docstring; x is read only when K == 3 (0 allowed when K == 4), c0 = 0 means zeros, wc = 0 the
            2017 form (v = 0), mask = 0 every step valid.
        h, c: output addresses, (L, B, R, D) each, fully overwritten.
        shape: (L, B, R, K, D), the shape of u.
        activation: "tanh" or "identity".  scale_x: factor on the skip input x'.
        device_id: CUDA device owning the buffers (None = CuPy's current device).
    """
    cupy = _cupy()
    launches = forward_launches(u, x, bias, c0, wc, mask, h, c, shape=shape, activation=activation,
                                scale_x=scale_x)
    _run(cupy, _device_id(cupy, device_id), launches)


def backward_ptrs(u, x, bias, c0, wc, mask, c, dh, dc, du, dx, dbias, dwc, dc0, *, shape, activation="tanh",
                  scale_x=1.0, accum_du=False, accum_dx=False, accum_dbias=False, accum_dwc=False,
                  accum_dc0=False, device_id=None):
    """Backward recurrence on raw device pointers (Python ints; 0 = null), launched on the null stream.

    Args:
        u, x, bias, c0, wc, mask: the forward's inputs (as in `forward_ptrs`).
        c: the forward's c output (L, B, R, D).
        dh, dc: gradients arriving at h and at c (L, B, R, D); 0 = zeros.
        du (L, B, R, K, D), dx (L, B, D), dbias (R, 2, D), dwc (R, 2, D), dc0 (B, R, D): output addresses;
            0 = that gradient is not wanted. dwc is the gradient of v even when wc = 0. dx with K == 4 is
            zero (x is not read).
        accum_*: add to the output (nnabla's `accum`) instead of overwriting it.
        shape, activation, scale_x, device_id: as in `forward_ptrs`.
    Scratch buffers (the per-direction dx for R == 2, the per-batch-row dbias/dwc partials for B > 1)
    come from CuPy's memory pool and go back to it when the kernels are queued (stream-ordered reuse).
    """
    cupy = _cupy()
    device_id = _device_id(cupy, device_id)
    scratch = []

    def temp(n):
        scratch.append(cupy.empty(n, dtype=cupy.float32))
        return scratch[-1].data.ptr

    with cupy.cuda.Device(device_id), cupy.cuda.Stream.null:
        launches = backward_launches(
            u, x, bias, c0, wc, mask, c, dh, dc, du, dx, dbias, dwc, dc0, shape=shape, activation=activation,
            scale_x=scale_x, accum_du=accum_du, accum_dx=accum_dx, accum_dbias=accum_dbias,
            accum_dwc=accum_dwc, accum_dc0=accum_dc0, temp=temp)
        _run(cupy, device_id, launches)
        del scratch[:]


# ---------------------------------------------------------------------------------------------------
# CuPy arrays (the reference's signatures)
# ---------------------------------------------------------------------------------------------------


def _shape_of(u):
    if u.ndim != 5:
        raise SruArgumentError(f"u has shape {u.shape}: expected (L, B, R, K, D)")
    return tuple(int(s) for s in u.shape)


def _expect(name, a, shape):
    if a is not None and tuple(a.shape) != shape:
        raise SruArgumentError(f"{name} has shape {tuple(a.shape)}: expected {shape}")


def _f32(cupy, a):
    return None if a is None else cupy.ascontiguousarray(a, dtype=cupy.float32)


def _inputs(cupy, u, x, bias, c0, wc, mask):
    """float32 C-contiguous copies (or the arrays themselves) with their shapes checked."""
    L, B, R, K, D = _shape_of(u)
    if K == 3 and x is None:
        raise SruArgumentError(f"x is None but u has K = 3 projections: expected x of shape {(L, B, D)}")
    for name, a, s in (("x", x if K == 3 else None, (L, B, D)), ("bias", bias, (R, 2, D)),
                       ("c0", c0, (B, R, D)), ("wc", wc, (R, 2, D)), ("mask", mask, (L, B))):
        _expect(name, a, s)
    return (L, B, R, K, D), [_f32(cupy, a) for a in (u, x if K == 3 else None, bias, c0, wc, mask)]


def _addr(a):
    return 0 if a is None else a.data.ptr


def forward(u, x, bias, c0, wc=None, mask=None, activation="tanh", scale_x=1.0):
    """`reference_forward` on the GPU: CuPy arrays in (any float dtype), float32 (h, c) out, (L, B, R, D)."""
    cupy = _cupy()
    with cupy.cuda.Device(u.device.id), cupy.cuda.Stream.null:
        shape, a = _inputs(cupy, u, x, bias, c0, wc, mask)
        L, B, R, _, D = shape
        h = cupy.empty((L, B, R, D), dtype=cupy.float32)
        c = cupy.empty((L, B, R, D), dtype=cupy.float32)
        forward_ptrs(*(_addr(v) for v in a), h.data.ptr, c.data.ptr, shape=shape, activation=activation,
                     scale_x=scale_x, device_id=u.device.id)
    return h, c


def backward(u, x, bias, c0, wc, mask, c, dh, dc, activation="tanh", scale_x=1.0):
    """`reference_backward` on the GPU. dh, dc (L, B, R, D) may be None (zeros).

    Returns dict(du (L,B,R,K,D), dx (L,B,D) or None (K == 4), dbias (R,2,D), dwc (R,2,D) or None (wc None),
    dc0 (B,R,D)), all float32 CuPy arrays.
    """
    cupy = _cupy()
    with cupy.cuda.Device(u.device.id), cupy.cuda.Stream.null:
        shape, a = _inputs(cupy, u, x, bias, c0, wc, mask)
        L, B, R, K, D = shape
        state = []
        for name, v in (("c", c), ("dh", dh), ("dc", dc)):
            _expect(name, v, (L, B, R, D))
            state.append(_f32(cupy, v))
        f32 = cupy.float32
        g = {"du": cupy.empty((L, B, R, K, D), f32), "dx": cupy.empty((L, B, D), f32) if K == 3 else None,
             "dbias": cupy.empty((R, 2, D), f32), "dwc": None if wc is None else cupy.empty((R, 2, D), f32),
             "dc0": cupy.empty((B, R, D), f32)}
        backward_ptrs(*(_addr(v) for v in a), *(_addr(v) for v in state),
                      *(_addr(g[k]) for k in ("du", "dx", "dbias", "dwc", "dc0")),
                      shape=shape, activation=activation, scale_x=scale_x, device_id=u.device.id)
    return g


# ---------------------------------------------------------------------------------------------------
# nnabla (called by gan_sru.ops.sru.SRURecurrence on a CUDA context)
# ---------------------------------------------------------------------------------------------------


def function_forward(fn, inputs, outputs):
    """SRURecurrence.forward_impl on CUDA. `inputs`: {name: nn.Variable} with names u, x (K == 3), bias, c0,
    weight_c, mask (the optional ones may be absent); `fn` carries dims (L, B, R, K, D), activation,
    scale_x and ctx. Writes outputs[0] (h) and outputs[1] (c), both (L, B, R*D)."""
    ctx = fn.ctx

    def data(name):
        return inputs[name].data.data_ptr(np.float32, ctx, False) if name in inputs else 0

    h = outputs[0].data.data_ptr(np.float32, ctx, True)
    c = outputs[1].data.data_ptr(np.float32, ctx, True)
    forward_ptrs(data("u"), data("x"), data("bias"), data("c0"), data("weight_c"), data("mask"), h, c,
                 shape=fn.dims, activation=fn.activation, scale_x=fn.scale_x, device_id=int(ctx.device_id))


def function_backward(fn, inputs, outputs, propagate_down, accum):
    """SRURecurrence.backward_impl on CUDA: gradients of the inputs whose `propagate_down` is set, added to
    their grad when `accum` is set (both dicts keyed by input name). The mask gets no gradient."""
    ctx = fn.ctx

    def data(name):
        return inputs[name].data.data_ptr(np.float32, ctx, False) if name in inputs else 0

    def grad(name):
        if name not in inputs or not propagate_down.get(name):
            return 0
        return inputs[name].grad.data_ptr(np.float32, ctx, not accum.get(name))  # overwritten: no sync

    def acc(name):
        return bool(accum.get(name))

    backward_ptrs(
        data("u"), data("x"), data("bias"), data("c0"), data("weight_c"), data("mask"),
        outputs[1].data.data_ptr(np.float32, ctx, False),
        outputs[0].grad.data_ptr(np.float32, ctx, False), outputs[1].grad.data_ptr(np.float32, ctx, False),
        grad("u"), grad("x"), grad("bias"), grad("weight_c"), grad("c0"),
        shape=fn.dims, activation=fn.activation, scale_x=fn.scale_x,
        accum_du=acc("u"), accum_dx=acc("x"), accum_dbias=acc("bias"), accum_dwc=acc("weight_c"),
        accum_dc0=acc("c0"), device_id=int(ctx.device_id))
