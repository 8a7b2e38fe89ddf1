"""TimeGAN's discriminative score: a post-hoc GRU classifier tells real from generated; |accuracy - 0.5|."""

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
import numpy as np
from tqdm import tqdm

from .common import EVAL_BATCH, LEARNING_RATE, _batch_index, _default_hidden, _gru, _pair, _private_scope, _split_80_20

# Defaults keep discriminative_score(repeats=5) on 1000+1000 sequences of 24x5 well
# under a minute on 2 CPU cores (TimeGAN itself trains 2000 / 5000 iterations).
DISCRIMINATIVE_ITERATIONS = 300


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
