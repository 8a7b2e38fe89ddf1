"""The GRU of the learned scores, in NumPy + numba with hand-written gradients: ``GRUModel`` and ``Adam``.

Cell (nnabla's ``PF.gru`` form, reset gate applied to ``W_hn h + b_hn``), h_0 = 0:
    r = sigmoid(x W_ir + b_ir + h W_hr + b_hr)     z = sigmoid(x W_iz + b_iz + h W_hz + b_hz)
    n = tanh(x W_in + b_in + r * (h W_hn + b_hn))  h' = (1 - z) * n + z * h
Parameters (gates in the order r, z, n along the last axis): ``W_i`` (D, 3H), ``b_i`` (3H,), ``W_h``
(H, 3H), ``b_h`` (3H,), all uniform +-1/sqrt(H); the head ``W_o`` (H, 1) glorot-uniform (nnabla's
``PF.affine`` default) and ``b_o`` (1,) zero. Layout: batch-major, x ``(B, L, D)``.

Heads: ``"last"`` reads the state at each sequence's last valid step, one logit per sequence, sigmoid
cross-entropy (the discriminative score); ``"steps"`` puts sigmoid(h_t W_o + b_o) at every step, L1 loss
over the valid steps (the predictive score).

Why not nnabla: the cell unrolled as nnabla ops (hidden 14) spent its time in per-op overhead, 56-70 s
per discriminative repeat of TimeGAN's 2000 iterations at 24 steps on 2 cores, 10x that at 256 steps.
Here one numba kernel walks time forward and one backward, a sequence per iteration of a ``prange``
loop (rows are independent, so each stops at its own length), with the input projection and the weight
gradients fused in: for these tall, thin products (B*L x D times D x 3H) OpenBLAS was no faster and its
threads fought numba's. float32 for the scores, with the SRU kernels' rational tanh (vectorisable,
max relative error 3.4e-7); the kernels also compile for float64 with libm's functions (the
finite-difference tests).
"""
import math

import numpy as np
from numba import njit, prange

# The SRU's kernels' activations: a vectorisable rational tanh for float32, libm's for float64. Importing
# that module also picks numba's workqueue threading layer (OpenMP's spinning workers fight OpenBLAS's).
from gan_sru.ops.sru.cpu import _sigmoid as _sigmoid_jit
from gan_sru.ops.sru.cpu import _tanh as _tanh_jit

HEADS = ("last", "steps")
_ONE, _ZERO = np.float32(1.0), np.float32(0.0)  # an int 1 or 0 would promote float32 arithmetic to float64


@njit(parallel=True, cache=True, error_model="numpy")
def _forward_kernel(x, lengths, w_i, b_i, w_h, b_h, hs, gates):
    """States of every valid step, one sequence per prange iteration. x (B, L, D), lengths (B,).
    Writes hs (B, L, H) (0 from each row's length on) and gates (B, L, 4, H) = (r, z, n, h W_hn + b_hn)
    for the backward pass. The products are unit loops over contiguous rows (LLVM vectorises them)."""
    B, L, D = x.shape
    H3 = w_h.shape[1]
    H = H3 // 3
    for b in prange(B):
        h = np.zeros(H, x.dtype)
        pre = np.empty(H3, x.dtype)
        hh = np.empty(H3, x.dtype)
        for t in range(L):
            if t >= lengths[b]:
                hs[b, t] = 0
                continue
            xrow = x[b, t]
            pre[:] = b_i
            for d in range(D):
                xd = xrow[d]
                for j in range(H3):
                    pre[j] += xd * w_i[d, j]
            hh[:] = b_h
            for k in range(H):
                hk = h[k]
                for j in range(H3):
                    hh[j] += hk * w_h[k, j]
            gr, gz, gn, ghn, hrow = gates[b, t, 0], gates[b, t, 1], gates[b, t, 2], gates[b, t, 3], hs[b, t]
            for j in range(H):
                r = _sigmoid_jit(pre[j] + hh[j])
                z = _sigmoid_jit(pre[H + j] + hh[H + j])
                n = _tanh_jit(pre[2 * H + j] + r * hh[2 * H + j])
                gr[j], gz[j], gn[j], ghn[j] = r, z, n, hh[2 * H + j]
                hrow[j] = (_ONE - z) * n + z * h[j]
            h[:] = hrow


