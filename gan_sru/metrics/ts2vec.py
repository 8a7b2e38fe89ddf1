"""TS2Vec (Yue et al., AAAI 2022) in NumPy: the sequence encoder behind Context-FID.

Network, TS2Vec's ``TSEncoder`` with the settings Diffusion-TS uses for Context-FID (``Encoder``):
  input projection C -> 64 (one affine per step); while training, each step's projection is zeroed with
  probability 0.5 (TS2Vec's binomial timestamp mask); 11 residual blocks, block i = GELU, conv, GELU,
  conv (kernel 3, dilation 2**i, zero 'same' padding) plus the residual, 64 channels except the last
  block (320), a 1x1 convolution on the residual path of the last block; dropout 0.1 on the output
  while training. Layout: channels last, ``(B, L, C)`` in, ``(B, L, 320)`` out. GELU is the exact erf form.
Training (``fit_and_encode``), as TS2Vec's ``fit``: see ``hierarchical_loss`` and ``_crops``.

Written in NumPy with hand-written gradients (checked against finite differences in the tests) because
an nnabla version spent about 350 ms a training step at 8 x 24 x 28 (CPU convolution, GELU and broadcast
multiply), 600 steps 3.5 minutes; this one takes 35-45 ms a step on host BLAS, 2 shared cores. It touches
no nnabla state.
"""
import math

import numpy as np
from scipy.special import erf

HIDDEN = 64
DEPTH = 10
OUTPUT = 320
MASK_P = 0.5
DROPOUT = 0.1
_SQRT_HALF = 1.0 / math.sqrt(2.0)


def _gelu(x):
    """(GELU(x), Phi(x)): the exact form x * Phi(x), and Phi for the backward pass."""
    phi = 0.5 * (1.0 + erf(x * _SQRT_HALF))
    return x * phi, phi


def _gelu_grad(x, phi, dy):
    return dy * (phi + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))


def _mm(x, w):
    """(B, L, K) @ (K, O) as one BLAS call (numpy loops over B for a stacked left operand)."""
    B, L, K = x.shape
    return (x.reshape(B * L, K) @ w).reshape(B, L, w.shape[1])


def _conv(x, w, b, d):
    """Dilated 'same' convolution, kernel 3, channels last: x (B, L, K), w (3, K, O), b (O,) -> (y, cols).
    When d >= L the outer taps only ever read padding, so the centre tap alone is the exact result."""
    L = x.shape[1]
    if d >= L:
        return _mm(x, w[1]) + b, None
    xp = np.pad(x, ((0, 0), (d, d), (0, 0)))
    cols = np.concatenate([xp[:, k * d:k * d + L] for k in range(3)], axis=2)  # (B, L, 3K)
    return _mm(cols, w.reshape(3 * x.shape[2], -1)) + b, cols


def _conv_grad(x, w, d, cols, dy):
    """Gradients (dx, dw, db) of ``_conv``."""
    B, L, K = x.shape
    db = dy.sum(axis=(0, 1))
    dy2 = dy.reshape(-1, dy.shape[2])
    if cols is None:
        dw = np.zeros_like(w)
        dw[1] = x.reshape(-1, K).T @ dy2
        return _mm(dy, w[1].T), dw, db
    dw = (cols.reshape(-1, 3 * K).T @ dy2).reshape(w.shape)
    dcols = _mm(dy, w.reshape(3 * K, -1).T).reshape(B, L, 3, K)
    dxp = np.zeros((B, L + 2 * d, K), x.dtype)
    for k in range(3):
        dxp[:, k * d:k * d + L] += dcols[:, :, k]
    return dxp[:, d:d + L], dw, db


