"""`matmul(x, w, b)`: the one big product of an SRU layer, `x (..., I) @ w (I, O) -> (..., O)`, and `affine`, a
dense layer on it.

On a CPU context it is a custom function backed by host BLAS (gan_sru.ops.blas picks NumPy's or SciPy's),
measured here several times faster than nnabla's CPU affine for the SRU's shapes, forward and backward; on
a CUDA context it is nnabla's own `F.affine` (cuBLAS), as in the official SRU.
"""
import nnabla as nn
import nnabla.functions as F
import nnabla.initializer as I
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
    """y = x @ w (+ b) with x (..., I), w (I, O), b (O,), on host BLAS; y (..., O). The leading axes of x are
    one axis of rows for BLAS (views, so no reshape function, whose backward copies the gradient, runs before
    or after it). Forward and backward are one GEMM each per output; the bias's gradient a sum over rows."""

    @property
    def name(self):
        return "BlasMatmul"

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):  # shapes checked by `matmul` (nnabla would wrap an error raised here)
        x, w = inputs[:2]
        outputs[0].reset_shape(tuple(x.shape[:-1]) + (w.shape[1],), True)

    @staticmethod
    def _rows(x, w):
        return (int(np.prod(x.shape[:-1])), w.shape[0]), (int(np.prod(x.shape[:-1])), w.shape[1])

    def forward_impl(self, inputs, outputs):
        x, w = inputs[:2]
        xs, ys = self._rows(x, w)
        y = host_array(outputs[0].data, ys, write_only=True)
        blas.matmul(host_array(x.data, xs), host_array(w.data, w.shape), y)
        if len(inputs) > 2:
            y += host_array(inputs[2].data, (ys[1],))

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        x, w = inputs[:2]
        xs, ys = self._rows(x, w)
        dy = host_array(outputs[0].grad, ys)
        if propagate_down[0]:
            dx = host_array(x.grad, xs, write_only=not accum[0])
            blas.matmul(dy, host_array(w.data, w.shape).T, dx, accumulate=accum[0])
        if propagate_down[1]:
            dw = host_array(w.grad, w.shape, write_only=not accum[1])
            blas.matmul(host_array(x.data, xs).T, dy, dw, accumulate=accum[1])
        if len(inputs) > 2 and propagate_down[2]:
            write_grad(inputs[2], dy.sum(axis=0), accum[2])

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return (i, j) in ((0, 1), (1, 0))  # dx needs w, dw needs x, db neither


def matmul(x, w, b=None, impl="auto"):
    """`x (..., I) @ w (I, O) (+ b (O,))` -> (..., O). impl: "auto" (BLAS on CPU, cuBLAS affine on CUDA) or
    "ref" (`F.affine`)."""
    if len(x.shape) < 2 or len(w.shape) != 2 or x.shape[-1] != w.shape[0]:
        raise ValueError(f"matmul expects x (..., I) and w (I, O), got {tuple(x.shape)} and {tuple(w.shape)}")
    if b is not None and tuple(b.shape) != (w.shape[1],):
        raise ValueError(f"matmul expects a bias of shape ({w.shape[1]},), got {tuple(b.shape)}")
    ctx = nn.get_current_context()
    if impl == "ref" or is_cuda_context(ctx):
        return F.affine(x, w, b, base_axis=len(x.shape) - 1)
    inputs = (x, w) if b is None else (x, w, b)
    return BlasMatmul(ctx)(*inputs)


def affine(x, n_out, name, with_bias=True, impl="auto"):
    """`PF.affine(x, n_out, base_axis=x.ndim - 1, name=name)` on `matmul`: the same parameters (names, shapes,
    default initialisers, so the same draws from nnabla's generator) and the same values. nnabla's CPU affine
    ran these layers (a D head, G's output) about ten times slower than BLAS."""
    fan_in = x.shape[-1]
    with nn.parameter_scope(name), nn.parameter_scope("affine"):
        w = nn.parameter.get_parameter_or_create(
            "W", (fan_in, n_out), I.UniformInitializer(I.calc_uniform_lim_glorot(fan_in, n_out)), True)
        b = nn.parameter.get_parameter_or_create("b", (n_out,), I.ConstantInitializer(), True) if with_bias else None
    return matmul(x, w, b, impl)
