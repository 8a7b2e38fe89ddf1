"""The recipe: training choices read from the data once it is loaded, each with its reason.

`data_facts(sequences)` measures the training sequences; `choose(facts, user)` turns the facts into
{dotted key: value} choices with a one-line reason each, keeping every key the user set; `write_recipe`
records them in the run folder as recipe.json and `recipe_lines` prints them one a line.

    facts                          what it is
    width C, length L, count N     features, longest sequence, number of training sequences
    smoothness                     median over features of the lag-1 autocorrelation of the step changes:
                                   near 1 for smooth series, near 0 for white noise, negative for jagged ones
    season                         the lag (2 .. L/2) of the highest autocorrelation peak of the mean feature,
                                   when it is above 0.3, else null
    scale_ratio                    the largest over the smallest feature std

    choice                         rule
    model sizes                    gan_sru/sizes.py's rules from C
    train.batch_size               with N < 512: a quarter of N as a power of two, at least 8; from
                                   LONG_BATCH_LENGTH steps, at most BATCH_STEPS steps a batch (BATCH_PAGE)
    train.terms                    moment, innovation and sequence_moment, weight 1 each (RESULTS_PAGE and
                                   TERMS_PAGE: they improved the scores on real and wide data)
    oscillator bank                on, with per-sequence tuning (RESULTS_PAGE)
    model.generator.bidirectional  on up to 16 features: G's layers read the noise both ways (GENERATOR_PAGE)
    train.lr                       LONG_LR from LONG_LR_LENGTH steps on, else the config's 0.001 (LONG_PAGE)
    model.discriminator.shift      D_SHIFT from 48 to 127 steps (SHIFT_LENGTHS), else 0: D reads real and
                                   generated windows from random starts (SHIFT_PAGE, SHIFT_LENGTH_PAGE)
    train.budget                   15m when neither train.steps nor train.budget is set
"""
import json
import os

import numpy as np

from gan_sru.config.models import TrainConfig
from gan_sru.sizes import rule_sizes

DEFAULT_BUDGET = "15m"
STEP_CAP = 10 ** 7  # steps of a budgeted run: the budget ends it first
RESULTS_PAGE = "docs/results/2026-11-28-recipe.md"
TERMS_PAGE = "docs/results/2026-11-29-sequence-moment.md"
GENERATOR_PAGE = "docs/results/2026-11-30-generator-options.md"
LONG_PAGE = "docs/results/2026-12-02-long-rate.md"
BIDIRECTIONAL_MAX_WIDTH = 16  # widest data given a bidirectional G: 12 features gained, 28 lost (GENERATOR_PAGE)
LONG_LR_LENGTH, LONG_LR = 48, 0.002  # twice the rate from 48 steps: better at 64 steps, not at 24 (LONG_PAGE)
SHIFT_PAGE = "docs/results/2026-12-05-d-shift.md"
D_SHIFT = 0.125  # D's random starts within an eighth of the length: lower and steadier on real data (SHIFT_PAGE)
SHIFT_LENGTH_PAGE = "docs/results/2026-12-06-lags-shift-length.md"
SHIFT_LENGTHS = (48, 128)  # the shift from 48 to 127 steps: better at 64, worse at 24 and 128 (SHIFT_LENGTH_PAGE)
BATCH_PAGE = "docs/results/2026-12-07-long-batch.md"
LONG_BATCH_LENGTH, BATCH_STEPS = 256, 8192  # 32 windows at 256 steps: 3.7x the updates, 0.408 -> 0.265 (BATCH_PAGE)
RECIPE_TERMS = ({"name": "moment", "weight": 1.0}, {"name": "innovation", "weight": 1.0},
                {"name": "sequence_moment", "weight": 1.0})


def _power_of_two_at_most(x):
    """The largest power of two <= x (1 for x < 2)."""
    return 2 ** int(np.floor(np.log2(max(x, 1))))


def _autocorr(x, max_lag):
    """Autocorrelation of a 1-D series at lags 0 .. max_lag (biased estimate; 0 for a constant series)."""
    x = np.asarray(x, float) - np.mean(x)
    var = float(np.dot(x, x))
    if var <= 0 or len(x) < 2:
        return np.zeros(max_lag + 1)
    return np.array([np.dot(x[: len(x) - k], x[k:]) / var for k in range(max_lag + 1)])


