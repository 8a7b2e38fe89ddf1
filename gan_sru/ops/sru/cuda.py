"""CUDA backend of the fused SRU recurrence: the kernels of `sru.cu` beside it, launched through CuPy.

The kernels follow the "SRU recurrence kernel contract" that `gan_sru.ops.sru.reference` implements in NumPy
(C-contiguous, time-major; L steps, B batch, R directions, K projections, D units per direction), in one of two
storage types, float32 or float16 (`dtype`; the arithmetic is float32 in both):

    u (L, B, R, K, D), x (L, B, D) or (L, B, R, D) (K == 3 only; `x_dirs` 1 or R: every direction reads the
    one x, or direction r reads x[:, :, r]), bias (R, 2, D), c0 (B, R, D), wc (R, 2, D) or None,
    mask (L, B) or None (nonzero = valid step, right padding), h and c (L, B, R, D).

Three levels, each built on the one below:

* `function_forward` / `function_backward`: what `gan_sru.ops.sru.SRURecurrence` calls on a CUDA context;
  pointers come from `NdArray.data_ptr(dtype, ctx, write_only)` (float16 under nnabla's `half` type config,
  else float32) and nnabla's `accum` is honoured.
* `forward_ptrs` / `backward_ptrs`: raw device pointers (Python ints, 0 = null) plus the sizes.
* `forward` / `backward`: CuPy arrays in and out, the same signatures and return values as
  `reference_forward` / `reference_backward`; float16 when u is float16, else float32.

The source is compiled with NVRTC (`cupy.RawModule`) on first use, once per device and PREFETCH. Every kernel runs on
the legacy default stream (`cupy.cuda.Stream.null`, handle 0), the stream nnabla-ext-cuda launches on, so
they are ordered with nnabla's own kernels without any synchronisation. CuPy is imported lazily: this
module imports without it, and the first use raises `CudaBackendUnavailable` naming the extra to install.

The launch plans (which kernels, arguments, threads; pure Python, also run by the tests' host emulation) are
in `launch.py` and re-exported here.
"""
import os

import numpy as np

from gan_sru import GanSruError

# re-exported: the launch plans are part of this backend's interface (the tests use them through this module)
from .launch import BLOCK, DTYPES, KERNEL_NAMES, SruArgumentError, backward_launches, forward_launches, launch_grid  # noqa: F401

KERNEL_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sru.cu")
# Steps whose loads each thread keeps in flight, (forward, backward): SRU_PREFETCH_FWD / _BWD in sru.cu. Chosen on
# an H200 by benchmarks/gpu_speed.py's sweep (the backward holds more reads a step, and more registers).
PREFETCH = (8, 4)
INSTALL_HINT = "pip install -e .[cuda]` (nnabla-ext-cuda120 and cupy-cuda12x)"


class CudaBackendUnavailable(GanSruError, RuntimeError):
    """CuPy, a CUDA device or NVRTC is missing, so the CUDA kernels of the SRU recurrence cannot run."""


# ---------------------------------------------------------------------------------------------------
# CuPy, the compiled module, and launching
# ---------------------------------------------------------------------------------------------------

_MODULES = {}  # (device id, PREFETCH) -> {kernel name: cupy.RawKernel}


def cupy_module():
    """The cupy module, or CudaBackendUnavailable saying which extra to install."""
    try:
        import cupy
    except ImportError as e:
        raise CudaBackendUnavailable(
            f"The CUDA backend of the SRU recurrence (gan_sru/sru_cuda.py) needs CuPy, which cannot be "
            f"imported here ({e}). Install the CUDA extra: `{INSTALL_HINT}."
        ) from e
    return cupy


def current_device_id(cupy, device_id):
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
        cupy = cupy_module()
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
    """{name: RawKernel} of sru.cu compiled for `device_id` (once per device and PREFETCH, then cached)."""
    key = (device_id, tuple(int(p) for p in PREFETCH))
    kernels = _MODULES.get(key)
    if kernels is None:
        with cupy.cuda.Device(device_id):
            module = cupy.RawModule(code=kernel_source(), options=(
                "-std=c++11", f"-DSRU_PREFETCH_FWD={key[1][0]}", f"-DSRU_PREFETCH_BWD={key[1][1]}"))
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
        _MODULES[key] = kernels
    return kernels


def _run(cupy, device_id, launches):
    """Launch `launches` in order on the legacy default stream of `device_id`."""
    kernels = _kernels(cupy, device_id)
    with cupy.cuda.Device(device_id), cupy.cuda.Stream.null:
        for launch in launches:
            kernels[launch.kernel]((launch_grid(launch.threads),), (BLOCK,), launch.args)


# ---------------------------------------------------------------------------------------------------
# Raw pointers
# ---------------------------------------------------------------------------------------------------