class Encoder:
    """TS2Vec's TSEncoder: parameters in ``self.params`` (name -> array), ``forward`` and ``backward``.

    Args:
        num_features: C. hidden, depth, output: TS2Vec's 64, 10, 320 by default.
        rng: numpy RandomState for torch's default initialisation, U(+-1/sqrt(fan_in)) for weights and biases.
        dtype: float32 (float64 for gradient checks).
    """

    def __init__(self, num_features, rng, hidden=HIDDEN, depth=DEPTH, output=OUTPUT, dtype=np.float32):
        def uniform(shape, fan_in):
            bound = 1.0 / math.sqrt(fan_in)
            return rng.uniform(-bound, bound, shape).astype(dtype)

        self.widths = [hidden] * depth + [output]
        p = {"in_w": uniform((num_features, hidden), num_features), "in_b": uniform((hidden,), num_features)}
        width = hidden
        for i, out in enumerate(self.widths):
            if i == len(self.widths) - 1 or width != out:
                p[f"{i}.proj_w"], p[f"{i}.proj_b"] = uniform((width, out), width), uniform((out,), width)
            p[f"{i}.conv1_w"], p[f"{i}.conv1_b"] = uniform((3, width, out), 3 * width), uniform((out,), 3 * width)
            p[f"{i}.conv2_w"], p[f"{i}.conv2_b"] = uniform((3, out, out), 3 * out), uniform((out,), 3 * out)
            width = out
        self.params = p

    def forward(self, x, keep=None, drop=None, cache=True):
        """x (B, L, C) -> (out (B, L, output), cache). keep (B, L, 1): training's timestamp mask; drop
        (B, L, output): dropout multipliers; None for evaluation. cache=False keeps no block's intermediates
        (the cache is then None): evaluation needs no backward, and each block's arrays are freed as it ends."""
        p = self.params
        h = _mm(x, p["in_w"]) + p["in_b"]
        if keep is not None:
            h = h * keep
        blocks = []
        for i in range(len(self.widths)):
            d = 2 ** i
            g1, phi1 = _gelu(h)
            c1, cols1 = _conv(g1, p[f"{i}.conv1_w"], p[f"{i}.conv1_b"], d)
            g2, phi2 = _gelu(c1)
            c2, cols2 = _conv(g2, p[f"{i}.conv2_w"], p[f"{i}.conv2_b"], d)
            residual = _mm(h, p[f"{i}.proj_w"]) + p[f"{i}.proj_b"] if f"{i}.proj_w" in p else h
            if cache:
                blocks.append((h, g1, phi1, cols1, c1, g2, phi2, cols2))
            h = c2 + residual
        out = h * drop if drop is not None else h
        return out, ({"x": x, "keep": keep, "drop": drop, "blocks": blocks} if cache else None)

    def backward(self, cache, dout):
        """Gradients of every parameter (a dict like ``params``) given dout = dLoss/dout."""
        p, grads = self.params, {}
        dh = dout * cache["drop"] if cache["drop"] is not None else dout
        for i in reversed(range(len(self.widths))):
            d = 2 ** i
            h, g1, phi1, cols1, c1, g2, phi2, cols2 = cache["blocks"][i]
            dg2, grads[f"{i}.conv2_w"], grads[f"{i}.conv2_b"] = _conv_grad(g2, p[f"{i}.conv2_w"], d, cols2, dh)
            dc1 = _gelu_grad(c1, phi2, dg2)
            dg1, grads[f"{i}.conv1_w"], grads[f"{i}.conv1_b"] = _conv_grad(g1, p[f"{i}.conv1_w"], d, cols1, dc1)
            dh_in = _gelu_grad(h, phi1, dg1)
            if f"{i}.proj_w" in p:
                grads[f"{i}.proj_w"] = h.reshape(-1, h.shape[2]).T @ dh.reshape(-1, dh.shape[2])
                grads[f"{i}.proj_b"] = dh.sum(axis=(0, 1))
                dh_in += _mm(dh, p[f"{i}.proj_w"].T)
            else:
                dh_in += dh
            dh = dh_in
        if cache["keep"] is not None:
            dh = dh * cache["keep"]
        x = cache["x"]
        grads["in_w"] = x.reshape(-1, x.shape[2]).T @ dh.reshape(-1, dh.shape[2])
        grads["in_b"] = dh.sum(axis=(0, 1))
        return grads


# ----------------------------------------------------------------------------- loss

def _contrastive(z, partner_offset):
    """Mean over rows of -log softmax(sim)[row, partner], the diagonal left out, with its gradient.

    z (G, R, D): G independent groups of R rows; sim = z z^T per group; row r's partner is
    (r + partner_offset) mod R. Returns (loss, dz)."""
    G, R, _ = z.shape
    sim = z @ z.transpose(0, 2, 1)
    sim[:, np.arange(R), np.arange(R)] = -np.inf
    sim -= sim.max(axis=2, keepdims=True)
    soft = np.exp(sim)
    total = soft.sum(axis=2)
    soft /= total[:, :, None]
    rows = np.arange(R)
    partner = (rows + partner_offset) % R
    loss = -float(np.mean(sim[:, rows, partner] - np.log(total)))  # log-softmax at each row's partner
    dsim = soft
    dsim[:, rows, partner] -= 1.0
    dsim /= G * R
    return loss, dsim @ z + dsim.transpose(0, 2, 1) @ z


