"""Fused CPU kernels of the SRU recurrence (numba), same contract as `gan_sru.ops.sru.reference`.

Work is split over (batch, direction) rows with `prange`; each row walks time in its direction and the
innermost loop runs over the D contiguous units of one step, so every step reads and writes whole
contiguous rows and LLVM vectorises it. The kernels are dtype-generic: float32 for training (with a
rational tanh, see below), float64 with libm's exact functions for the finite-difference checks.
Compiled on first use and cached on disk.
"""

import numba
import numpy as np
from numba import njit, prange

from gan_sru.environment import use_workqueue_threads
from gan_sru.fastmath import sigmoid as _sigmoid
from gan_sru.fastmath import tanh as _tanh

use_workqueue_threads(numba)  # OpenMP's spinning workers fight OpenBLAS's threads (gan_sru/environment.py)

_HALF, _ONE, _ZERO = np.float32(0.5), np.float32(1.0), np.float32(0.0)


@njit(parallel=True, cache=True, error_model="numpy")
def _forward_kernel(u, xsrc, rs, js, bias, wc, c0, mask, h, c, use_tanh, scale_x):
    """xsrc[t, b, r*rs, js, :] is the skip input: u itself (rs=1, js=3) or x as (L, B, 1, 1, D)."""
    L, B, R, K, D = u.shape
    for job in prange(B * R):
        b = job // R
        r = job % R
        rx = r * rs
        cp = c0[b, r].copy()
        for i in range(L):
            t = i if r == 0 else L - 1 - i
            if mask[t, b] == 0:
                for d in range(D):
                    c[t, b, r, d] = cp[d]
                    h[t, b, r, d] = _ZERO
                continue
            for d in range(D):
                cprev = cp[d]
                f = _sigmoid(u[t, b, r, 1, d] + bias[r, 0, d] + wc[r, 0, d] * cprev)
                rr = _sigmoid(u[t, b, r, 2, d] + bias[r, 1, d] + wc[r, 1, d] * cprev)
                z = u[t, b, r, 0, d]
                cn = f * (cprev - z) + z
                g = _tanh(cn) if use_tanh else cn
                xs = scale_x * xsrc[t, b, rx, js, d]
                h[t, b, r, d] = rr * (g - xs) + xs
                c[t, b, r, d] = cn
                cp[d] = cn


@njit(parallel=True, cache=True, error_model="numpy")
def _backward_kernel(u, xsrc, rs, js, bias, wc, c0, mask, c, dh, dc, use_tanh, scale_x, du, dxdst, dc0):
    """dxdst[t, b, r, js, :] receives the skip gradient: du itself (K == 4) or a (L, B, R, 1, D) buffer.

    The unit loop works on 1-D row views and writes no running sums: with more arrays written in one loop
    LLVM runs out of runtime alias checks and leaves it scalar (measured 3-5x slower). The bias and v
    gradients are reduced from du afterwards (`backward`)."""
    L, B, R, K, D = u.shape
    for job in prange(B * R):
        b = job // R
        r = job % R
        rx = r * rs
        bf, br, vf, vr = bias[r, 0], bias[r, 1], wc[r, 0], wc[r, 1]
        dcur = np.zeros(D, u.dtype)
        for i in range(L - 1, -1, -1):
            t = i if r == 0 else L - 1 - i
            tp = t - 1 if r == 0 else t + 1  # the step before t in this direction's order
            if mask[t, b] == 0:
                dcur += dc[t, b, r]
                du[t, b, r] = _ZERO
                dxdst[t, b, r, js] = _ZERO
                continue
            cprow = c0[b, r] if i == 0 else c[tp, b, r]
            uz, uf, ur, xr = u[t, b, r, 0], u[t, b, r, 1], u[t, b, r, 2], xsrc[t, b, rx, js]
            crow, dhrow, dcrow = c[t, b, r], dh[t, b, r], dc[t, b, r]
            duz, duf, dur, dxr = du[t, b, r, 0], du[t, b, r, 1], du[t, b, r, 2], dxdst[t, b, r, js]
            for d in range(D):
                cprev = cprow[d]
                f = _sigmoid(uf[d] + bf[d] + vf[d] * cprev)
                rr = _sigmoid(ur[d] + br[d] + vr[d] * cprev)
                g = _tanh(crow[d]) if use_tanh else crow[d]
                dg = _ONE - g * g if use_tanh else _ONE
                xs = scale_x * xr[d]
                dht = dhrow[d]
                dct = dcur[d] + dcrow[d] + dht * rr * dg
                drr = dht * (g - xs) * rr * (_ONE - rr)
                df = dct * (cprev - uz[d]) * f * (_ONE - f)
                duz[d] = dct * (_ONE - f)
                duf[d] = df
                dur[d] = drr
                dxr[d] = dht * (_ONE - rr) * scale_x
                dcur[d] = dct * f + df * vf[d] + drr * vr[d]
        dc0[b, r] = dcur


