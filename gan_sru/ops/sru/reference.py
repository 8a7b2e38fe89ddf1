"""NumPy reference of the SRU elementwise recurrence: the ground truth the kernels are tested against.

Layouts (time-major, C-contiguous; L steps, B batch, R directions, K projections, D units per direction):

    u    (L, B, R, K, D)   j = 0: z, 1: f pre-activation, 2: r pre-activation, 3: x' (K == 4 only)
    x    (L, B, D)         skip input, used when K == 3: the same x feeds both directions,
         | (L, B, R, D)    or direction r reads x[:, :, r] (the official SRU's bidirectional layer whose
                           input, R*D wide, is the layer below's output)
    bias (R, 2, D)         b_f, b_r
    wc   (R, 2, D) | None  v_f, v_r (the 2018 form; None is the 2017 form)
    c0   (B, R, D)
    mask (L, B) | None     1 valid, 0 padded (right padding)
    h, c (L, B, R, D)      outputs; c holds c_t at every step

Direction 0 walks t = 0..L-1, direction 1 walks t = L-1..0. At a padded step c carries over, h is 0 and
no gradient is produced; the running gradient of c passes through unchanged.
Written for clarity, not speed: plain loops over time, vectorised over (B, D).
"""
import numpy as np

ACTIVATIONS = ("tanh", "identity")


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _steps(L, r):
    return range(L) if r == 0 else range(L - 1, -1, -1)


def _skip(u, x, K, scale_x, t, r):
    if K == 4:
        return scale_x * u[t, :, r, 3]
    return scale_x * (x[t] if x.ndim == 3 else x[t, :, r])


def reference_forward(u, x, bias, c0, wc=None, mask=None, activation="tanh", scale_x=1.0):
    """Returns (h, c), both (L, B, R, D), in the dtype of `u`."""
    L, B, R, K, D = u.shape
    h = np.zeros((L, B, R, D), u.dtype)
    c = np.zeros((L, B, R, D), u.dtype)
    for r in range(R):
        c_prev = c0[:, r].copy()
        for t in _steps(L, r):
            vf = 0.0 if wc is None else wc[r, 0]
            vr = 0.0 if wc is None else wc[r, 1]
            f = _sigmoid(u[t, :, r, 1] + bias[r, 0] + vf * c_prev)
            rr = _sigmoid(u[t, :, r, 2] + bias[r, 1] + vr * c_prev)
            c_new = f * (c_prev - u[t, :, r, 0]) + u[t, :, r, 0]
            g = np.tanh(c_new) if activation == "tanh" else c_new
            xs = _skip(u, x, K, scale_x, t, r)
            h_new = rr * (g - xs) + xs
            if mask is not None:
                m = mask[t][:, None]
                c_new = m * c_new + (1 - m) * c_prev
                h_new = m * h_new
            c[t, :, r] = c_new
            h[t, :, r] = h_new
            c_prev = c_new
    return h, c


def reference_backward(u, x, bias, c0, wc, mask, c, dh, dc, activation="tanh", scale_x=1.0):
    """Gradients of the recurrence given dh and dc, both (L, B, R, D) (None = zeros).

    Returns dict(du (L,B,R,K,D), dx (x's shape) or None, dbias (R,2,D), dwc (R,2,D) or None, dc0 (B,R,D)).
    """
    L, B, R, K, D = u.shape
    dt = u.dtype
    dh = np.zeros((L, B, R, D), dt) if dh is None else dh
    dc = np.zeros((L, B, R, D), dt) if dc is None else dc
    du = np.zeros_like(u)
    dx = np.zeros(x.shape, dt) if K == 3 else None
    dbias = np.zeros((R, 2, D), dt)
    dwc = None if wc is None else np.zeros((R, 2, D), dt)
    dc0 = np.zeros((B, R, D), dt)
    for r in range(R):
        dcur = np.zeros((B, D), dt)
        vf = 0.0 if wc is None else wc[r, 0]
        vr = 0.0 if wc is None else wc[r, 1]
        order = list(_steps(L, r))
        for i in range(L - 1, -1, -1):
            t = order[i]
            c_prev = c0[:, r] if i == 0 else c[order[i - 1], :, r]
            dcur = dcur + dc[t, :, r]
            f = _sigmoid(u[t, :, r, 1] + bias[r, 0] + vf * c_prev)
            rr = _sigmoid(u[t, :, r, 2] + bias[r, 1] + vr * c_prev)
            g = np.tanh(c[t, :, r]) if activation == "tanh" else c[t, :, r]
            dg = (1 - g * g) if activation == "tanh" else 1.0
            xs = _skip(u, x, K, scale_x, t, r)
            m = 1.0 if mask is None else mask[t][:, None]
            dht = dh[t, :, r] * m
            dct = dcur + dht * rr * dg
            drr = dht * (g - xs) * rr * (1 - rr)
            dxs = dht * (1 - rr) * scale_x
            df = dct * (c_prev - u[t, :, r, 0]) * f * (1 - f)
            duz = dct * (1 - f)
            # at a padded step the whole step is the identity on c: gradients are masked out
            df, drr, duz = m * df, m * drr, m * duz
            dcur = m * (dct * f + df * vf + drr * vr) + (1 - m) * dcur
            du[t, :, r, 0] = duz
            du[t, :, r, 1] = df
            du[t, :, r, 2] = drr
            if K == 4:
                du[t, :, r, 3] = dxs
            elif x.ndim == 3:
                dx[t] += dxs
            else:
                dx[t, :, r] += dxs
            dbias[r, 0] += df.sum(0)
            dbias[r, 1] += drr.sum(0)
            if wc is not None:
                dwc[r, 0] += (df * c_prev).sum(0)
                dwc[r, 1] += (drr * c_prev).sum(0)
        dc0[:, r] = dcur
    return dict(du=du, dx=dx, dbias=dbias, dwc=dwc, dc0=dc0)
