"""The GRU of the learned scores, in NumPy + numba with hand-written gradients: ``GRUModel`` and ``Adam``.

Cell (nnabla's ``PF.gru`` form, reset gate applied to ``W_hn h + b_hn``), h_0 = 0:
    r = sigmoid(x W_ir + b_ir + h W_hr + b_hr)     z = sigmoid(x W_iz + b_iz + h W_hz + b_hz)
    n = tanh(x W_in + b_in + r * (h W_hn + b_hn))  h' = (1 - z) * n + z * h
Parameters (gates in the order r, z, n along the last axis): ``W_i`` (D, 3H), ``b_i`` (3H,), ``W_h``
(H, 3H), ``b_h`` (3H,), all uniform +-1/sqrt(H); the head ``W_o`` (H, K) glorot-uniform (nnabla's
``PF.affine`` default) and ``b_o`` (K,) zero, K outputs (1 for ``"last"``). Inputs batch-major, x
``(B, L, D)``; inside, arrays are (feature, time, batch) so that every per-step loop runs over the batch,
contiguous.

Heads: ``"last"`` reads the state at each sequence's last valid step, one logit per sequence, sigmoid
cross-entropy (the discriminative score); ``"steps"`` puts K outputs sigmoid(h_t W_o + b_o) at every step,
L1 loss over the valid steps and the K outputs (the predictive score). Past its length a sequence's state is
held (not updated), so the final state is its last valid one and no gradient reaches the padding.

Why not nnabla: the cell unrolled as nnabla ops (hidden 14) spent its time in per-op overhead, 56-70 s
per discriminative repeat of TimeGAN's 2000 iterations at 24 steps on 2 cores, 10x that at 256 steps.
Here the input projection and the weight gradients are one BLAS product each over all steps, and one
numba kernel walks time forward (the product (3H, H) x (H, B) of each step and the gates in loops over
the batch that LLVM vectorises), one backward. A first version with a sequence per ``prange`` iteration
and the products written as loops was 3x slower: its short unit loops (3H = 42) vectorise poorly.
float32 for the scores, with the SRU kernels' rational tanh (vectorisable, max relative error 3.4e-7);
the kernels also compile for float64 with libm's functions (the finite-difference tests).
"""
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits
from tqdm import tqdm

# The SRU's kernels' activations: a vectorisable rational tanh for float32, libm's for float64.
from gan_sru.fastmath import sigmoid as _sigmoid_jit
from gan_sru.fastmath import tanh as _tanh_jit

HEADS = ("last", "steps")
_ONE, _ZERO = np.float32(1.0), np.float32(0.0)  # an int 1 or 0 would promote float32 arithmetic to float64


@njit(cache=True, error_model="numpy", nogil=True)
def _matmul_add(w, a, out):
    """out (M, B) += w (M, K) @ a (K, B), the batch loop innermost: vectorised, and each sum kept in k's
    order (no fastmath). OpenBLAS, for these (42, 14) x (14, 256) products, went multi-threaded and lost
    its time waiting on a loaded machine."""
    M, K = w.shape
    for i in range(M):
        o = out[i]
        for k in range(K):
            wik, ak = w[i, k], a[k]
            for b in range(o.shape[0]):
                o[b] += wik * ak[b]


@njit(cache=True, error_model="numpy", nogil=True)
def _matmul_into(w, a, out):
    out[:] = 0
    _matmul_add(w, a, out)


