"""Fused CPU kernels of the SRU recurrence (numba), same contract as `gan_sru.sru_reference`.

Work is split over (batch, direction) rows with `prange`; each row walks time in its direction and the
innermost loop runs over the D contiguous units of one step, so every step reads and writes whole
contiguous rows and LLVM vectorises it. The kernels are dtype-generic: float32 for training (with a
rational tanh, see below), float64 with libm's exact functions for the finite-difference checks.
Compiled on first use and cached on disk.
"""
import math

import numpy as np
from numba import njit, prange

# Rational tanh for float32 (Eigen's minimax fit; max relative error 3.4e-7 against float64 tanh),
# built from mul/add/div only, so the unit loop vectorises; libm's exp/tanh would keep it scalar.
# Constants are float32 so float32 arithmetic is not promoted to float64; error_model="numpy" drops the
# per-division ZeroDivisionError branch that would otherwise keep every loop scalar.
_f = np.float32
_A0, _A1, _A2, _A3 = _f(-2.76076847742355e-16), _f(2.00018790482477e-13), _f(-8.60467152213735e-11), \
    _f(5.12229709037114e-08)
_A4, _A5, _A6 = _f(1.48572235717979e-05), _f(6.37261928875436e-04), _f(4.89352455891786e-03)
_B0, _B1, _B2, _B3 = _f(1.19825839466702e-06), _f(1.18534705686654e-04), _f(2.26843463243900e-03), \
    _f(4.89352518554385e-03)
_CLAMP = _f(7.90531110763549805)
_HALF, _ONE, _ZERO = _f(0.5), _f(1.0), _f(0.0)


@njit(inline="always", fastmath=True, error_model="numpy")
def _tanh_fast(x):
    x = min(max(x, -_CLAMP), _CLAMP)
    x2 = x * x
    p = ((((((_A0 * x2 + _A1) * x2 + _A2) * x2 + _A3) * x2 + _A4) * x2 + _A5) * x2 + _A6) * x
    q = ((_B0 * x2 + _B1) * x2 + _B2) * x2 + _B3
    return p / q


@njit(inline="always", error_model="numpy")
def _tanh(x, fast):
    return _tanh_fast(x) if fast else math.tanh(x)


@njit(inline="always", error_model="numpy")
def _sigmoid(a, fast):
    return _HALF * _tanh_fast(_HALF * a) + _HALF if fast else _ONE / (_ONE + math.exp(-a))


@njit(parallel=True, cache=True, error_model="numpy")
def _forward_kernel(u, xsrc, rs, js, bias, wc, c0, mask, h, c, use_tanh, scale_x, fast):
    """xsrc[t, b, r*rs, js, :] is the skip input: u itself (rs=1, js=3) or x as (L, B, 1, 1, D)."""
    L, B, R, K, D = u.shape
    for job in prange(B * R):
        b = job // R
        r = job % R
        bf, br, vf, vr = bias[r, 0], bias[r, 1], wc[r, 0], wc[r, 1]
        cp = c0[b, r].copy()
        for i in range(L):
            t = i if r == 0 else L - 1 - i
            hrow, crow = h[t, b, r], c[t, b, r]
            if mask[t, b] == 0:
                crow[:] = cp
                hrow[:] = _ZERO
                continue
            uz, uf, ur, xr = u[t, b, r, 0], u[t, b, r, 1], u[t, b, r, 2], xsrc[t, b, r * rs, js]
            for d in range(D):
                cprev = cp[d]
                f = _sigmoid(uf[d] + bf[d] + vf[d] * cprev, fast)
                rr = _sigmoid(ur[d] + br[d] + vr[d] * cprev, fast)
                cn = f * (cprev - uz[d]) + uz[d]
                g = _tanh(cn, fast) if use_tanh else cn
                xs = scale_x * xr[d]
                hrow[d] = rr * (g - xs) + xs
                crow[d] = cn
                cp[d] = cn