def _instance(z1, z2):
    """TS2Vec's instance contrast: at each step, each sequence's two views against the batch's others."""
    B = z1.shape[0]
    if B == 1:
        return 0.0, np.zeros_like(z1), np.zeros_like(z2)
    loss, dz = _contrastive(np.concatenate([z1, z2], axis=0).transpose(1, 0, 2), B)  # (T, 2B, D)
    dz = dz.transpose(1, 0, 2)
    return loss, dz[:B], dz[B:]


def _temporal(z1, z2):
    """TS2Vec's temporal contrast: within each sequence, step t of one view against the other steps."""
    T = z1.shape[1]
    loss, dz = _contrastive(np.concatenate([z1, z2], axis=1), T)  # (B, 2T, D)
    return loss, dz[:, :T], dz[:, T:]


def _pool2(z):
    """Max over pairs of steps, an odd last step dropped: (B, T, D) -> (pooled, argmax (B, T // 2, D))."""
    B, T, D = z.shape
    pairs = z[:, :2 * (T // 2)].reshape(B, T // 2, 2, D)
    arg = pairs.argmax(axis=2)
    return np.take_along_axis(pairs, arg[:, :, None], axis=2)[:, :, 0], arg


def _unpool2(dy, arg, T):
    B, half, D = dy.shape
    dpairs = np.zeros((B, half, 2, D), dy.dtype)
    np.put_along_axis(dpairs, arg[:, :, None], dy[:, :, None], axis=2)
    out = np.zeros((B, T, D), dy.dtype)
    out[:, :2 * half] = dpairs.reshape(B, 2 * half, D)
    return out


def hierarchical_loss(z1, z2, alpha=0.5):
    """TS2Vec's hierarchical contrastive loss of two aligned views z1, z2 (B, T, D), and its gradient.

    At each level: alpha * instance + (1 - alpha) * temporal contrast (temporal only while T > 1); then
    both views are max-pooled by 2 (odd last step dropped) until one step is left; the sum over
    levels is divided by the number of levels. Returns (loss, dz1, dz2)."""
    levels, loss, stack = 0, 0.0, []
    while True:
        T = z1.shape[1]
        li, a1, a2 = _instance(z1, z2)
        loss, g1, g2 = loss + alpha * li, alpha * a1, alpha * a2
        if T > 1:
            lt, b1, b2 = _temporal(z1, z2)
            loss, g1, g2 = loss + (1 - alpha) * lt, g1 + (1 - alpha) * b1, g2 + (1 - alpha) * b2
        levels += 1
        if T == 1:
            stack.append((g1, g2, None, None, T))
            break
        (p1, arg1), (p2, arg2) = _pool2(z1), _pool2(z2)
        stack.append((g1, g2, arg1, arg2, T))
        z1, z2 = p1, p2
    d1, d2 = None, None  # gradients flow back from the coarsest level
    for g1, g2, arg1, arg2, T in reversed(stack):
        if d1 is not None:
            g1, g2 = g1 + _unpool2(d1, arg1, T), g2 + _unpool2(d2, arg2, T)
        d1, d2 = g1, g2
    return loss / levels, d1 / levels, d2 / levels


# ----------------------------------------------------------------------------- training and embedding

BATCH = 8
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 0.01  # torch.optim.AdamW's default, which TS2Vec keeps
ENCODE_STEPS = 65_536  # steps per embedding batch (256 windows of 256): its memory is bounded at any length


def default_iterations(num_values):
    """TS2Vec's default training length: 200 steps for data of at most 100,000 values, else 600."""
    return 200 if num_values <= 100_000 else 600


def _crops(rng, seqs, rows):
    """TS2Vec's two overlapping random crops of each row (one crop length for the batch, one offset per row).

    seqs: list of (L_i, C) arrays; a batch's crops lie within its shortest sequence (TS2Vec's length for
    equal lengths). Returns (view1 (B, n1, C), view2 (B, n2, C), n): the overlap is the last n steps of
    view1 and the first n of view2."""
    ts_l = min(len(seqs[r]) for r in rows)
    crop_l = rng.randint(2, ts_l + 1)
    left = rng.randint(ts_l - crop_l + 1)
    right = left + crop_l
    eleft = rng.randint(left + 1)
    eright = rng.randint(right, ts_l + 1)
    offsets = [rng.randint(-eleft, len(seqs[r]) - eright + 1) for r in rows]
    view1 = np.stack([seqs[r][o + eleft:o + right] for r, o in zip(rows, offsets)])
    view2 = np.stack([seqs[r][o + left:o + eright] for r, o in zip(rows, offsets)])
    return view1, view2, crop_l


class _AdamW:
    """torch.optim.AdamW (betas 0.9, 0.999, eps 1e-8): decoupled decay p -= lr * wd * p, then Adam."""

    def __init__(self, params, lr, weight_decay):
        self.params, self.lr, self.wd, self.t = params, lr, weight_decay, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, grads):
        self.t += 1
        c1, c2 = 1 - 0.9 ** self.t, 1 - 0.999 ** self.t
        for k, p in self.params.items():
            g = grads[k]
            p *= 1 - self.lr * self.wd
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            p -= (self.lr / c1) * self.m[k] / (np.sqrt(self.v[k] / c2) + 1e-8)


def train_encoder(seqs, iterations, rng, progress=True, **sizes):
    """An ``Encoder`` trained on ``seqs`` (list of float32 (L_i, C), each >= 2 steps) as TS2Vec's fit does.

    Batches of 8 (epochs of shuffled batches, the last partial batch dropped); two crops per row
    (``_crops``), each encoded with a fresh timestamp mask and dropout; the hierarchical loss on their
    overlap; AdamW lr 1e-3, weight decay 0.01. The returned encoder holds the running mean of every
    iterate, initial weights included (TS2Vec encodes with this ``AveragedModel``). ``sizes``: hidden,
    depth, output of the Encoder (TS2Vec's defaults when left out)."""
    from tqdm import tqdm

    enc = Encoder(seqs[0].shape[1], rng, **sizes)
    opt = _AdamW(enc.params, LEARNING_RATE, WEIGHT_DECAY)
    average = {k: v.copy() for k, v in enc.params.items()}
    B = min(BATCH, len(seqs))
    order, pos = rng.permutation(len(seqs)), 0
    out_dim = enc.widths[-1]
    for it in tqdm(range(iterations), desc="context-FID encoder", disable=not progress):
        if pos + B > len(order):
            order, pos = rng.permutation(len(seqs)), 0
        rows, pos = order[pos:pos + B], pos + B
        view1, view2, n = _crops(rng, seqs, rows)
        outs, caches = [], []
        for v in (view1, view2):
            keep = (rng.rand(B, v.shape[1], 1) >= MASK_P).astype(np.float32)
            drop = ((rng.rand(B, v.shape[1], out_dim) >= DROPOUT) / (1 - DROPOUT)).astype(np.float32)
            out, cache = enc.forward(v, keep, drop)
            outs.append(out)
            caches.append(cache)
        _, dz1, dz2 = hierarchical_loss(outs[0][:, -n:], outs[1][:, :n])
        d1, d2 = np.zeros_like(outs[0]), np.zeros_like(outs[1])
        d1[:, -n:], d2[:, :n] = dz1, dz2
        g1, g2 = enc.backward(caches[0], d1), enc.backward(caches[1], d2)
        opt.step({k: g1[k] + g2[k] for k in g1})
        for k, p in enc.params.items():
            average[k] += (p - average[k]) / (it + 2)
    enc.params = average
    return enc


def embed(enc, seqs):
    """Every sequence's encoder output max-pooled over its own steps (sequences of one length are
    encoded together, so padding never enters): float64 (N, output). A batch holds about ENCODE_STEPS steps
    and no backward cache."""
    lengths = np.array([len(s) for s in seqs])
    out = np.empty((len(seqs), enc.widths[-1]), np.float64)
    for n in np.unique(lengths):
        idx = np.flatnonzero(lengths == n)
        batch = max(1, ENCODE_STEPS // int(n))
        for i in range(0, len(idx), batch):
            rows = idx[i:i + batch]
            h, _ = enc.forward(np.stack([seqs[r] for r in rows]), cache=False)
            out[rows] = h.max(axis=1)
    return out