@njit(parallel=True, cache=True, error_model="numpy")
def _backward_kernel(x, dh_out, lengths, w_ht, hs, gates, g_wi, g_bi, g_wh, g_bh):
    """Back through time, one sequence per prange iteration. dh_out (B, L, H): the loss's gradient in
    each state; w_ht (3H, H) = W_h^T. Writes each row's share of the parameter gradients: g_wi (B, D, 3H),
    g_bi (B, 3H), g_wh (B, H, 3H), g_bh (B, 3H) (summed over rows by the caller)."""
    B, L, D = x.shape
    H = hs.shape[2]
    H3 = 3 * H
    for b in prange(B):
        dh = np.zeros(H, x.dtype)
        dpre = np.empty(H3, x.dtype)  # gradient in x W_i + b_i
        dhh = np.empty(H3, x.dtype)  # gradient in h W_h + b_h: dpre with r * dn_pre in the n part
        gwi, gbi, gwh, gbh = g_wi[b], g_bi[b], g_wh[b], g_bh[b]
        gwi[:] = 0
        gbi[:] = 0
        gwh[:] = 0
        gbh[:] = 0
        for t in range(min(lengths[b], L) - 1, -1, -1):
            gr, gz, gn, ghn, dout = gates[b, t, 0], gates[b, t, 1], gates[b, t, 2], gates[b, t, 3], dh_out[b, t]
            for j in range(H):
                g = dh[j] + dout[j]
                r, z, n = gr[j], gz[j], gn[j]
                hp = hs[b, t - 1, j] if t > 0 else _ZERO
                dn = g * (_ONE - z) * (_ONE - n * n)
                dr = dn * ghn[j] * r * (_ONE - r)
                dz = g * (hp - n) * z * (_ONE - z)
                dpre[j], dpre[H + j], dpre[2 * H + j] = dr, dz, dn
                dhh[j], dhh[H + j], dhh[2 * H + j] = dr, dz, dn * r
                dh[j] = g * z
            for j in range(H3):
                gbi[j] += dpre[j]
                gbh[j] += dhh[j]
            xrow = x[b, t]
            for d in range(D):
                xd = xrow[d]
                for j in range(H3):
                    gwi[d, j] += xd * dpre[j]
            if t > 0:
                hprev = hs[b, t - 1]
                for k in range(H):
                    hk = hprev[k]
                    for j in range(H3):
                        gwh[k, j] += hk * dhh[j]
            for i in range(H3):
                di = dhh[i]
                for k in range(H):
                    dh[k] += di * w_ht[i, k]


def _sigmoid_np(a):
    return 0.5 * np.tanh(0.5 * a) + 0.5  # no overflow warning for large |a|


