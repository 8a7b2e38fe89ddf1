"""Effective bandwidth of the SRU's CUDA kernels against a device-to-device copy (a measurement, not an op).

    from gan_sru.ops.sru.bandwidth import bandwidth_benchmark
    bandwidth_benchmark(L=256, B=64, D=1024)  # needs CuPy and a CUDA device
"""
import numpy as np

from .cuda import backward_ptrs, cupy_module, current_device_id, device_addr, forward_ptrs


def traffic_bytes(shape, weight_c=True, mask=False, itemsize=4):
    """(forward, backward) bytes each pass must read plus write at least (every array once, `itemsize` bytes
    an element: 4 for float32, 2 for float16)."""
    L, B, R, K, D = shape
    u, state, col = L * B * R * K * D, L * B * R * D, B * R * D
    x = L * B * D if K == 3 else 0
    params = R * 2 * D * (2 if weight_c else 1)
    m = L * B if mask else 0
    fwd = u + x + params + col + m + 2 * state  # in: u, x, bias, wc, c0, mask; out: h, c
    bwd = (u + x + params + col + m + 3 * state) + (u + x + params + col)  # + c, dh, dc; out: du, dx, ...
    return itemsize * fwd, itemsize * bwd


def _elapsed_ms(cupy, run, warmup, repeat):
    """Mean milliseconds of run() on the null stream, timed with CUDA events after `warmup` calls."""
    for _ in range(warmup):
        run()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record(cupy.cuda.Stream.null)
    for _ in range(repeat):
        run()
    end.record(cupy.cuda.Stream.null)
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end) / repeat


def bandwidth_benchmark(L=256, B=64, D=1024, R=1, K=3, weight_c=True, mask=False, activation="tanh",
                        warmup=3, repeat=20, device_id=None, seed=0, dtype="float32"):
    """Effective bandwidth of the forward and backward kernels against a device-to-device copy.

    `dtype`: the storage type, "float32" or "float16" (the float16 kernels).
    Each pass's bytes are `traffic_bytes` (every array read or written once); the copy moves half the
    forward's bytes (so it reads and writes as much as the forward). Times include the Python launch
    overhead (one launch forward; one to three backward). Returns a dict of sizes, milliseconds, GB/s
    (1e9 bytes per second) and each kernel's fraction of the copy's bandwidth.
    """
    cupy = cupy_module()
    device_id = current_device_id(cupy, device_id)
    shape = (L, B, R, K, D)
    with cupy.cuda.Device(device_id), cupy.cuda.Stream.null:
        rs = cupy.random.RandomState(seed)
        f32 = cupy.float32

        def rnd(*s):
            return (rs.standard_normal(s, dtype=f32) * f32(0.5)).astype(dtype)

        def empty(*s):
            return cupy.empty(s, dtype=dtype)

        u, x, bias, c0 = rnd(L, B, R, K, D), rnd(L, B, D) if K == 3 else None, rnd(R, 2, D), rnd(B, R, D)
        wc = rnd(R, 2, D) if weight_c else None
        m = cupy.ones((L, B), dtype=dtype) if mask else None
        h, c, dh, dc = empty(L, B, R, D), empty(L, B, R, D), rnd(L, B, R, D), rnd(L, B, R, D)
        du, dx = empty(L, B, R, K, D), empty(L, B, D) if K == 3 else None
        dbias, dwc, dc0 = empty(R, 2, D), empty(R, 2, D) if weight_c else None, empty(B, R, D)
        ins = [device_addr(a) for a in (u, x, bias, c0, wc, m)]
        kw = {"shape": shape, "activation": activation, "device_id": device_id, "dtype": dtype}
        fwd_bytes, bwd_bytes = traffic_bytes(shape, weight_c, mask, itemsize=np.dtype(dtype).itemsize)
        n_copy = fwd_bytes // 2
        src, dst = cupy.empty(n_copy, dtype=cupy.uint8), cupy.empty(n_copy, dtype=cupy.uint8)

        def run_fwd():
            forward_ptrs(*ins, h.data.ptr, c.data.ptr, **kw)

        def run_bwd():
            backward_ptrs(*ins, c.data.ptr, dh.data.ptr, dc.data.ptr,
                          *(device_addr(a) for a in (du, dx, dbias, dwc, dc0)), **kw)

        def run_copy():
            cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, n_copy,
                                          cupy.cuda.runtime.memcpyDeviceToDevice, 0)

        ms = {name: _elapsed_ms(cupy, run, warmup, repeat)
              for name, run in (("forward", run_fwd), ("backward", run_bwd), ("copy", run_copy))}
        name = cupy.cuda.runtime.getDeviceProperties(device_id)["name"]
    gbps = {k: b / (ms[k] * 1e-3) / 1e9 for k, b in (("forward", fwd_bytes), ("backward", bwd_bytes),
                                                      ("copy", 2 * n_copy))}
    return {
        "device": name.decode() if isinstance(name, bytes) else str(name),
        "shape": {"L": L, "B": B, "R": R, "K": K, "D": D},
        "dtype": dtype, "weight_c": weight_c, "mask": mask, "activation": activation, "repeat": repeat,
        "forward_bytes": fwd_bytes, "backward_bytes": bwd_bytes, "copy_bytes": 2 * n_copy,
        "forward_ms": ms["forward"], "backward_ms": ms["backward"], "copy_ms": ms["copy"],
        "forward_gbps": gbps["forward"], "backward_gbps": gbps["backward"], "copy_gbps": gbps["copy"],
        "forward_vs_copy": gbps["forward"] / gbps["copy"], "backward_vs_copy": gbps["backward"] / gbps["copy"],
    }
