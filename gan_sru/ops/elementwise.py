"""Elementwise parts of the networks as host functions on a CPU context: zeroing G's padded steps
(`mask_steps`), the oscillator bank's sin and cos (`oscillator_bank`) and D's sum over time (`time_sum`).

nnabla's CPU elementwise functions cost about 15-20 ns per element, broadcast or not: at 128 steps and 19
features the plain forms of the mask and the bank took about 6% of a training step. Here each is one or two
NumPy passes.
On a CUDA context, and with impl="ref" (what `gan-sru export` serialises), they are plain nnabla ops; the tests
tie the two forms together and the gradients to finite differences.
"""
import nnabla as nn
import nnabla.functions as F
import numpy as np
from nnabla.function import PythonFunction

from gan_sru.ops.matmul import host_array, is_cuda_context, write_grad

IMPLS = ("auto", "ref")


def _host(impl):
    """Whether the host function runs: impl "auto" on a CPU context."""
    if impl not in IMPLS:
        raise ValueError(f"unknown impl {impl!r}; expected 'auto' or 'ref'")
    return impl == "auto" and not is_cuda_context(nn.get_current_context())


class MaskSteps(PythonFunction):
    """y = x * mask[..., None] for x (L, B, C) and mask (L, B); the gradient flows to x only."""

    @property
    def name(self):
        return "MaskSteps"

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):
        outputs[0].reset_shape(inputs[0].shape, True)

    def forward_impl(self, inputs, outputs):
        x, m = inputs
        L, B, C = x.shape
        y = host_array(outputs[0].data, (L, B, C), write_only=True)
        np.multiply(host_array(x.data, (L, B, C)), host_array(m.data, (L, B, 1)), out=y)

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        if not propagate_down[0]:
            return
        x, m = inputs
        L, B, C = x.shape
        write_grad(x, host_array(outputs[0].grad, (L, B, C)) * host_array(m.data, (L, B, 1)), accum[0])

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return j == 1


def mask_steps(x, mask, impl="auto"):
    """x (L, B, C) with its padded steps zeroed: x * mask (L, B) on every feature."""
    L, B, C = x.shape
    if tuple(mask.shape) != (L, B):
        raise ValueError(f"mask_steps expects x (L, B, C) and mask (L, B); got {tuple(x.shape)} and "
                         f"{tuple(mask.shape)}")
    if _host(impl):
        return MaskSteps(nn.get_current_context())(x, mask)
    return x * F.broadcast(F.reshape(mask, (L, B, 1)), (L, B, C))  # a broadcasting Mul2 is slower still


class OscillatorBank(PythonFunction):
    """(L, B, 2 S) [sin | cos] of freq (B, S) * t + phase (B, S), t = 0 .. L - 1; gradients to both inputs."""

    def __init__(self, ctx, length):
        super().__init__(ctx)
        self.length = int(length)

    @property
    def name(self):
        return "OscillatorBank"

    @property
    def args(self):
        return {"length": self.length}

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):
        B, S = inputs[0].shape
        outputs[0].reset_shape((self.length, B, 2 * S), True)

    def _arg(self, inputs):
        B, S = inputs[0].shape
        t = np.arange(self.length, dtype=np.float32)[:, None, None]
        return t * host_array(inputs[0].data, (1, B, S)) + host_array(inputs[1].data, (1, B, S))

    def forward_impl(self, inputs, outputs):
        B, S = inputs[0].shape
        arg = self._arg(inputs)
        y = host_array(outputs[0].data, (self.length, B, 2 * S), write_only=True)
        np.sin(arg, out=y[..., :S])
        np.cos(arg, out=y[..., S:])

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        if not any(propagate_down[:2]):
            return
        B, S = inputs[0].shape
        arg = self._arg(inputs)
        g = host_array(outputs[0].grad, (self.length, B, 2 * S))
        g_arg = g[..., :S] * np.cos(arg) - g[..., S:] * np.sin(arg)  # d sin = cos, d cos = -sin
        if propagate_down[0]:
            t = np.arange(self.length, dtype=np.float32)
            write_grad(inputs[0], np.tensordot(t, g_arg, axes=(0, 0)), accum[0])
        if propagate_down[1]:
            write_grad(inputs[1], g_arg.sum(axis=0), accum[1])

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return True


def oscillator_bank(freq, phase, length, impl="auto"):
    """(length, B, 2 S): [sin | cos] of freq (B, S) t + phase (B, S) at steps t = 0 .. length - 1."""
    if len(freq.shape) != 2 or tuple(phase.shape) != tuple(freq.shape):
        raise ValueError(f"oscillator_bank expects freq and phase (B, S); got {tuple(freq.shape)} and "
                         f"{tuple(phase.shape)}")
    if _host(impl):
        return OscillatorBank(nn.get_current_context(), length)(freq, phase)
    B, S = freq.shape
    t = nn.Variable.from_numpy_array(np.arange(length, dtype=np.float32).reshape(length, 1, 1))
    shape = (length, B, S)
    arg = (F.broadcast(t, shape) * F.broadcast(F.reshape(freq, (1, B, S)), shape)
           + F.broadcast(F.reshape(phase, (1, B, S)), shape))
    return F.concatenate(F.sin(arg), F.cos(arg), axis=2)


class TimeSum(PythonFunction):
    """(B, H) sum over the first axis of h (L, B, H); the gradient is dy on every step."""

    @property
    def name(self):
        return "TimeSum"

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):
        outputs[0].reset_shape(tuple(inputs[0].shape[1:]), True)

    def forward_impl(self, inputs, outputs):
        L, B, H = inputs[0].shape
        np.sum(host_array(inputs[0].data, (L, B, H)), axis=0, out=host_array(outputs[0].data, (B, H), write_only=True))

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        if not propagate_down[0]:
            return
        L, B, H = inputs[0].shape
        dy = host_array(outputs[0].grad, (1, B, H))
        if accum[0]:
            host_array(inputs[0].grad, (L, B, H))[...] += dy
        else:
            host_array(inputs[0].grad, (L, B, H), write_only=True)[...] = dy

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return False


def time_sum(h, impl="auto"):
    """(B, H): h (L, B, H) summed over time. The plain form is a (1, L) x (L, B H) product: nnabla's CPU F.sum
    over the first axis is slower still."""
    if len(h.shape) != 3:
        raise ValueError(f"time_sum expects h (L, B, H); got {tuple(h.shape)}")
    if _host(impl):
        return TimeSum(nn.get_current_context())(h)
    from gan_sru.ops.matmul import matmul

    L, B, H = h.shape
    ones = nn.Variable.from_numpy_array(np.ones((1, L), np.float32))
    return F.reshape(matmul(ones, F.reshape(h, (L, B * H)), impl=impl), (B, H))
