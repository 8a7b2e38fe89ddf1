"""Sample-quality metrics for generated sequences.

Every function takes sequence sets as either a list of float arrays ``(L_i, C)``
(variable length allowed) or one ``(N, L, C)`` array, with values in the training
scale [0, 1].

- ``discriminative_score``: TimeGAN's post-hoc classifier (a GRU) tells real from
  generated; score = |test accuracy - 0.5| (0 is best).
- ``predictive_score``: TimeGAN's train-on-synthetic-test-on-real; a GRU trained on
  one set predicts the last feature one step ahead; MAE on the other set.
- ``mmd2``: unbiased MMD^2 with an RBF kernel on flattened sequences.
- ``pca_projection``, ``autocorrelation``: numbers behind the evaluation pictures.

The two learned metrics build their nnabla graphs in a private parameter
dictionary (never the global parameter scope), clear it after use, draw all
randomness from their own ``numpy.random.RandomState`` and run with auto-forward
off, restoring the previous setting; the GAN's parameters and the global RNGs are
never touched. They run on nnabla's current default context.

The recurrent model is a GRU cell written with plain ``nnabla.functions`` ops and
unrolled over time, with the same equations as ``nnabla.parametric_functions.gru``
(reset gate applied to ``U_n h + b_hn``). It is used instead of ``PF.gru`` because
on CPU it is about twice as fast for these tiny models: one Adam step at L=24, C=5,
hidden 6, batch 128 took 10.5-11.4 ms of CPU time unrolled, 21-29 ms with ``PF.gru``
and 22-28 ms with ``PF.lstm`` (2 shared cores).
"""
import math
from collections import OrderedDict
from contextlib import contextmanager

import nnabla as nn
import nnabla.functions as F
import nnabla.initializer as I
import nnabla.parametric_functions as PF
import nnabla.solvers as S
import numpy as np
from tqdm import tqdm

from gan_sru import DataError

# Defaults keep discriminative_score(repeats=5) on 1000+1000 sequences of 24x5 well
# under a minute on 2 CPU cores (TimeGAN itself trains 2000 / 5000 iterations).
DISCRIMINATIVE_ITERATIONS = 300
PREDICTIVE_ITERATIONS = 1000
LEARNING_RATE = 1e-2  # TimeGAN uses Adam's 1e-3 with 2000 / 5000 iterations
EVAL_BATCH = 512
MEDIAN_MAX_POINTS = 1000  # pooled points used by the median bandwidth heuristic
KERNEL_BLOCK = 1 << 22  # kernel entries computed at once by mmd2 (32 MiB of float64)


# ----------------------------------------------------------------------------- input

def as_padded(seqs, name="seqs"):
    """Validate a sequence set and pad it on the right with zeros.

    Args:
        seqs: list of float arrays ``(L_i, C)`` or one ``(N, L, C)`` array.
        name: how error messages call this argument.

    Returns:
        x: float32 ``(N, L_max, C)``, zero after each sequence's end.
        lengths: int64 ``(N,)``, each >= 1.

    Raises:
        gan_sru.DataError: empty set, wrong rank, mixed feature counts, empty or
            non-finite sequences.
    """
    if isinstance(seqs, np.ndarray):
        if seqs.ndim != 3:
            raise DataError(f"{name}: array of shape {seqs.shape}; expected (N, L, C) or a list of (L_i, C) arrays")
        seqs = list(seqs)
    seqs = list(seqs)
    if not seqs:
        raise DataError(f"{name}: no sequences; expected at least one (L_i, C) array")
    arrays = []
    for i, s in enumerate(seqs):
        a = np.asarray(s, dtype=np.float32)
        if a.ndim != 2:
            raise DataError(f"{name}[{i}]: shape {a.shape}; expected (L_i, C)")
        if a.shape[0] < 1 or a.shape[1] < 1:
            raise DataError(f"{name}[{i}]: shape {a.shape}; expected at least one step and one feature")
        if arrays and a.shape[1] != arrays[0].shape[1]:
            raise DataError(f"{name}[{i}]: {a.shape[1]} features; expected {arrays[0].shape[1]} like {name}[0]")
        if not np.all(np.isfinite(a)):
            t, c = np.argwhere(~np.isfinite(a))[0]
            raise DataError(f"{name}[{i}]: value {a[t, c]} at step {t}, feature {c}; expected finite values")
        arrays.append(a)
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    x = np.zeros((len(arrays), int(lengths.max()), arrays[0].shape[1]), np.float32)
    for i, a in enumerate(arrays):
        x[i, :len(a)] = a
    return x, lengths