@njit(cache=True, error_model="numpy", nogil=True)
def _forward_kernel(xi, lengths, w_ht, b_h, hs, gates):
    """The recurrence over time. xi (3H, L, B): x W_i + b_i of every step; lengths (B,); w_ht (3H, H) = W_h^T.
    Writes hs (H, L + 1, B): hs[:, 0] = h_0 = 0, hs[:, t + 1] the state after step t, which stays at its
    last valid value past each length; gates (4H, L, B) = (r, z, n, h W_hn + b_hn) for the backward pass.
    Per step: the product (3H, H) x (H, B), then unit loops over the batch (contiguous, vectorised)."""
    H3, L, B = xi.shape
    H = H3 // 3
    h = np.zeros((H, B), xi.dtype)
    hh = np.empty((H3, B), xi.dtype)
    hs[:, 0] = 0
    for t in range(L):
        _matmul_into(w_ht, h, hh)
        for j in range(H):
            xr, xz, xn, hr, hz, hn, hp = xi[j, t], xi[H + j, t], xi[2 * H + j, t], hh[j], hh[H + j], hh[2 * H + j], h[j]
            gr, gz, gn, ghn, out = gates[j, t], gates[H + j, t], gates[2 * H + j, t], gates[3 * H + j, t], hs[j, t + 1]
            br, bz, bn = b_h[j], b_h[H + j], b_h[2 * H + j]
            for b in range(B):
                r = _sigmoid_jit(xr[b] + hr[b] + br)
                z = _sigmoid_jit(xz[b] + hz[b] + bz)
                un = hn[b] + bn
                n = _tanh_jit(xn[b] + r * un)
                gr[b], gz[b], gn[b], ghn[b] = r, z, n, un
                out[b] = (_ONE - z) * n + z * hp[b] if t < lengths[b] else hp[b]
        h[:] = hs[:, t + 1]


@njit(cache=True, error_model="numpy", nogil=True)
def _backward_kernel(dh_out, lengths, w_h, hs, gates, dpre, dhh):
    """Back through time. dh_out (H, L, B): the loss's gradient in hs[:, 1:]; w_h (H, 3H). Writes dpre
    (3H, L, B), the gradient in x W_i + b_i, and dhh (3H, L, B), in h W_h + b_h (they differ in the n part:
    r * dn_pre); both 0 past each length, where the gradient in the state passes through unchanged."""
    H3, L, B = dpre.shape
    H = H3 // 3
    dh = np.zeros((H, B), dpre.dtype)
    dprev = np.empty((H, B), dpre.dtype)
    dstep = np.empty((H3, B), dpre.dtype)
    for t in range(L - 1, -1, -1):
        for j in range(H):
            r, z, n, hn, hp = gates[j, t], gates[H + j, t], gates[2 * H + j, t], gates[3 * H + j, t], hs[j, t]
            dho, dhj, dp = dh_out[j, t], dh[j], dprev[j]
            pr, pz, pn, sn = dstep[j], dstep[H + j], dstep[2 * H + j], dhh[2 * H + j, t]
            for b in range(B):
                g = dhj[b] + dho[b]
                valid = t < lengths[b]
                dn = g * (_ONE - z[b]) * (_ONE - n[b] * n[b]) if valid else _ZERO
                pr[b] = dn * hn[b] * r[b] * (_ONE - r[b])
                pz[b] = g * (hp[b] - n[b]) * z[b] * (_ONE - z[b]) if valid else _ZERO
                pn[b] = dn
                sn[b] = dn * r[b]
                dp[b] = g * z[b] if valid else g
        dpre[:, t] = dstep
        dhh[:2 * H, t] = dstep[:2 * H]
        dstep[2 * H:] = dhh[2 * H:, t]
        dh[:] = dprev
        _matmul_add(w_h, dstep, dh)


def _sigmoid_np(a):
    return 0.5 * np.tanh(0.5 * a) + 0.5  # no overflow warning for large |a|


