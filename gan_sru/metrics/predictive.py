"""TimeGAN's predictive score: train on one set, predict the last feature one step ahead on the other; MAE."""

import numpy as np
from tqdm import tqdm

from gan_sru import DataError

from .common import EVAL_BATCH, LEARNING_RATE, _batch_index, _default_hidden, _pair
from .gru import Adam, GRUModel, one_blas_thread

PREDICTIVE_ITERATIONS = 1000


def predictive_score(train_seqs, test_seqs, iterations=PREDICTIVE_ITERATIONS, batch_size=128, hidden_size=None,
                     learning_rate=LEARNING_RATE, seed=0, progress=True, per_step=False):
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
        per_step: also return the MAE of each predicted step.

    Returns:
        dict(mae=float): mean absolute error over all valid predicted steps of ``test_seqs``
        (for equal lengths this is TimeGAN's mean of per-sequence MAEs); with per_step also
        mae_per_step: list of L-1 floats, entry t the MAE of predicting step t+1 over the sequences that
        have it (NaN where none has).
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
    inputs_a, target_a = _predictive_arrays(xa)
    inputs_b, target_b = _predictive_arrays(xb)
    steps_a, steps_b = la - 1, lb - 1  # valid predicted steps of each sequence
    usable = np.flatnonzero(la >= 2)
    model = GRUModel(C - 1, H, "steps", rng)
    solver = Adam(model.params, learning_rate)
    with one_blas_thread():
        for _ in tqdm(range(iterations), desc="predictive score", disable=not progress):
            idx = usable[_batch_index(rng, len(usable), batch_size)]
            _, grads = model.loss_and_grads(inputs_a[idx], steps_a[idx], target_a[idx])
            solver.update(grads)
        pred = model.predict(inputs_b, steps_b, EVAL_BATCH)
    mask = np.arange(L - 1)[None, :] < steps_b[:, None]
    err = np.abs(pred - target_b) * mask
    out = dict(mae=float(np.sum(err, dtype=np.float64) / mask.sum()))
    if per_step:
        with np.errstate(invalid="ignore"):
            out["mae_per_step"] = (np.sum(err, axis=0, dtype=np.float64) / mask.sum(axis=0)).tolist()
    return out


def _predictive_arrays(x):
    """Inputs (N, L-1, C-1) and targets (N, L-1) of the predictive task; sequence i has L_i - 1 valid steps."""
    return np.ascontiguousarray(x[:, :-1, :-1]), np.ascontiguousarray(x[:, 1:, -1])