def _pair(a, b, fn, names=("real", "fake")):
    """Pad two sets to one common length; check they have the same feature count."""
    xa, la = as_padded(a, f"{fn}: {names[0]}")
    xb, lb = as_padded(b, f"{fn}: {names[1]}")
    if xa.shape[2] != xb.shape[2]:
        raise DataError(f"{fn}: {names[1]} has {xb.shape[2]} features; expected {xa.shape[2]} like {names[0]}")
    L = max(xa.shape[1], xb.shape[1])
    xa = np.pad(xa, ((0, 0), (0, L - xa.shape[1]), (0, 0)))
    xb = np.pad(xb, ((0, 0), (0, L - xb.shape[1]), (0, 0)))
    return xa, la, xb, lb


def _resample(x, lengths, length):
    """Linearly resample each padded sequence's valid part to ``length`` steps: (N, length, C)."""
    N, _, C = x.shape
    out = np.empty((N, length, C), np.float64)
    grid = np.linspace(0.0, 1.0, length)
    for i, n in enumerate(lengths):
        src = np.linspace(0.0, 1.0, n) if n > 1 else np.zeros(1)
        for c in range(C):
            out[i, :, c] = np.interp(grid, src, x[i, :n, c])
    return out


def flatten_pair(a, b, fn="flatten_pair", names=("a", "b")):
    """Two sets as matrices ``(N_a, L*C)``, ``(N_b, L*C)`` (float64) of one common width.

    Equal lengths everywhere: each sequence is flattened as it is. Otherwise every
    sequence is linearly resampled over its own duration to the longest length of
    both sets before flattening, so the comparison is of shapes and ignores length.
    """
    xa, la, xb, lb = _pair(a, b, fn, names)
    L = xa.shape[1]
    if np.all(la == L) and np.all(lb == L):
        return xa.reshape(len(xa), -1).astype(np.float64), xb.reshape(len(xb), -1).astype(np.float64)
    ra, rb = _resample(xa, la, L), _resample(xb, lb, L)
    return ra.reshape(len(ra), -1), rb.reshape(len(rb), -1)


# ----------------------------------------------------------------------------- recurrent model

def _gru(x, hidden_size, rng):
    """GRU over a time-major input, unrolled; parameters in the current parameter scope.

    Args:
        x: nn.Variable ``(L, B, D)``.
        hidden_size: H.
        rng: numpy RandomState for the weight initialisers.

    Returns:
        list of L nn.Variables ``(B, H)``: the state after each step (h_0 = 0).
    """
    L, B, _ = x.shape
    H = hidden_size
    init = I.UniformInitializer((-1.0 / math.sqrt(H), 1.0 / math.sqrt(H)), rng=rng)
    # Input projections of all steps at once, one affine per gate, split into L steps (B, H).
    xr, xz, xn = (_steps(PF.affine(x, H, base_axis=2, w_init=init, b_init=init, name=f"input_{g}"))
                  for g in "rzn")
    h = nn.Variable.from_numpy_array(np.zeros((B, H), np.float32), need_grad=False)
    states = []
    for t in range(L):
        hr, hz, hn = F.split(F.reshape(PF.affine(h, 3 * H, w_init=init, b_init=init, name="hidden"), (B, 3, H)), axis=1)
        r = F.sigmoid(xr[t] + hr)
        z = F.sigmoid(xz[t] + hz)
        n = F.tanh(xn[t] + r * hn)
        # h = (1 - z) * n + z * h. h + (-1) * n rather than h - n: on CPU nnabla's Sub2 (like Mul2)
        # takes 45 us forward, 90 us backward on (256, 6); MulScalar + Add2 take 12 / 17 us.
        h = n + z * (h + F.mul_scalar(n, -1.0))
        states.append(h)
    return states


