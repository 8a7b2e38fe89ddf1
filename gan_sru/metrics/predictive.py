"""TimeGAN's predictive score: train on one set, predict the last feature one step ahead on the other; MAE."""

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
import numpy as np
from tqdm import tqdm

from gan_sru import DataError

from .common import EVAL_BATCH, LEARNING_RATE, _batch_index, _default_hidden, _gru, _pair, _private_scope

PREDICTIVE_ITERATIONS = 1000


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