def _prepare(u, x, wc, mask):
    """Fill the optional inputs and build the skip-input source (see `_forward_kernel`): u[..., 3, :], the
    shared x (L, B, D) as (L, B, 1, 1, D), or the per-direction x (L, B, R, D) as (L, B, R, 1, D)."""
    L, B, R, K, D = u.shape
    dt = u.dtype
    if K == 4:
        xsrc, rs, js = u, 1, 3
    elif x.ndim == 4:
        xsrc, rs, js = np.ascontiguousarray(x).reshape(L, B, R, 1, D), 1, 0
    else:
        xsrc, rs, js = np.ascontiguousarray(x).reshape(L, B, 1, 1, D), 0, 0
    wc_ = np.zeros((R, 2, D), dt) if wc is None else wc
    mask = np.ones((L, B), dt) if mask is None else mask
    return xsrc, rs, js, wc_, mask


def forward(u, x, bias, c0, wc=None, mask=None, activation="tanh", scale_x=1.0, out_h=None, out_c=None):
    """Fused forward; same contract as `reference_forward`. `out_h`/`out_c` may be preallocated outputs."""
    L, B, R, K, D = u.shape
    xsrc, rs, js, wc_, mask = _prepare(u, x, wc, mask)
    h = np.empty((L, B, R, D), u.dtype) if out_h is None else out_h
    c = np.empty((L, B, R, D), u.dtype) if out_c is None else out_c
    _forward_kernel(u, xsrc, rs, js, bias, wc_, c0, mask, h, c, activation == "tanh", u.dtype.type(scale_x))
    return h, c


def previous_states(c, c0):
    """c_prev of every step, (L, B, R, D): c one step earlier in each direction's order, c0 at its start."""
    prev = np.empty_like(c)
    prev[1:, :, 0], prev[0, :, 0] = c[:-1, :, 0], c0[:, 0]
    if c.shape[2] == 2:
        prev[:-1, :, 1], prev[-1, :, 1] = c[1:, :, 1], c0[:, 1]
    return prev


def backward(u, x, bias, c0, wc, mask, c, dh, dc, activation="tanh", scale_x=1.0, out_du=None):
    """Fused backward; same contract and return value as `reference_backward`.

    dx is the skip gradient, x's shape: summed over directions for a shared x, per direction for an
    (L, B, R, D) x (a view, not a copy, when R == 1 or per direction). The bias and v
    gradients are sums over (t, b) of du_f, du_r (and of du_f, du_r times c_prev), which are 0 at padding.
    """
    L, B, R, K, D = u.shape
    dt = u.dtype
    xsrc, rs, js, wc_, mask = _prepare(u, x, wc, mask)
    dh = np.zeros((L, B, R, D), dt) if dh is None else dh
    dc = np.zeros((L, B, R, D), dt) if dc is None else dc
    du = np.empty_like(u) if out_du is None else out_du
    dxs = du if K == 4 else np.empty((L, B, R, 1, D), dt)
    dc0 = np.empty((B, R, D), dt)
    _backward_kernel(u, xsrc, rs, js, bias, wc_, c0, mask, c, dh, dc, activation == "tanh", dt.type(scale_x),
                     du, dxs, dc0)
    dx = None
    if K == 3:
        if x.ndim == 4:
            dx = dxs[:, :, :, 0]
        else:
            dx = dxs[:, :, 0, 0] if R == 1 else dxs[:, :, :, 0].sum(axis=2)
    dgates = du[:, :, :, 1:3].reshape(L * B, R, 2, D)
    dwc = None
    if wc is not None:
        prev = previous_states(c, c0).reshape(L * B, R, 1, D)
        dwc = np.einsum("nrjd,nrjd->rjd", dgates, np.broadcast_to(prev, dgates.shape))
    return dict(du=du, dx=dx, dbias=dgates.sum(axis=0), dwc=dwc, dc0=dc0)
