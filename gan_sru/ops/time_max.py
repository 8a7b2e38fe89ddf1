"""`time_max(h, mask)`: each feature's max over a sequence's valid steps, (L, B, H) -> (B, H).

On a CPU context it is one host function (a numba pass over time forward, a scatter of the gradient to the
arg-max step backward); the plain-ops form (`impl="ref"`, and CUDA contexts) pushes padded steps far below
with a broadcast mask and takes `F.max`, which nnabla's CPU ran about six times slower. The tests tie the two.
"""
import nnabla as nn
import nnabla.functions as F
import numpy as np
from nnabla.function import PythonFunction
from numba import njit

from gan_sru.ops.matmul import host_array, is_cuda_context, write_grad

PADDING_OFFSET = 1e4  # the plain form's offset of padded steps: far below any SRU output (|h| < a few)


@njit(cache=True)
def _forward(h, mask, out, arg):
    L, B, H = h.shape
    for b in range(B):
        out[b, :] = 0.0  # a sequence without a valid step: 0, no gradient
        arg[b, :] = -1
        for t in range(L):
            if mask[t, b] > 0:
                for j in range(H):
                    if arg[b, j] < 0 or h[t, b, j] > out[b, j]:
                        out[b, j] = h[t, b, j]
                        arg[b, j] = t


@njit(cache=True)
def _backward(dy, arg, dh):
    B, H = arg.shape
    for b in range(B):
        for j in range(H):
            if arg[b, j] >= 0:
                dh[arg[b, j], b, j] += dy[b, j]


class TimeMax(PythonFunction):
    """inputs h (L, B, H) and mask (L, B); output (B, H), the max over the steps where mask > 0 (the first such
    step on ties); the gradient goes to h at that step, none to the mask."""

    @property
    def name(self):
        return "TimeMax"

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):
        L, B, H = inputs[0].shape
        outputs[0].reset_shape((B, H), True)
        self._arg = np.empty((B, H), np.int64)

    def forward_impl(self, inputs, outputs):
        h, mask = inputs
        L, B, H = h.shape
        _forward(host_array(h.data, (L, B, H)), host_array(mask.data, (L, B)),
                 host_array(outputs[0].data, (B, H), write_only=True), self._arg)

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        if not propagate_down[0]:
            return
        h = inputs[0]
        dh = np.zeros(h.shape, np.float32)
        _backward(host_array(outputs[0].grad, outputs[0].shape), self._arg, dh)
        write_grad(h, dh, accum[0])

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return False  # the arg-max of the forward is kept


def time_max(h, mask, impl="auto"):
    """h (L, B, H), mask (L, B) -> (B, H): the max over each sequence's valid steps. impl: "auto" (the host
    function on CPU, the plain form on CUDA) or "ref" (plain nnabla ops)."""
    if len(h.shape) != 3 or tuple(mask.shape) != tuple(h.shape[:2]):
        raise ValueError(f"time_max expects h (L, B, H) and mask (L, B), got {tuple(h.shape)} and "
                         f"{tuple(mask.shape)}")
    ctx = nn.get_current_context()
    if impl == "ref" or is_cuda_context(ctx):
        L, B, H = h.shape
        below = F.broadcast(F.reshape((mask - 1.0) * PADDING_OFFSET, (L, B, 1)), (L, B, H))
        return F.max(h + below, axis=0)
    return TimeMax(ctx)(h, mask)