def forward_ptrs(u, x, bias, c0, wc, mask, h, c, *, shape, activation="tanh", scale_x=1.0, device_id=None,
                 dtype="float32", x_dirs=1):
    """Forward recurrence on raw device pointers (Python ints; 0 = null), launched on the null stream.

    Args:
        u, x, bias, c0, wc, mask: input addresses of `dtype` C-contiguous buffers laid out as in the module
            docstring; x is read only when K == 3 (0 allowed when K == 4), c0 = 0 means zeros, wc = 0 the
            2017 form (v = 0), mask = 0 every step valid.
        h, c: output addresses, (L, B, R, D) each, fully overwritten.
        shape: (L, B, R, K, D), the shape of u.
        activation: "tanh" or "identity".  scale_x: factor on the skip input x'.
        device_id: CUDA device owning the buffers (None = CuPy's current device).
        dtype: the storage type of every buffer, "float32" or "float16".
        x_dirs: 1, x is (L, B, D) and every direction reads it, or R, x is (L, B, R, D) and direction r
            reads x[:, :, r].
    """
    cupy = cupy_module()
    launches = forward_launches(u, x, bias, c0, wc, mask, h, c, shape=shape, activation=activation,
                                scale_x=scale_x, dtype=dtype, x_dirs=x_dirs)
    _run(cupy, current_device_id(cupy, device_id), launches)


def backward_ptrs(u, x, bias, c0, wc, mask, c, dh, dc, du, dx, dbias, dwc, dc0, *, shape, activation="tanh",
                  scale_x=1.0, accum_du=False, accum_dx=False, accum_dbias=False, accum_dwc=False,
                  accum_dc0=False, device_id=None, dtype="float32", x_dirs=1):
    """Backward recurrence on raw device pointers (Python ints; 0 = null), launched on the null stream.

    Args:
        u, x, bias, c0, wc, mask: the forward's inputs (as in `forward_ptrs`).
        c: the forward's c output (L, B, R, D).
        dh, dc: gradients arriving at h and at c (L, B, R, D); 0 = zeros.
        du (L, B, R, K, D), dx (x's shape), dbias (R, 2, D), dwc (R, 2, D), dc0 (B, R, D): output addresses;
            0 = that gradient is not wanted. dwc is the gradient of v even when wc = 0. dx with K == 4 is
            zero (x is not read).
        accum_*: add to the output (nnabla's `accum`) instead of overwriting it.
        shape, activation, scale_x, device_id, dtype, x_dirs: as in `forward_ptrs`.
    Scratch buffers (the per-direction dx of a shared x for R == 2, the per-batch-row dbias/dwc partials) come from
    CuPy's memory pool and go back to it when the kernels are queued (stream-ordered reuse).
    """
    cupy = cupy_module()
    device_id = current_device_id(cupy, device_id)
    scratch = []

    def temp(n, dtype):
        scratch.append(cupy.empty(n, dtype=dtype))
        return scratch[-1].data.ptr

    with cupy.cuda.Device(device_id), cupy.cuda.Stream.null:
        launches = backward_launches(
            u, x, bias, c0, wc, mask, c, dh, dc, du, dx, dbias, dwc, dc0, shape=shape, activation=activation,
            scale_x=scale_x, accum_du=accum_du, accum_dx=accum_dx, accum_dbias=accum_dbias,
            accum_dwc=accum_dwc, accum_dc0=accum_dc0, temp=temp, dtype=dtype, x_dirs=x_dirs)
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


def _storage(u):
    """The storage type the kernels run in for an input u: float16 for float16, else float32."""
    return "float16" if u.dtype == np.float16 else "float32"


def _as(cupy, a, dtype):
    return None if a is None else cupy.ascontiguousarray(a, dtype=dtype)


def _inputs(cupy, u, x, bias, c0, wc, mask):
    """C-contiguous copies (or the arrays themselves) in u's storage type, with their shapes checked, and
    x_dirs (R for an (L, B, R, D) x, else 1)."""
    L, B, R, K, D = _shape_of(u)
    if K == 3 and x is None:
        raise SruArgumentError(f"x is None but u has K = 3 projections: expected x of shape {(L, B, D)}")
    x_dirs = R if K == 3 and R > 1 and tuple(x.shape) == (L, B, R, D) else 1
    for name, a, s in (("x", x if K == 3 else None, (L, B, D) if x_dirs == 1 else (L, B, R, D)),
                       ("bias", bias, (R, 2, D)), ("c0", c0, (B, R, D)), ("wc", wc, (R, 2, D)),
                       ("mask", mask, (L, B))):
        _expect(name, a, s)
    dtype = _storage(u)
    return (L, B, R, K, D), [_as(cupy, a, dtype) for a in (u, x if K == 3 else None, bias, c0, wc, mask)], x_dirs


def device_addr(a):
    return 0 if a is None else a.data.ptr


def forward(u, x, bias, c0, wc=None, mask=None, activation="tanh", scale_x=1.0):
    """`reference_forward` on the GPU: CuPy arrays in (any float dtype), (h, c) out, (L, B, R, D), float16
    when u is float16 (the float16 kernels: every input is read as float16), else float32."""
    cupy = cupy_module()
    with cupy.cuda.Device(u.device.id), cupy.cuda.Stream.null:
        shape, a, x_dirs = _inputs(cupy, u, x, bias, c0, wc, mask)
        L, B, R, _, D = shape
        dtype = _storage(u)
        h = cupy.empty((L, B, R, D), dtype=dtype)
        c = cupy.empty((L, B, R, D), dtype=dtype)
        forward_ptrs(*(device_addr(v) for v in a), h.data.ptr, c.data.ptr, shape=shape, activation=activation,
                     scale_x=scale_x, device_id=u.device.id, dtype=dtype, x_dirs=x_dirs)
    return h, c