class GRUModel:
    """A one-layer GRU with an affine head, for sequences ``(B, L, D)`` of valid lengths ``(B,)``.

    Args:
        num_inputs: D.
        hidden_size: H.
        head: ``"last"`` (one logit per sequence, sigmoid cross-entropy) or ``"steps"`` (sigmoid output
            at every step, L1 loss over the valid steps); see the module docstring.
        rng: numpy RandomState of the initialisation.
        dtype: float32 (the scores) or float64 (gradient checks).
    """

    def __init__(self, num_inputs, hidden_size, head, rng, dtype=np.float32):
        if head not in HEADS:
            raise ValueError(f"GRUModel: head {head!r}; expected one of {HEADS}")
        D, H = int(num_inputs), int(hidden_size)
        self.head, self.dtype = head, np.dtype(dtype)
        s, so = 1.0 / math.sqrt(H), math.sqrt(6.0 / (H + 1))

        def uniform(shape, lim):
            return rng.uniform(-lim, lim, shape).astype(self.dtype)

        self.params = dict(W_i=uniform((D, 3 * H), s), b_i=uniform((3 * H,), s), W_h=uniform((H, 3 * H), s),
                           b_h=uniform((3 * H,), s), W_o=uniform((H, 1), so), b_o=np.zeros(1, self.dtype))

    def _states(self, x, lengths):
        p = self.params
        B, L, _ = x.shape
        H = p["W_h"].shape[0]
        x = np.ascontiguousarray(x, self.dtype)
        lengths = np.minimum(np.asarray(lengths, np.int64), L)
        hs = np.empty((B, L, H), self.dtype)
        gates = np.empty((B, L, 4, H), self.dtype)
        _forward_kernel(x, lengths, p["W_i"], p["b_i"], p["W_h"], p["b_h"], hs, gates)
        return x, lengths, hs, gates

    def _outputs(self, hs, lengths):
        """The head's pre-activations: (B,) at the last valid steps, or (B, L) at every step."""
        p = self.params
        if self.head == "last":
            last = hs[np.arange(len(hs)), np.maximum(lengths - 1, 0)]
            return (last @ p["W_o"])[:, 0] + p["b_o"][0], last
        return (hs @ p["W_o"])[..., 0] + p["b_o"][0], hs

    def predict(self, x, lengths, chunk=512):
        """Logits (B,) for ``"last"``, sigmoid outputs (B, L) for ``"steps"`` (0.5 past each length);
        ``chunk`` sequences at a time (the backward pass's gate buffer is (chunk, L, 4H))."""
        out = []
        for i in range(0, len(x), chunk):
            _, lc, hs, _ = self._states(x[i:i + chunk], lengths[i:i + chunk])
            a, _ = self._outputs(hs, lc)
            out.append(a if self.head == "last" else _sigmoid_np(a))
        return np.concatenate(out)

    def loss_and_grads(self, x, lengths, y):
        """Loss of one batch and its gradient in every parameter.

        Args:
            x: ``(B, L, D)``, anything past each length is ignored.
            lengths: ``(B,)`` valid steps, each >= 1 for ``"last"``, >= 0 for ``"steps"``.
            y: ``"last"``: labels ``(B,)`` in {0, 1}; loss = mean sigmoid cross-entropy of the logits.
               ``"steps"``: targets ``(B, L)``; loss = sum of |output - target| over valid steps
               / max(number of valid steps, 1).

        Returns:
            (loss as float, dict of gradients with the shapes of ``params``).
        """
        p = self.params
        x, lengths, hs, gates = self._states(x, lengths)
        B, L, D = x.shape
        H = hs.shape[2]
        a, feat = self._outputs(hs, lengths)
        y = np.asarray(y, self.dtype)
        if self.head == "last":
            loss = np.mean(np.maximum(a, 0) - a * y + np.log1p(np.exp(-np.abs(a))))
            da = (_sigmoid_np(a) - y) / B  # (B,)
            dh_out = np.zeros_like(hs)
            dh_out[np.arange(B), np.maximum(lengths - 1, 0)] = da[:, None] * p["W_o"][:, 0]
            dW_o = feat.T @ da[:, None]
        else:
            mask = (np.arange(L)[None, :] < lengths[:, None]).astype(self.dtype)
            out = _sigmoid_np(a)
            denom = max(float(mask.sum()), 1.0)
            loss = np.sum(np.abs(out - y) * mask) / denom
            da = (np.sign(out - y) * mask / denom * out * (1 - out)).astype(self.dtype)  # (B, L)
            dh_out = da[..., None] * p["W_o"][:, 0]
            dW_o = feat.reshape(B * L, H).T @ da.reshape(B * L, 1)
        g = dict(W_i=np.empty((B, D, 3 * H), self.dtype), b_i=np.empty((B, 3 * H), self.dtype),
                 W_h=np.empty((B, H, 3 * H), self.dtype), b_h=np.empty((B, 3 * H), self.dtype))
        _backward_kernel(x, np.ascontiguousarray(dh_out, self.dtype), lengths, np.ascontiguousarray(p["W_h"].T),
                         hs, gates, g["W_i"], g["b_i"], g["W_h"], g["b_h"])
        grads = {k: v.sum(axis=0) for k, v in g.items()}
        grads.update(W_o=dW_o.astype(self.dtype), b_o=np.array([da.sum()], self.dtype))
        return float(loss), grads


class Adam:
    """Adam as nnabla's ``S.Adam`` and TensorFlow's: betas 0.9, 0.999, eps 1e-8 added to sqrt(v) (not
    bias-corrected), step size lr * sqrt(1 - beta2^t) / (1 - beta1^t). Updates ``params`` in place."""

    def __init__(self, params, lr, beta1=0.9, beta2=0.999, eps=1e-8):
        self.params, self.lr, self.beta1, self.beta2, self.eps, self.t = params, lr, beta1, beta2, eps, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def update(self, grads):
        self.t += 1
        step = self.lr * math.sqrt(1 - self.beta2 ** self.t) / (1 - self.beta1 ** self.t)
        for k, p in self.params.items():
            g = grads[k]
            m, v = self.m[k], self.v[k]
            m *= self.beta1
            m += (1 - self.beta1) * g
            v *= self.beta2
            v += (1 - self.beta2) * g * g
            p -= (step * m / (np.sqrt(v) + self.eps)).astype(p.dtype)