def _steps(v):
    """A time-major variable (L, B, H) as a list of L variables (B, H)."""
    out = F.split(v, axis=0)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _default_hidden(num_features):
    # Twice TimeGAN's C/2, at least 4: with 300 iterations instead of 2000, a width-3 GRU scored
    # two close sets of 5-feature sines 0.15-0.26 across repeats, a width-6 GRU 0.27-0.28.
    return max(4, 2 * ((num_features + 1) // 2))


def _batch_index(rng, n, batch_size):
    """A batch of row indices: without replacement when the set is large enough."""
    if n >= batch_size:
        return rng.permutation(n)[:batch_size]
    return rng.randint(0, n, batch_size)


def _split_80_20(rng, n, what):
    if n < 2:
        raise DataError(f"discriminative_score: {what} has {n} sequence; expected at least 2 for a train/test split")
    perm = rng.permutation(n)
    n_train = min(n - 1, max(1, int(round(0.8 * n))))
    return perm[:n_train], perm[n_train:]


@contextmanager
def _private_scope(name):
    """Parameter scope ``name`` inside a private dictionary, auto-forward off; both undone on exit."""
    root = OrderedDict()
    auto = nn.get_auto_forward()
    nn.set_auto_forward(False)
    try:
        with nn.parameter_scope(name, root):
            try:
                yield
            finally:
                nn.clear_parameters()
    finally:
        nn.set_auto_forward(auto)
        root.clear()


# ----------------------------------------------------------------------------- discriminative score

def discriminative_score(real, fake, repeats=5, iterations=DISCRIMINATIVE_ITERATIONS, batch_size=128,
                         hidden_size=None, learning_rate=LEARNING_RATE, seed=0, progress=True):
    """TimeGAN's discriminative score: how well a post-hoc GRU classifier tells real from fake.

    Each repeat splits real and fake 80/20 into train/test (its own permutation), trains a
    fresh one-layer GRU + affine classifier (real = 1, fake = 0; sigmoid cross-entropy; Adam)
    for ``iterations`` steps on batches of ``batch_size`` sequences, half real and half fake,
    reading the GRU state at each sequence's last valid step, and scores
    ``|accuracy - 0.5|`` on the test parts. Accuracy is balanced, (TPR + TNR) / 2, which is
    plain accuracy when both test parts have the same size.

    Args:
        real, fake: sequence sets (list of ``(L_i, C)`` or ``(N, L, C)``), same C; at least 2 each.
        repeats: independent repeats (seeds ``(seed, r)``: new split, init and batches).
        iterations: training steps per repeat.
        batch_size: sequences per step, half of each class (TimeGAN: 128 of each).
        hidden_size: GRU width; default ``max(4, 2 * ceil(C / 2))`` (TimeGAN: C // 2).
        learning_rate: Adam step size.
        seed: base seed.
        progress: show a tqdm bar over all training steps.

    Returns:
        dict(mean=float, std=float, scores=list of floats); 0 is indistinguishable, 0.5 is
        perfectly separable.
    """
    xr, lr_, xf, lf = _pair(real, fake, "discriminative_score")
    _, L, C = xr.shape
    H = hidden_size or _default_hidden(C)
    scores = []
    with tqdm(total=repeats * iterations, desc="discriminative score", disable=not progress) as bar:
        for rep in range(repeats):
            rng = np.random.RandomState([seed, rep])
            r_train, r_test = _split_80_20(rng, len(xr), "real")
            f_train, f_test = _split_80_20(rng, len(xf), "fake")
            with _private_scope("discriminative_score"):
                half = max(1, batch_size // 2)
                B = 2 * half
                x, last, logit = _classifier_graph(L, B, C, H, rng)
                label = nn.Variable((B, 1))
                rows = np.arange(B)
                label.d = np.concatenate([np.ones((half, 1)), np.zeros((half, 1))])
                loss = F.mean(F.sigmoid_cross_entropy(logit, label))
                solver = S.Adam(alpha=learning_rate)
                solver.set_parameters(nn.get_parameters())
                for _ in range(iterations):
                    ir = r_train[_batch_index(rng, len(r_train), half)]
                    jf = f_train[_batch_index(rng, len(f_train), half)]
                    x.d = np.concatenate([xr[ir], xf[jf]]).transpose(1, 0, 2)
                    last.d = np.stack([np.concatenate([lr_[ir], lf[jf]]) - 1, rows])
                    solver.zero_grad()
                    loss.forward(clear_no_need_grad=True)
                    loss.backward(clear_buffer=True)
                    solver.update()
                    bar.update(1)
                E = min(EVAL_BATCH, max(len(r_test), len(f_test)))
                xe, last_e, logit_e = _classifier_graph(L, E, C, H, rng)
                tpr = np.mean(_predict(xe, last_e, logit_e, xr[r_test], lr_[r_test] - 1) > 0)
                tnr = np.mean(_predict(xe, last_e, logit_e, xf[f_test], lf[f_test] - 1) <= 0)
            scores.append(abs(0.5 * (tpr + tnr) - 0.5))
    return dict(mean=float(np.mean(scores)), std=float(np.std(scores)), scores=[float(s) for s in scores])


def _classifier_graph(L, B, C, H, rng):
    """x (L, B, C) and last (2, B) = (last valid step, batch row) -> logit (B, 1)."""
    x = nn.Variable((L, B, C))
    last = nn.Variable((2, B))
    last.d = np.stack([np.full(B, L - 1), np.arange(B)])
    states = F.stack(*_gru(x, H, rng), axis=0)  # (L, B, H)
    return x, last, PF.affine(F.gather_nd(states, last), 1, name="output", rng=rng)


def _predict(x, last, logit, data, last_step):
    """Logits for every row of ``data`` (N, L, C) with last valid steps ``last_step`` (N,)."""
    B = x.shape[1]
    out = []
    for i in range(0, len(data), B):
        n = len(data[i:i + B])
        x.d = np.pad(data[i:i + B], ((0, B - n), (0, 0), (0, 0))).transpose(1, 0, 2)
        last.d = np.stack([np.pad(last_step[i:i + B], (0, B - n)), np.arange(B)])
        logit.forward(clear_buffer=True)
        out.append(logit.d[:n, 0].copy())
    return np.concatenate(out)


# ----------------------------------------------------------------------------- predictive score

def predictive_score(train_seqs, test_seqs, iterations=PREDICTIVE_ITERATIONS, batch_size=128, hidden_size=None,
                     learning_rate=LEARNING_RATE, seed=0, progress=True):
    """TimeGAN's predictive score (train on synthetic, test on real).

    A one-layer GRU + affine + sigmoid regressor reads features ``0..C-2`` at steps 0..t and
    predicts the last feature at step t+1, for every t with t+1 < L_i. It is trained on
    ``train_seqs`` (the generated data) with an L1 loss and Adam, then evaluated on
    ``test_seqs`` (the real data).

    Args:
        train_seqs, test_seqs: sequence sets, same C >= 2; at least one sequence of
            length >= 2 in each.
        iterations, batch_size, learning_rate: training of the regressor.
        hidden_size: GRU width; default ``max(4, 2 * ceil(C / 2))``.
        seed: seed of the initialisation and batches.
        progress: show a tqdm bar.

    Returns:
        dict(mae=float): mean absolute error over all valid predicted steps of ``test_seqs``
        (for equal lengths this is TimeGAN's mean of per-sequence MAEs).
    """
    names = ("train_seqs", "test_seqs")
    xa, la, xb, lb = _pair(train_seqs, test_seqs, "predictive_score", names)
    _, L, C = xa.shape
    if C < 2:
        raise DataError(f"predictive_score: sequences have {C} feature; expected at least 2 "
                        "(the other features predict the last one)")
    for name, lengths in zip(names, (la, lb)):
        if lengths.max() < 2:
            raise DataError(f"predictive_score: {name} has no sequence of length >= 2; expected at least one")
    H = hidden_size or _default_hidden(C)
    rng = np.random.RandomState([seed, 0])
    inputs_a, target_a, mask_a = _predictive_arrays(xa, la)
    inputs_b, target_b, mask_b = _predictive_arrays(xb, lb)
    usable = np.flatnonzero(la >= 2)
    with _private_scope("predictive_score"):
        x, pred = _regressor_graph(L - 1, batch_size, C - 1, H, rng)
        target = nn.Variable(pred.shape)
        mask = nn.Variable(pred.shape)
        loss = F.sum(F.absolute_error(pred, target) * mask) / F.maximum_scalar(F.sum(mask), 1.0)
        solver = S.Adam(alpha=learning_rate)
        solver.set_parameters(nn.get_parameters())
        for _ in tqdm(range(iterations), desc="predictive score", disable=not progress):
            idx = usable[_batch_index(rng, len(usable), batch_size)]
            x.d = inputs_a[idx].transpose(1, 0, 2)
            target.d = target_a[idx].T[:, :, None]
            mask.d = mask_a[idx].T[:, :, None]
            solver.zero_grad()
            loss.forward(clear_no_need_grad=True)
            loss.backward(clear_buffer=True)
            solver.update()
        E = min(EVAL_BATCH, len(xb))
        xe, pred_e = _regressor_graph(L - 1, E, C - 1, H, rng)
        abs_sum, count = 0.0, 0.0
        for i in range(0, len(xb), E):
            n = len(inputs_b[i:i + E])
            xe.d = np.pad(inputs_b[i:i + E], ((0, E - n), (0, 0), (0, 0))).transpose(1, 0, 2)
            pred_e.forward(clear_buffer=True)
            p = pred_e.d[:, :n, 0].T  # (n, L-1)
            m = mask_b[i:i + E]
            abs_sum += float(np.sum(np.abs(p - target_b[i:i + E]) * m))
            count += float(m.sum())
    return dict(mae=abs_sum / count)


def _predictive_arrays(x, lengths):
    """Inputs (N, L-1, C-1), targets (N, L-1) and valid-step mask (N, L-1) of the predictive task."""
    inputs = x[:, :-1, :-1]
    target = x[:, 1:, -1]
    mask = (np.arange(x.shape[1] - 1)[None, :] < (lengths[:, None] - 1)).astype(np.float32)
    return inputs, target, mask


def _regressor_graph(L, B, D, H, rng):
    """x (L, B, D) -> per-step prediction in (0, 1), (L, B, 1)."""
    x = nn.Variable((L, B, D))
    states = F.stack(*_gru(x, H, rng), axis=0)
    return x, F.sigmoid(PF.affine(states, 1, base_axis=2, name="output", rng=rng))


# ----------------------------------------------------------------------------- MMD

def median_bandwidth(a, b, max_points=MEDIAN_MAX_POINTS, seed=0):
    """Median heuristic: the median pairwise Euclidean distance of the pooled flattened sets.

    ``a``, ``b``: matrices ``(N, D)`` (see ``flatten_pair``). Uses a random subset of
    ``max_points`` pooled rows (RandomState(seed)) when there are more. Returns a positive
    float; 1.0 when every distance is zero.
    """
    pooled = np.concatenate([np.asarray(a, np.float64), np.asarray(b, np.float64)])
    if len(pooled) > max_points:
        pooled = pooled[np.random.RandomState(seed).choice(len(pooled), max_points, replace=False)]
    sq = np.sum(pooled ** 2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * pooled @ pooled.T, 0.0)
    dist = np.sqrt(d2[np.triu_indices(len(pooled), k=1)])
    med = float(np.median(dist)) if len(dist) else 0.0
    return med if med > 0 else 1.0


def _kernel_sum(x, y, gamma, same):
    """Sum of exp(-gamma * |x_i - y_j|^2) over all pairs (over i != j when ``same``); blocked rows."""
    sx, sy = np.sum(x ** 2, axis=1), np.sum(y ** 2, axis=1)
    rows = max(1, KERNEL_BLOCK // max(1, len(y)))
    total = 0.0
    for i in range(0, len(x), rows):
        d2 = np.maximum(sx[i:i + rows, None] + sy[None, :] - 2.0 * x[i:i + rows] @ y.T, 0.0)
        k = np.exp(-gamma * d2)
        if same:
            k[np.arange(len(k)), np.arange(i, i + len(k))] = 0.0
        total += float(k.sum())
    return total


def mmd2(a, b, bandwidth=None):
    """Unbiased squared maximum mean discrepancy with an RBF kernel.

    ``k(x, y) = exp(-|x - y|^2 / (2 * bandwidth^2))`` on flattened sequences (see
    ``flatten_pair``: variable lengths are resampled to a common length).

    Args:
        a, b: sequence sets, same C, at least 2 sequences each.
        bandwidth: RBF sigma; default ``median_bandwidth`` of the pooled sets.

    Returns:
        float: the unbiased estimate (can be slightly negative when a and b match).
    """
    x, y = flatten_pair(a, b, "mmd2", ("a", "b"))
    for name, m in (("a", x), ("b", y)):
        if len(m) < 2:
            raise DataError(f"mmd2: {name} has {len(m)} sequence; expected at least 2")
    if bandwidth is None:
        bandwidth = median_bandwidth(x, y)
    if not bandwidth > 0:
        raise DataError(f"mmd2: bandwidth {bandwidth}; expected a positive number")
    gamma = 1.0 / (2.0 * float(bandwidth) ** 2)
    n, m = len(x), len(y)
    kxx = _kernel_sum(x, x, gamma, True) / (n * (n - 1))
    kyy = _kernel_sum(y, y, gamma, True) / (m * (m - 1))
    kxy = _kernel_sum(x, y, gamma, False) / (n * m)
    return float(kxx + kyy - 2.0 * kxy)


# ----------------------------------------------------------------------------- PCA, ACF

def pca_projection(real, fake, n=2):
    """Project both sets onto the first ``n`` principal components of the real set.

    Sequences are flattened as in ``flatten_pair``; the mean and components come from the
    real set alone (numpy SVD). Each component's sign is fixed so that its largest-magnitude
    loading is positive.

    Returns:
        (real_proj ``(N_real, n)``, fake_proj ``(N_fake, n)``), float64.
    """
    x, y = flatten_pair(real, fake, "pca_projection", ("real", "fake"))
    if not 1 <= n <= min(x.shape):
        raise DataError(f"pca_projection: n={n}; expected 1..{min(x.shape)} (real set is {x.shape[0]} x {x.shape[1]})")
    mean = x.mean(axis=0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    comps = vt[:n]
    signs = np.sign(comps[np.arange(n), np.argmax(np.abs(comps), axis=1)])
    comps = comps * np.where(signs == 0, 1.0, signs)[:, None]
    return (x - mean) @ comps.T, (y - mean) @ comps.T


def autocorrelation(seqs, max_lag):
    """Mean autocorrelation function per feature.

    For each sequence and feature, ``r_k = sum_t (x_t - m)(x_{t+k} - m) / sum_t (x_t - m)^2``
    (the standard biased ACF estimator, m the sequence's own mean); the result averages
    ``r_k`` over sequences with ``L_i > k`` and non-constant values in that feature.

    Args:
        seqs: sequence set.
        max_lag: largest lag, ``0 <= max_lag < longest length``.

    Returns:
        float64 ``(max_lag + 1, C)``; row 0 is 1. NaN where no sequence contributes.
    """
    x, lengths = as_padded(seqs, "autocorrelation: seqs")
    N, L, C = x.shape
    if not 0 <= max_lag < L:
        raise DataError(f"autocorrelation: max_lag={max_lag}; expected 0..{L - 1} (longest sequence has {L} steps)")
    x = x.astype(np.float64)
    valid = (np.arange(L)[None, :] < lengths[:, None])[:, :, None]  # (N, L, 1)
    mean = x.sum(axis=1, keepdims=True) / lengths[:, None, None]
    xc = np.where(valid, x - mean, 0.0)
    denom = np.sum(xc ** 2, axis=1)  # (N, C)
    out = np.full((max_lag + 1, C), np.nan)
    for k in range(max_lag + 1):
        num = np.sum(xc[:, :L - k] * xc[:, k:], axis=1)  # padded steps are 0
        ok = (lengths[:, None] > k) & (denom > 1e-12 * np.maximum(1.0, np.sum(x ** 2, axis=1)))
        cnt = ok.sum(axis=0)
        r = np.where(ok, num / np.where(ok, denom, 1.0), 0.0)
        out[k] = np.where(cnt > 0, r.sum(axis=0) / np.maximum(cnt, 1), np.nan)
    return out
