"""Launch plans of the SRU's CUDA kernels (`sru.cu`): which kernels, with which arguments and how many threads.

Pure Python and NumPy: `cuda.py` runs these plans through CuPy on a device, and the tests run the same plans
on the host emulation of the kernels. Arguments are NumPy scalars whose dtypes are the kernels' C parameter
types; pointers are Python ints (0 = null).
"""
import math
from typing import NamedTuple

import numpy as np

from gan_sru import GanSruError

BLOCK = 128  # threads per block; must equal SRU_BLOCK (the __launch_bounds__) in sru.cu
ACTIVATION_CODES = {"identity": 0, "tanh": 1}  # the kernels' `use_tanh` flag
DTYPES = {"float32": "", "float16": "_f16"}  # storage type -> the suffix of its kernels' names
KERNEL_NAMES = tuple(base + suffix for suffix in DTYPES.values()
                     for base in ("sru_fwd", "sru_bwd", "sru_reduce_batch", "sru_sum_dirs"))


class SruArgumentError(GanSruError, ValueError):
    """Sizes, flags or pointers handed to the CUDA recurrence do not fit the kernel contract."""


class Launch(NamedTuple):
    """One kernel launch: `threads` threads in blocks of BLOCK; `args` are NumPy scalars whose dtypes are
    the C parameter types (np.uint64 for pointers, np.int32 for int, np.float32 for float)."""

    kernel: str
    threads: int
    args: tuple


def launch_grid(threads):
    return min(math.ceil(threads / BLOCK), 2**31 - 1)  # the kernels loop with a grid stride beyond this


def _ptr(name, p):
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 0:
        raise SruArgumentError(f"pointer {name}={p!r}: expected a device address as a Python int (0 = null)")
    return np.uint64(p)