def backward(u, x, bias, c0, wc, mask, c, dh, dc, activation="tanh", scale_x=1.0):
    """`reference_backward` on the GPU. dh, dc (L, B, R, D) may be None (zeros).

    Returns dict(du (L,B,R,K,D), dx (x's shape) or None (K == 4), dbias (R,2,D), dwc (R,2,D) or None (wc None),
    dc0 (B,R,D)): CuPy arrays, float16 when u is float16, else float32.
    """
    cupy = cupy_module()
    with cupy.cuda.Device(u.device.id), cupy.cuda.Stream.null:
        shape, a, x_dirs = _inputs(cupy, u, x, bias, c0, wc, mask)
        L, B, R, K, D = shape
        dtype = _storage(u)
        state = []
        for name, v in (("c", c), ("dh", dh), ("dc", dc)):
            _expect(name, v, (L, B, R, D))
            state.append(_as(cupy, v, dtype))
        g = {"du": cupy.empty((L, B, R, K, D), dtype), "dx": cupy.empty(x.shape, dtype) if K == 3 else None,
             "dbias": cupy.empty((R, 2, D), dtype), "dwc": None if wc is None else cupy.empty((R, 2, D), dtype),
             "dc0": cupy.empty((B, R, D), dtype)}
        backward_ptrs(*(device_addr(v) for v in a), *(device_addr(v) for v in state),
                      *(device_addr(g[k]) for k in ("du", "dx", "dbias", "dwc", "dc0")),
                      shape=shape, activation=activation, scale_x=scale_x, device_id=u.device.id, dtype=dtype,
                      x_dirs=x_dirs)
    return g


# ---------------------------------------------------------------------------------------------------
# nnabla (called by gan_sru.ops.sru.SRURecurrence on a CUDA context)
# ---------------------------------------------------------------------------------------------------


def context_dtype(ctx):
    """The NumPy storage type of an nnabla context: float16 under the `half` type config, else float32."""
    first = ctx.backend[0] if ctx.backend else ""
    return np.float16 if first.split(":")[-1] == "half" else np.float32


def function_forward(fn, inputs, outputs):
    """SRURecurrence.forward_impl on CUDA. `inputs`: {name: nn.Variable} with names u, x (K == 3), bias, c0,
    weight_c, mask (the optional ones may be absent); `fn` carries dims (L, B, R, K, D), x_dirs, activation,
    scale_x and ctx. Writes outputs[0] (h) and outputs[1] (c), both (L, B, R*D)."""
    ctx = fn.ctx
    dtype = context_dtype(ctx)

    def data(name):
        return inputs[name].data.data_ptr(dtype, ctx, False) if name in inputs else 0

    h = outputs[0].data.data_ptr(dtype, ctx, True)
    c = outputs[1].data.data_ptr(dtype, ctx, True)
    forward_ptrs(data("u"), data("x"), data("bias"), data("c0"), data("weight_c"), data("mask"), h, c,
                 shape=fn.dims, activation=fn.activation, scale_x=fn.scale_x, device_id=int(ctx.device_id),
                 dtype=np.dtype(dtype).name, x_dirs=fn.x_dirs)


def function_backward(fn, inputs, outputs, propagate_down, accum):
    """SRURecurrence.backward_impl on CUDA: gradients of the inputs whose `propagate_down` is set, added to
    their grad when `accum` is set (both dicts keyed by input name). The mask gets no gradient."""
    ctx = fn.ctx
    dtype = context_dtype(ctx)

    def data(name):
        return inputs[name].data.data_ptr(dtype, ctx, False) if name in inputs else 0

    def grad(name):
        if name not in inputs or not propagate_down.get(name):
            return 0
        return inputs[name].grad.data_ptr(dtype, ctx, not accum.get(name))  # overwritten: no sync

    def acc(name):
        return bool(accum.get(name))

    backward_ptrs(
        data("u"), data("x"), data("bias"), data("c0"), data("weight_c"), data("mask"),
        outputs[1].data.data_ptr(dtype, ctx, False),
        outputs[0].grad.data_ptr(dtype, ctx, False), outputs[1].grad.data_ptr(dtype, ctx, False),
        grad("u"), grad("x"), grad("bias"), grad("weight_c"), grad("c0"),
        shape=fn.dims, activation=fn.activation, scale_x=fn.scale_x,
        accum_du=acc("u"), accum_dx=acc("x"), accum_dbias=acc("bias"), accum_dwc=acc("weight_c"),
        accum_dc0=acc("c0"), device_id=int(ctx.device_id), dtype=np.dtype(dtype).name, x_dirs=fn.x_dirs)
