"""TimeGAN's discriminative score: a post-hoc GRU classifier tells real from generated; |accuracy - 0.5|.

Mixed data: categorical features enter as their one-hot columns like any other input (generated one-hots are
the generator's softmax, real ones exact 0/1, and that difference is part of what the classifier may use)."""

import numpy as np

from .common import EVAL_BATCH, LEARNING_RATE, batch_index, default_hidden, paired, split_80_20
from .gru import Adam, GRUModel, run_repeats

# Defaults keep discriminative_score(repeats=5) on 1000+1000 sequences of 24x5 well
# under a minute on 2 CPU cores (TimeGAN itself trains 2000 / 5000 iterations).
DISCRIMINATIVE_ITERATIONS = 300


def discriminative_score(real, fake, repeats=5, iterations=DISCRIMINATIVE_ITERATIONS, batch_size=128,
                         hidden_size=None, learning_rate=LEARNING_RATE, seed=0, progress=True, workers=None):
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
        workers: repeats trained at once, in threads (the GRU's kernels release the GIL); None: one per
            CPU core, at most ``repeats``. The scores do not depend on it.

    Returns:
        dict(mean=float, std=float, scores=list of floats); 0 is indistinguishable, 0.5 is
        perfectly separable.
    """
    xr, lr_, xf, lf = paired(real, fake, "discriminative_score")
    C = xr.shape[2]
    H = hidden_size or default_hidden(C)

    def repeat(rep, tick):
        rng = np.random.RandomState([seed, rep])
        r_train, r_test = split_80_20(rng, len(xr), "real")
        f_train, f_test = split_80_20(rng, len(xf), "fake")
        half = max(1, batch_size // 2)
        model = GRUModel(C, H, "last", rng)
        solver = Adam(model.params, learning_rate)
        label = np.concatenate([np.ones(half), np.zeros(half)]).astype(np.float32)
        for _ in range(iterations):
            ir = r_train[batch_index(rng, len(r_train), half)]
            jf = f_train[batch_index(rng, len(f_train), half)]
            _, grads = model.loss_and_grads(np.concatenate([xr[ir], xf[jf]]), np.concatenate([lr_[ir], lf[jf]]),
                                            label)
            solver.update(grads)
            tick()
        tpr = np.mean(model.predict(xr[r_test], lr_[r_test], EVAL_BATCH) > 0)
        tnr = np.mean(model.predict(xf[f_test], lf[f_test], EVAL_BATCH) <= 0)
        return abs(0.5 * (tpr + tnr) - 0.5)

    scores = run_repeats(repeat, repeats, iterations, "discriminative score", progress, workers)
    return dict(mean=float(np.mean(scores)), std=float(np.std(scores)), scores=[float(s) for s in scores])

