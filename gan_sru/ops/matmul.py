"""`matmul(x, w)`: the one big product of an SRU layer, `x (N, I) @ w (I, O) -> (N, O)`.

On a CPU context it is a custom function backed by host BLAS (gan_sru.ops.blas picks NumPy's or SciPy's),
measured here several times faster than nnabla's CPU affine for the SRU's shapes, forward and backward; on
a CUDA context it is nnabla's own `F.affine` (cuBLAS), as in the official SRU.
"""
import nnabla as nn
import nnabla.functions as F
import numpy as np
from nnabla.function import PythonFunction

from . import blas

CPU_CONTEXT = nn.Context(["cpu:float"], "CpuCachedArray", "0")


class _HostBuffer:
    """Exposes a raw float32 pointer to NumPy through the array interface (no ctypes type per call)."""
    __slots__ = ("__array_interface__",)

    def __init__(self, ptr, shape):
        self.__array_interface__ = {"data": (ptr, False), "shape": tuple(shape), "typestr": "<f4", "version": 3}


def host_array(ndarray, shape, write_only=False):
    """A NumPy float32 view of an nnabla NdArray's host buffer, without a copy.

    `write_only=True` skips the synchronisation (and the lazy zero fill) for buffers about to be overwritten.
    The view is valid while the NdArray keeps that buffer (within one forward/backward call).
    """
    return np.asarray(_HostBuffer(ndarray.data_ptr(np.float32, CPU_CONTEXT, write_only), shape))


def write_grad(var, value, accum):
    """Store `value` into `var.grad`, adding to it when nnabla asks to accumulate."""
    if accum:
        host_array(var.grad, var.shape)[...] += value
    else:
        host_array(var.grad, var.shape, write_only=True)[...] = value


def is_cuda_context(ctx):
    return any(b.split(":")[0] in ("cuda", "cudnn") for b in ctx.backend[:1])


class BlasMatmul(PythonFunction):
    """y = x @ w with x (N, I), w (I, O), on host BLAS. Forward and backward are one GEMM each per output."""

    @property
    def name(self):
        return "BlasMatmul"

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):
        x, w = inputs
        if len(x.shape) != 2 or len(w.shape) != 2 or x.shape[1] != w.shape[0]:
            raise ValueError(f"matmul expects x (N, I) and w (I, O), got {x.shape} and {w.shape}")
        outputs[0].reset_shape((x.shape[0], w.shape[1]), True)

    def forward_impl(self, inputs, outputs):
        x, w = inputs
        y = host_array(outputs[0].data, outputs[0].shape, write_only=True)
        blas.matmul(host_array(x.data, x.shape), host_array(w.data, w.shape), y)

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        x, w = inputs
        dy = host_array(outputs[0].grad, outputs[0].shape)
        if propagate_down[0]:
            dx = host_array(x.grad, x.shape, write_only=not accum[0])
            blas.matmul(dy, host_array(w.data, w.shape).T, dx, accumulate=accum[0])
        if propagate_down[1]:
            dw = host_array(w.grad, w.shape, write_only=not accum[1])
            blas.matmul(host_array(x.data, x.shape).T, dy, dw, accumulate=accum[1])

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return i != j  # dx needs w, dw needs x


def matmul(x, w, impl="auto"):
    """`x (N, I) @ w (I, O)`. impl: "auto" (BLAS on CPU, cuBLAS affine on CUDA) or "ref" (`F.affine`)."""
    ctx = nn.get_current_context()
    if impl == "ref" or is_cuda_context(ctx):
        return F.affine(x, w, base_axis=1)
    return BlasMatmul(ctx)(x, w)