class GRUModel:
    """A one-layer GRU with an affine head, for sequences ``(B, L, D)`` of valid lengths ``(B,)``.

    Args:
        num_inputs: D.
        hidden_size: H.
        head: ``"last"`` (one logit per sequence, sigmoid cross-entropy) or ``"steps"`` (K sigmoid outputs
            at every step, L1 loss over the valid steps); see the module docstring.
        rng: numpy RandomState of the initialisation.
        dtype: float32 (the scores) or float64 (gradient checks).
        num_outputs: K, the outputs of the ``"steps"`` head at each step; 1 for ``"last"``.
    """

    def __init__(self, num_inputs, hidden_size, head, rng, dtype=np.float32, num_outputs=1):
        if head not in HEADS:
            raise ValueError(f"GRUModel: head {head!r}; expected one of {HEADS}")
        D, H, K = int(num_inputs), int(hidden_size), int(num_outputs)
        if K < 1 or (head == "last" and K != 1):
            raise ValueError(f"GRUModel: num_outputs {K} with head {head!r}; expected 1 for 'last', at least 1 "
                             "for 'steps'")
        self.head, self.dtype = head, np.dtype(dtype)
        s, so = 1.0 / math.sqrt(H), math.sqrt(6.0 / (H + K))

        def uniform(shape, lim):
            return rng.uniform(-lim, lim, shape).astype(self.dtype)

        self.params = dict(W_i=uniform((D, 3 * H), s), b_i=uniform((3 * H,), s), W_h=uniform((H, 3 * H), s),
                           b_h=uniform((3 * H,), s), W_o=uniform((H, K), so), b_o=np.zeros(K, self.dtype))
        self._work = {}

    def _buffer(self, name, shape):
        """A work array kept between calls of the same shape: fresh megabyte arrays each step cost more in
        page faults than the kernels themselves."""
        a = self._work.get(name)
        if a is None or a.shape != shape:
            a = self._work[name] = np.empty(shape, self.dtype)
        return a

    def _states(self, x, lengths):
        """x (B, L, D) -> (x as (D, L, B), lengths clipped to L, hs (H, L + 1, B), gates (4H, L, B))."""
        p = self.params
        B, L, D = x.shape
        H = p["W_h"].shape[0]
        xt = self._buffer("xt", (D, L, B))
        np.copyto(xt, np.asarray(x).transpose(2, 1, 0))
        lengths = np.minimum(np.asarray(lengths, np.int64), L)
        xi = self._buffer("xi", (3 * H, L, B))
        np.matmul(p["W_i"].T, xt.reshape(D, L * B), out=xi.reshape(3 * H, L * B))
        xi += p["b_i"][:, None, None]
        hs = self._buffer("hs", (H, L + 1, B))
        gates = self._buffer("gates", (4 * H, L, B))
        _forward_kernel(xi, lengths, np.ascontiguousarray(p["W_h"].T), p["b_h"], hs, gates)
        return xt, lengths, hs, gates

    def _outputs(self, hs):
        """The head's pre-activations: (B,) of the last valid states, or (K, L, B) at every step."""
        p = self.params
        if self.head == "last":
            return p["W_o"][:, 0] @ hs[:, -1] + p["b_o"][0]
        H, L1, B = hs.shape
        K = p["W_o"].shape[1]
        a = (p["W_o"].T @ hs[:, 1:].reshape(H, (L1 - 1) * B)).reshape(K, L1 - 1, B)
        return a + p["b_o"][:, None, None]

    def predict(self, x, lengths, chunk=512):
        """Logits (B,) for ``"last"``, sigmoid outputs (B, L, K) for ``"steps"`` (undefined past each length);
        ``chunk`` sequences at a time (the gate buffer is (4H, L, chunk))."""
        out = []
        for i in range(0, len(x), chunk):
            _, _, hs, _ = self._states(x[i:i + chunk], lengths[i:i + chunk])
            a = self._outputs(hs)
            out.append(a if self.head == "last" else _sigmoid_np(a).transpose(2, 1, 0))
        return np.concatenate(out)

    def loss_and_grads(self, x, lengths, y):
        """Loss of one batch and its gradient in every parameter.

        Args:
            x: ``(B, L, D)``, anything past each length is ignored.
            lengths: ``(B,)`` valid steps, each >= 1 for ``"last"``, >= 0 for ``"steps"``.
            y: ``"last"``: labels ``(B,)`` in {0, 1}; loss = mean sigmoid cross-entropy of the logits.
               ``"steps"``: targets ``(B, L, K)``; loss = sum of |output - target| over valid steps and the
               K outputs / max(K * number of valid steps, 1).

        Returns:
            (loss as float, dict of gradients with the shapes of ``params``).
        """
        p = self.params
        xt, lengths, hs, gates = self._states(x, lengths)
        D, L, B = xt.shape
        H = hs.shape[0]
        a = self._outputs(hs)
        y = np.asarray(y, self.dtype)
        dh_out = self._buffer("dh_out", (H, L, B))
        if self.head == "last":
            loss = np.mean(np.maximum(a, 0) - a * y + np.log1p(np.exp(-np.abs(a))))
            da = ((_sigmoid_np(a) - y) / B).astype(self.dtype)  # (B,)
            dh_out[:, :-1] = 0
            dh_out[:, -1] = p["W_o"] * da  # the final state is each sequence's last valid one
            dW_o = hs[:, -1] @ da[:, None]
            db_o = np.array([da.sum()])
        else:
            K = a.shape[0]
            mask = (np.arange(L)[:, None] < lengths[None, :]).astype(self.dtype)  # (L, B)
            out = _sigmoid_np(a)  # (K, L, B)
            yt = y.transpose(2, 1, 0)
            denom = max(K * float(mask.sum()), 1.0)
            loss = np.sum(np.abs(out - yt) * mask) / denom
            da = (np.sign(out - yt) * mask / denom * out * (1 - out)).astype(self.dtype)  # (K, L, B)
            np.matmul(p["W_o"], da.reshape(K, L * B), out=dh_out.reshape(H, L * B))
            dW_o = hs[:, 1:].reshape(H, L * B) @ da.reshape(K, L * B).T
            db_o = da.sum(axis=(1, 2))
        dpre, dhh = self._buffer("dpre", (3 * H, L, B)), self._buffer("dhh", (3 * H, L, B))
        _backward_kernel(dh_out, lengths, p["W_h"], hs, gates, dpre, dhh)
        dpre2, dhh2 = dpre.reshape(3 * H, L * B), dhh.reshape(3 * H, L * B)
        # The state before step t is hs[:, t], so W_h's gradient pairs hs[:, :L] with dhh.
        grads = dict(W_i=xt.reshape(D, L * B) @ dpre2.T, b_i=dpre2.sum(axis=1),
                     W_h=np.ascontiguousarray(hs[:, :L]).reshape(H, L * B) @ dhh2.T, b_h=dhh2.sum(axis=1),
                     W_o=dW_o.astype(self.dtype), b_o=db_o.astype(self.dtype))
        return float(loss), grads


def one_blas_thread():
    """Context manager: host BLAS on one thread. For these thin products (K = D or 3H) a second thread
    gains little and, on a loaded machine, its waiting cost 30 -> 80 ms CPU a step at 256 x 128 x 28."""
    return threadpool_limits(limits=1, user_api="blas")


def run_repeats(repeat, repeats, iterations, desc, progress=True, workers=None):
    """``[repeat(r, tick) for r in range(repeats)]``, trained at once in ``workers`` threads (the GRU's kernels
    release the GIL; None: one per CPU core, at most ``repeats``), host BLAS on one thread, one tqdm bar of
    ``repeats * iterations`` steps that each repeat advances with ``tick()``. Each repeat must be
    self-contained (its own RandomState, model and solver), so the results do not depend on ``workers``."""
    workers = max(1, min(repeats, workers or os.cpu_count() or 1))
    with tqdm(total=repeats * iterations, desc=desc, disable=not progress) as bar, one_blas_thread():
        def tick():
            bar.update(1)

        if workers == 1:
            return [repeat(rep, tick) for rep in range(repeats)]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(lambda rep: repeat(rep, tick), range(repeats)))


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