def data_facts(sequences):
    """Facts of a list of (L_i, C) arrays: width, length, count, smoothness, season, scale_ratio (dict)."""
    if not sequences:
        raise ValueError("data_facts: no sequences")
    C = int(sequences[0].shape[1])
    L = int(max(len(s) for s in sequences))
    smooth, acf = [], []
    for s in sequences:
        s = np.asarray(s, float)
        if len(s) >= 3:
            d = np.diff(s, axis=0)
            smooth.append([_autocorr(d[:, c], 1)[1] for c in range(C)])
        if len(s) >= 8:
            acf.append(_autocorr(s.mean(axis=1), len(s) // 2))
    pooled = np.concatenate([np.asarray(s, float) for s in sequences])
    std = pooled.std(axis=0)
    season = None
    if acf:
        n = min(len(a) for a in acf)
        mean_acf = np.mean([a[:n] for a in acf], axis=0)
        peaks = [k for k in range(2, n - 1) if mean_acf[k] > mean_acf[k - 1] and mean_acf[k] >= mean_acf[k + 1]]
        best = max(peaks, key=lambda k: mean_acf[k], default=None)
        season = int(best) if best is not None and mean_acf[best] > 0.3 else None
    positive = std[std > 0]
    return {"width": C, "length": L, "count": len(sequences),
            "smoothness": float(np.median(np.mean(smooth, axis=0))) if smooth else 0.0,
            "season": season,
            "scale_ratio": float(positive.max() / positive.min()) if len(positive) else 1.0}


def choose(facts, user=()):
    """{dotted key: (value, reason)} for the keys the recipe sets; a key in `user` (the keys the user set)
    is left out, so the user's value stays."""
    C, L, N = facts["width"], facts["length"], facts["count"]
    user = set(user)
    out = {}
    for key, value in rule_sizes(C).items():
        out[key] = (value, f"size rule for {C} feature{'s' * (C != 1)}")
    default_batch = TrainConfig.model_fields["batch_size"].default
    if N < 4 * default_batch:
        batch = max(8, min(default_batch, _power_of_two_at_most(N / 4)))
        out["train.batch_size"] = (batch, f"{N} training sequences: a quarter of them, as a power of two >= 8")
    if L >= LONG_BATCH_LENGTH:
        batch = max(8, _power_of_two_at_most(BATCH_STEPS / L))
        if batch < out.get("train.batch_size", (default_batch,))[0]:
            out["train.batch_size"] = (batch, f"{L} steps: a batch of {BATCH_STEPS} steps at most trains more "
                                       f"updates in the budget and scored better on long windows ({BATCH_PAGE})")
    if "train.terms" not in user:  # older train.<term>_loss keys arrive as train.terms (config/retired.py)
        out["train.terms"] = (list(RECIPE_TERMS), "the terms that improved the scores on real and wide data "
                              f"({TERMS_PAGE})")
    bank = ("model.generator.oscillators", "model.generator.oscillator_tuning")
    if not user & set(bank):  # the bank and its tuning go together: a config that sets either keeps both
        for key in bank:
            out[key] = (True, f"random-phase sin/cos inputs improved the scores on real data ({RESULTS_PAGE})")
    narrow = C <= BIDIRECTIONAL_MAX_WIDTH
    why = ("G's layers reading the noise both ways improved the scores on real data" if narrow else
           "a second direction costs a third of the steps and scored worse on wide data")
    out["model.generator.bidirectional"] = (narrow, f"{C} feature{'s' * (C != 1)}: {why} ({GENERATOR_PAGE})")
    if L >= LONG_LR_LENGTH:
        out["train.lr"] = (LONG_LR, f"{L} steps: twice the rate scored better on long windows, where a budget "
                           f"trains fewer updates ({LONG_PAGE})")
    if SHIFT_LENGTHS[0] <= L < SHIFT_LENGTHS[1]:
        out["model.discriminator.shift"] = (D_SHIFT, f"{L} steps: D reading real and generated windows from random "
                                            f"starts scored lower and steadier on real data ({SHIFT_PAGE})")
    elif L < SHIFT_LENGTHS[0]:
        out["model.discriminator.shift"] = (0.0, f"{L} steps: D's random starts scored worse on BasicMotions and "
                                            f"better on no real set beyond the seeds' spread ({SHIFT_LENGTH_PAGE})")
    else:
        out["model.discriminator.shift"] = (0.0, f"{L} steps: D's random starts scored far worse on the weather set "
                                            f"at 128 steps ({SHIFT_LENGTH_PAGE})")
    if "train.steps" not in user and "train.budget" not in user:
        out["train.budget"] = (DEFAULT_BUDGET, "neither train.steps nor train.budget set: a time budget")
        out["train.steps"] = (STEP_CAP, "the budget decides when training stops")
    return {k: v for k, v in out.items() if k not in user}


def apply_recipe(cfg, train_sequences):
    """(cfg with the recipe's choices set, facts, choices) for the training sequences; the keys the
    config was given (gan_sru.config.set_keys) are kept, so a resumed run's complete config.yaml
    changes nothing."""
    import copy

    from gan_sru.config import assign, set_keys

    facts = data_facts(train_sequences)
    choices = choose(facts, set_keys(cfg))
    out = copy.deepcopy(cfg)
    for key, (value, _) in choices.items():
        assign(out, key, value)
    return out, facts, choices


def recipe_lines(choices):
    """One printable line per choice: 'recipe: KEY = VALUE (REASON)'."""
    return [f"recipe: {k} = {json.dumps(v)} ({why})" for k, (v, why) in choices.items()]


def write_recipe(run_path, facts, choices):
    """Write RUN/recipe.json: {"facts": ..., "choices": {key: {"value", "reason"}}}; returns its path."""
    from gan_sru.files import atomic_write_text

    path = os.path.join(run_path, "recipe.json")
    doc = {"facts": facts, "choices": {k: {"value": v, "reason": why} for k, (v, why) in choices.items()}}
    atomic_write_text(path, json.dumps(doc, indent=2) + "\n")
    return path