@njit(parallel=True, cache=True, error_model="numpy")
def _backward_kernel(u, xsrc, rs, js, bias, wc, c0, mask, c, dh, dc, use_tanh, scale_x, fast,
                     du, dxdst, dbias_part, dwc_part, dc0):
    """dxdst[t, b, r, js, :] receives the skip gradient: du itself (K == 4) or a (L, B, R, 1, D) buffer."""
    L, B, R, K, D = u.shape
    for job in prange(B * R):
        b = job // R
        r = job % R
        bf, br, vf, vr = bias[r, 0], bias[r, 1], wc[r, 0], wc[r, 1]
        dcur = np.zeros(D, u.dtype)
        dbf, dbr, dvf, dvr = dbias_part[b, r, 0], dbias_part[b, r, 1], dwc_part[b, r, 0], dwc_part[b, r, 1]
        dbf[:] = _ZERO
        dbr[:] = _ZERO
        dvf[:] = _ZERO
        dvr[:] = _ZERO
        for i in range(L - 1, -1, -1):
            t = i if r == 0 else L - 1 - i
            tp = t - 1 if r == 0 else t + 1  # the step before t in this direction's order
            dcur += dc[t, b, r]
            if mask[t, b] == 0:
                du[t, b, r] = _ZERO
                dxdst[t, b, r, js] = _ZERO
                continue
            cprow = c0[b, r] if i == 0 else c[tp, b, r]
            uz, uf, ur, xr = u[t, b, r, 0], u[t, b, r, 1], u[t, b, r, 2], xsrc[t, b, r * rs, js]
            crow, dhrow = c[t, b, r], dh[t, b, r]
            duz, duf, dur, dxr = du[t, b, r, 0], du[t, b, r, 1], du[t, b, r, 2], dxdst[t, b, r, js]
            for d in range(D):
                cprev = cprow[d]
                f = _sigmoid(uf[d] + bf[d] + vf[d] * cprev, fast)
                rr = _sigmoid(ur[d] + br[d] + vr[d] * cprev, fast)
                cn = crow[d]
                if use_tanh:
                    g = _tanh(cn, fast)
                    dg = _ONE - g * g
                else:
                    g = cn
                    dg = _ONE
                xs = scale_x * xr[d]
                dht = dhrow[d]
                dct = dcur[d] + dht * rr * dg
                drr = dht * (g - xs) * rr * (_ONE - rr)
                df = dct * (cprev - uz[d]) * f * (_ONE - f)
                duz[d] = dct * (_ONE - f)
                duf[d] = df
                dur[d] = drr
                dxr[d] = dht * (_ONE - rr) * scale_x
                dcur[d] = dct * f + df * vf[d] + drr * vr[d]
                dbf[d] += df
                dbr[d] += drr
                dvf[d] += df * cprev
                dvr[d] += drr * cprev
        dc0[b, r] = dcur


def _prepare(u, x, wc, mask):
    """Fill the optional inputs and build the skip-input source (see `_forward_kernel`)."""
    L, B, R, K, D = u.shape
    dt = u.dtype
    if K == 4:
        xsrc, rs, js = u, 1, 3
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
    _forward_kernel(u, xsrc, rs, js, bias, wc_, c0, mask, h, c, activation == "tanh", u.dtype.type(scale_x),
                    u.dtype == np.float32)
    return h, c


def backward(u, x, bias, c0, wc, mask, c, dh, dc, activation="tanh", scale_x=1.0, out_du=None):
    """Fused backward; same contract and return value as `reference_backward`.

    dx is the skip gradient summed over directions (a view, not a copy, when R == 1).
    """
    L, B, R, K, D = u.shape
    dt = u.dtype
    xsrc, rs, js, wc_, mask = _prepare(u, x, wc, mask)
    dh = np.zeros((L, B, R, D), dt) if dh is None else dh
    dc = np.zeros((L, B, R, D), dt) if dc is None else dc
    du = np.empty_like(u) if out_du is None else out_du
    dxs = du if K == 4 else np.empty((L, B, R, 1, D), dt)
    dbias_part = np.empty((B, R, 2, D), dt)
    dwc_part = np.empty((B, R, 2, D), dt)
    dc0 = np.empty((B, R, D), dt)
    _backward_kernel(u, xsrc, rs, js, bias, wc_, c0, mask, c, dh, dc, activation == "tanh", dt.type(scale_x),
                     dt == np.float32, du, dxs, dbias_part, dwc_part, dc0)
    dx = None
    if K == 3:
        dx = dxs[:, :, 0, 0] if R == 1 else dxs[:, :, :, 0].sum(axis=2)
    return dict(du=du, dx=dx, dbias=dbias_part.sum(axis=0),
                dwc=None if wc is None else dwc_part.sum(axis=0), dc0=dc0)
