"""Checkpoint selection: score the generator at every checkpoint on training data and keep the best one.

A GAN's samples change from checkpoint to checkpoint by more than most changes of the model do
(docs/results/2026-11-28-wide-diagnostics.md), so the last checkpoint is a draw, not the run's result. With
train.select = "discriminative" the trainer scores the moving-average generator at every checkpoint with
TimeGAN's post-hoc GRU classifier (the paper protocol's settings, SELECT_REPEATS repeats) on
train.select_num generated sequences against as many sequences of the training split, and keeps the
best-scoring checkpoint when it prunes old ones. A checkpoint whose score would make it the best is
measured a second time (train.select_remeasure: other training and generated sequences, other classifier
seeds) and keeps the mean of both, so that one lucky measurement does not choose the run's result: among ~20
checkpoints the lowest single measurement is biased low, most of all where many score alike. `gan-sru
generate`, `evaluate`, `export` and the Python API read that checkpoint unless told another (--checkpoint
STEP | latest).

The held-out split is never read: `gan-sru evaluate` scores the selected checkpoint afresh (other generated
sequences, other classifier seeds, the held-out floor), so its figure is a measurement of the chosen
generator, not of the selection. The real sequences, the noise and the classifier's seeds are pure functions
of (seed, step), so a resumed run scores as an uninterrupted one does; the history travels in every
checkpoint's metadata.
"""
import json
import os
import time

import numpy as np

from gan_sru.files import atomic_write_text

METHODS = ("none", "discriminative")
# One repeat of the classifier is a noisy measurement (the GRU finds the difference in some repeats and not in
# others); three run side by side (threads) on 2 cores.
SELECT_REPEATS = 3
_STREAM = 0x5E1C
FILE = "selection.json"
PICTURE = "selection.png"


class Selection:
    """The scores of a run's checkpoints so far: history [(step, score)], lower is better; best is the step of
    the lowest (the earliest of ties), None before the first."""

    def __init__(self, history=(), seconds=0.0, remeasured=()):
        self.history = [(int(s), float(v)) for s, v in history]
        self.seconds = float(seconds)  # spent scoring, over the run so far
        # {step: (first, second)}: the two measurements of a remeasured step; its history score is their mean
        self.remeasured = {int(s): (float(a), float(b)) for s, a, b in remeasured}

    @property
    def best(self):
        return min(self.history, key=lambda sv: (sv[1], sv[0]))[0] if self.history else None

    def __contains__(self, step):
        """Whether `step` has its score (the same G and seeds give the same score: a step is scored once)."""
        return any(s == step for s, _ in self.history)

    def would_lead(self, score):
        """Whether a new checkpoint scoring `score` would be the best (strictly lower: the earliest of ties)."""
        return not self.history or score < min(v for _, v in self.history)

    def add(self, step, score, seconds=0.0, measurements=None):
        """Record `step`'s score; measurements: its two measurements when it was remeasured (score is their
        mean)."""
        self.history = [(s, v) for s, v in self.history if s != step] + [(int(step), float(score))]
        self.remeasured.pop(int(step), None)
        if measurements is not None:
            self.remeasured[int(step)] = tuple(float(m) for m in measurements)
        self.seconds += seconds

    def to_dict(self, method):
        return {"method": method, "best": self.best, "history": [[s, v] for s, v in self.history],
                "remeasured": [[s, a, b] for s, (a, b) in sorted(self.remeasured.items())],
                "seconds": round(self.seconds, 1)}

    @classmethod
    def from_meta(cls, meta, up_to):
        """The history a checkpoint's metadata holds, cut at step `up_to` (a resumed run redoes later steps)."""
        saved = (meta or {}).get("selection") or {}
        return cls([(s, v) for s, v in saved.get("history", []) if s <= up_to], saved.get("seconds", 0.0),
                   [r for r in saved.get("remeasured", []) if r[0] <= up_to])


def selection_score(sample, train_set, cfg, step, progress=False, draw=0):
    """The discriminative score (lower is better) of generated sequences against the training split.

    sample(num, lengths, attrs, seed) -> (num, L, C) draws from the generator being scored (the caller puts its
    moving-average weights in place); train_set: the run's training Dataset ([0, 1] scale). Uses
    min(train.select_num, training size) sequences of each; the real ones, the lengths, the noise and the
    classifier's seeds are drawn from (seed, step, draw): draw 1, 2, ... measure the same checkpoint again on
    other sequences with other seeds."""
    from gan_sru import metrics

    num = min(cfg.train.select_num, len(train_set))
    rng = np.random.default_rng([cfg.seed, step, _STREAM] + ([draw] if draw else []))
    pick = np.sort(rng.choice(len(train_set), num, replace=False))
    real = [train_set.sequences[i] for i in pick]
    lengths = np.asarray([len(s) for s in real])
    attrs = None if train_set.attributes is None else train_set.attributes[pick]
    fake = sample(num, lengths, attrs, int(rng.integers(2 ** 31)))
    fake = [fake[i, :n] for i, n in enumerate(lengths)]
    settings = metrics.protocol_settings("paper", train_set.num_features)["discriminative"]
    result = metrics.discriminative_score(real, fake, repeats=SELECT_REPEATS, seed=int(rng.integers(2 ** 31)),
                                          progress=progress, **settings)
    return result["mean"]


def score_checkpoint(sample, train_set, cfg, step, selection):
    """Measure checkpoint `step` and record it in `selection` (a Selection): once, or, with
    train.select_remeasure where the first measurement would make it the best, twice (the mean kept)."""
    t0 = time.perf_counter()
    first = selection_score(sample, train_set, cfg, step)
    if not (cfg.train.select_remeasure and selection.would_lead(first)):
        selection.add(step, first, time.perf_counter() - t0)
        return
    second = selection_score(sample, train_set, cfg, step, draw=1)
    selection.add(step, (first + second) / 2, time.perf_counter() - t0, measurements=(first, second))


def write_selection(run_path, selection, method):
    """RUN/selection.json (method, best step, history) and RUN/selection.png (the score at each checkpoint,
    the selected one marked)."""
    from gan_sru.plots import training as plots_training

    atomic_write_text(os.path.join(run_path, FILE), json.dumps(selection.to_dict(method), indent=2) + "\n")
    if selection.history:
        title = f"checkpoint selection: {method} score of each checkpoint (lower is better)"
        plots_training.selection_curve(selection.history, selection.best, os.path.join(run_path, PICTURE), title=title,
                                       remeasured=selection.remeasured)


def read_selected_step(meta):
    """The selected step a checkpoint's metadata names, or None (selection off, or no checkpoint scored)."""
    saved = (meta or {}).get("selection") or {}
    return saved.get("best")
