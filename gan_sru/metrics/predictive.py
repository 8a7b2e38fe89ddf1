"""TimeGAN's predictive score: train on one set, predict every numeric feature one step ahead on the other; MAE."""

import numpy as np

from gan_sru import DataError

from .common import EVAL_BATCH, LEARNING_RATE, batch_index, default_hidden, paired
from .gru import Adam, GRUModel, run_repeats

PREDICTIVE_ITERATIONS = 1000


def predictive_score(train_seqs, test_seqs, iterations=PREDICTIVE_ITERATIONS, batch_size=128, hidden_size=None,
                     learning_rate=LEARNING_RATE, seed=0, progress=True, per_step=False, repeats=1, workers=None,
                     numeric=None):
    """TimeGAN's predictive score (train on synthetic, test on real), every numeric feature a target.

    A one-layer GRU + affine + sigmoid regressor reads all C features at steps 0..t and predicts the K
    numeric features at step t+1, for every t with t+1 < L_i. It is trained on ``train_seqs`` (the generated
    data) with an L1 loss and Adam, then evaluated on ``test_seqs`` (the real data).

    Args:
        train_seqs, test_seqs: sequence sets, same C; at least one sequence of length >= 2 in each.
        iterations, batch_size, learning_rate: training of the regressor.
        hidden_size: GRU width; default ``max(4, 2 * ceil(C / 2))``.
        seed: base seed; repeat r seeds its initialisation and batches with ``(seed, r)``, so repeat 0 is
            the score of ``repeats=1`` and a run of 3 repeats is the first 3 of 10.
        progress: show a tqdm bar over all training steps.
        per_step: also return the MAE of each predicted step.
        repeats: regressors trained, each from its own seed; at least 1.
        numeric: K, how many leading features are numeric, the regression targets; None for all C. Mixed
            data (numeric features first, then the one-hot blocks of categorical ones, as
            gan_sru.data.attributes.Encoding lays them out) passes its numeric count: categories then enter
            as one-hot inputs and are never a target (an MAE on a 0/1 column measures nothing a sigmoid
            regressor should be scored on).
        workers: repeats trained at once, in threads (the GRU's kernels release the GIL); None: one per
            CPU core, at most ``repeats``. The scores do not depend on it.

    Returns:
        dict(mae=float, std=float, scores=list of floats, mae_per_feature=list of K floats): the mean over
        the repeats of the mean absolute error over all valid predicted steps of ``test_seqs`` and all K
        targets, its std over the repeats, each repeat's, and the mean MAE of each target; with per_step also
        mae_per_step: list of L-1 floats, entry t the MAE of predicting step t+1 over the sequences that
        have it and the K targets, averaged over the repeats (NaN where none has).
    """
    names = ("train_seqs", "test_seqs")
    xa, la, xb, lb = paired(train_seqs, test_seqs, "predictive_score", names)
    _, L, C = xa.shape
    K = C if numeric is None else int(numeric)
    if not 1 <= K <= C:
        raise DataError(f"predictive_score: {K} numeric features of {C}; expected 1 to {C} (the targets)")
    for name, lengths in zip(names, (la, lb)):
        if lengths.max() < 2:
            raise DataError(f"predictive_score: {name} has no sequence of length >= 2; expected at least one")
    repeats = int(repeats)
    if repeats < 1:
        raise ValueError(f"predictive_score: repeats {repeats}: expected at least 1")
    H = hidden_size or default_hidden(C)
    inputs_a, target_a = _predictive_arrays(xa, K)
    inputs_b, target_b = _predictive_arrays(xb, K)
    steps_a, steps_b = la - 1, lb - 1  # valid predicted steps of each sequence
    usable = np.flatnonzero(la >= 2)
    mask = (np.arange(L - 1)[None, :] < steps_b[:, None])[:, :, None]  # (N, L-1, 1)

    def repeat(rep, tick):
        rng = np.random.RandomState([seed, rep])
        model = GRUModel(C, H, "steps", rng, num_outputs=K)
        solver = Adam(model.params, learning_rate)
        for _ in range(iterations):
            idx = usable[batch_index(rng, len(usable), batch_size)]
            _, grads = model.loss_and_grads(inputs_a[idx], steps_a[idx], target_a[idx])
            solver.update(grads)
            tick()
        return np.abs(model.predict(inputs_b, steps_b, EVAL_BATCH) - target_b) * mask  # (N, L-1, K)

    errs = run_repeats(repeat, repeats, iterations, "predictive score", progress, workers)
    steps = mask.sum(dtype=np.float64)
    scores = [float(np.sum(err, dtype=np.float64) / (steps * K)) for err in errs]
    out = dict(mae=float(np.mean(scores)), std=float(np.std(scores)), scores=scores,
               mae_per_feature=np.mean([np.sum(err, axis=(0, 1), dtype=np.float64) / steps for err in errs],
                                       axis=0).tolist())
    if per_step:
        with np.errstate(invalid="ignore"):
            out["mae_per_step"] = np.mean([np.sum(err, axis=(0, 2), dtype=np.float64) / (mask.sum(axis=(0, 2)) * K)
                                           for err in errs], axis=0).tolist()
    return out


def _predictive_arrays(x, numeric):
    """Inputs (N, L-1, C): every feature at steps 0..L-2; targets (N, L-1, K): the first ``numeric`` (K)
    features one step later. Sequence i has L_i - 1 valid steps."""
    return np.ascontiguousarray(x[:, :-1]), np.ascontiguousarray(x[:, 1:, :numeric])