def _suffix(dtype):
    """The kernel-name suffix of a storage type ("float32", "float16" or a NumPy dtype of either)."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name not in DTYPES:
        raise SruArgumentError(f"dtype={dtype!r}: expected one of {sorted(DTYPES)}")
    return DTYPES[name]


def _check(shape, activation, ptrs, required, x_dirs=1):
    """Validated (L, B, R, K, D), activation code and {name: np.uint64} pointers; x_dirs 1 (x (L, B, D), read by
    every direction) or R (x (L, B, R, D), direction r reads x[:, :, r]; K == 3 only)."""
    try:
        L, B, R, K, D = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise SruArgumentError(f"shape={shape!r}: expected (L, B, R, K, D), the shape of u") from None
    if R not in (1, 2) or K not in (3, 4) or min(L, B, D) < 0:
        raise SruArgumentError(f"shape={shape!r}: expected R in (1, 2), K in (3, 4) and sizes >= 0")
    if L * B * R * K * D >= 2**62 or L * B >= 2**31 or B * R * D >= 2**31 or R * 2 * D >= 2**31:
        raise SruArgumentError(f"shape={shape!r}: too large for the kernels' 32-bit loop bounds")
    if x_dirs not in (1, R) or (x_dirs != 1 and K != 3):
        raise SruArgumentError(f"x_dirs={x_dirs!r} with shape={shape!r}: expected 1, or R = {R} when K == 3")
    if activation not in ACTIVATION_CODES:
        raise SruArgumentError(f"activation={activation!r}: expected one of {sorted(ACTIVATION_CODES)}")
    p = {name: _ptr(name, v) for name, v in ptrs.items()}
    needed = [n for n in required if n != "x" or K == 3]
    missing = [n for n in needed if p[n] == 0]
    if missing:
        raise SruArgumentError(f"null pointer for {', '.join(missing)} with shape={shape!r}: required")
    return (L, B, R, K, D), ACTIVATION_CODES[activation], p


def forward_launches(u, x, bias, c0, wc, mask, h, c, *, shape, activation="tanh", scale_x=1.0, dtype="float32",
                     x_dirs=1):
    """The launch plan of the forward (see `cuda.forward_ptrs`)."""
    suffix = _suffix(dtype)
    (L, B, R, K, D), act, p = _check(
        shape, activation, {"u": u, "x": x, "bias": bias, "c0": c0, "wc": wc, "mask": mask, "h": h, "c": c},
        required=("u", "x", "bias", "h", "c"), x_dirs=x_dirs)
    if B * R * D == 0:
        return []
    i32 = np.int32
    args = (p["u"], p["x"] if K == 3 else np.uint64(0), p["bias"], p["wc"], p["c0"], p["mask"], p["h"],
            p["c"], i32(L), i32(B), i32(R), i32(K), i32(D), i32(act), np.float32(scale_x), i32(x_dirs))
    return [Launch("sru_fwd" + suffix, B * R * D, args)]


def backward_launches(u, x, bias, c0, wc, mask, c, dh, dc, du, dx, dbias, dwc, dc0, *, shape,
                      activation="tanh", scale_x=1.0, accum_du=False, accum_dx=False, accum_dbias=False,
                      accum_dwc=False, accum_dc0=False, temp=None, dtype="float32", x_dirs=1):
    """The launch plan of the backward (see `cuda.backward_ptrs`).

    `temp(n, dtype)` must return the address of a scratch buffer of n elements of `dtype` ("float32" or
    "float16") that stays alive until the plan has run; it is called for the per-direction dx of a shared x
    (K == 3, R == 2, x_dirs == 1; in the storage type) and the per-batch-row dbias/dwc partials (float32;
    B != 1, or any B in float16, whose partials are never stored in float16).
    """
    suffix = _suffix(dtype)
    storage = "float16" if suffix else "float32"
    (L, B, R, K, D), act, p = _check(
        shape, activation,
        {"u": u, "x": x, "bias": bias, "c0": c0, "wc": wc, "mask": mask, "c": c, "dh": dh, "dc": dc,
         "du": du, "dx": dx, "dbias": dbias, "dwc": dwc, "dc0": dc0},
        required=("u", "x", "bias", "c"), x_dirs=x_dirs)
    i32, null = np.int32, np.uint64(0)
    launches = []
    cols = B * R * D
    # Where the main kernel writes dxs and the partials, and with which accumulate flag: straight into the
    # outputs when no reduction is needed (R == 1 or x_dirs == R for dx, B == 1 in float32 for dbias/dwc), else
    # into scratch.
    dxs, acc_dxs = null, 0
    if K == 3 and p["dx"]:
        dxs, acc_dxs = (p["dx"], int(accum_dx)) if R == x_dirs else (_ptr("temp", temp(L * B * R * D, storage)), 0)
    parts = {}
    for name, accum in (("dbias", accum_dbias), ("dwc", accum_dwc)):
        if not p[name]:
            parts[name] = (null, 0)
        elif B == 1 and not suffix:
            parts[name] = (p[name], int(accum))
        else:
            parts[name] = (_ptr("temp", temp(B * R * 2 * D, "float32")), 0)
    if cols > 0:
        args = (p["u"], p["x"] if K == 3 else null, p["bias"], p["wc"], p["c0"], p["mask"], p["c"], p["dh"],
                p["dc"], p["du"], dxs, parts["dbias"][0], parts["dwc"][0], p["dc0"],
                i32(L), i32(B), i32(R), i32(K), i32(D), i32(act), np.float32(scale_x),
                i32(accum_du), i32(acc_dxs), i32(parts["dbias"][1]), i32(parts["dwc"][1]), i32(accum_dc0),
                i32(x_dirs))
        launches.append(Launch("sru_bwd" + suffix, cols, args))
    if p["dx"] and L * B * D > 0:
        if K == 3 and R == 2 and x_dirs == 1:
            launches.append(Launch("sru_sum_dirs" + suffix, L * B * D,
                                   (dxs, p["dx"], i32(L * B), i32(R), i32(D), i32(accum_dx))))
        elif K == 4 and not accum_dx:  # x is not read when K == 4: its gradient is 0 (a sum over no r)
            launches.append(Launch("sru_sum_dirs" + suffix, L * B * D,
                                   (null, p["dx"], i32(L * B), i32(0), i32(D), i32(0))))
    for name, accum in (("dbias", accum_dbias), ("dwc", accum_dwc)):
        if p[name] and (B != 1 or suffix) and R * 2 * D > 0:
            launches.append(Launch("sru_reduce_batch" + suffix, R * 2 * D,
                                   (parts[name][0], p[name], i32(B), i32(R * 2 * D), i32(accum))))
    return launches
