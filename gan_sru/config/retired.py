"""Keys a config may still hold from earlier versions of the project.

Term weights (`train.moment_loss: 1.0`) become `train.terms` entries; equal `train.g_lr` and `train.d_lr` become
`train.lr`, unequal ones are refused. A removed option (REMOVED, its results page in PAGES or RESULTS_PAGE, its
reason in REASONS where it is not "it did not improve the scores on real data") at its inert value reads as
without it; at any other value it is refused, naming the key and the page, unless the caller reads a trained run
folder only to sample from it (`removed="drop"`), which it does not affect; the generator's removed options shape
its graph, so a run trained with one is refused even then.
"""
from gan_sru import ConfigError

RESULTS_PAGE = "docs/results/2026-11-28-recipe.md"
SETTLE_PAGE = "docs/results/2026-11-29-settling.md"
OUTPUT_NOISE_PAGE = "docs/results/2026-11-29-output-noise.md"
SCORE_NOISE_PAGE = "docs/results/2026-11-29-score-noise.md"
OPTIMIZER_PAGE = "docs/results/2026-11-29-optimizer.md"
LOSS_PAGE = "docs/results/2026-11-30-loss.md"
GENERATOR_OPTIONS_PAGE = "docs/results/2026-11-30-generator-options.md"
GENERATOR_OUTPUT_PAGE = "docs/results/2026-12-01-generator-output.md"
CAPACITY_PAGE = "docs/results/2026-11-29-capacity.md"
CONDITIONAL_PAGE = "docs/results/2026-11-28-conditional.md"
TAILS_PAGE = "docs/results/2026-12-03-tails.md"
LAGS_PAGE = "docs/results/2026-12-06-lags-shift-length.md"

# old weight key -> (term name, {old option key: the term's option})
TERM_KEYS = {
    "train.moment_loss": ("moment", {}),
    "train.innovation_loss": ("innovation", {}),
    "train.sequence_moment_loss": ("sequence_moment", {"train.sequence_moment_tails": "tails",
                                                       "train.sequence_moment_lags": "lags"}),
    "train.class_moment_loss": ("class_moment", {}),
}
OPTION_KEYS = {old: option for _, options in TERM_KEYS.values() for old, option in options.items()}

# the learning-rate schedule's keys -> their inert values (removed with their own results page)
LR_SCHEDULE = {"train.lr_schedule": "constant", "train.lr_decay_start": 0.5, "train.lr_end_factor": 0.1}
# removed key -> its inert value
REMOVED = {
    "train.marginal_loss": 0.0,
    "train.sequence_whitened_loss": 0.0,
    "train.sequence_whitened_rescale": False,
    "train.window_covariance_loss": 0.0,
    "train.window_covariance_lags": 1,
    "train.window_covariance_whitening": "window",
    "train.predictor_loss": 0.0,
    "train.predictor_lags": 5,
    "train.step_profile_loss": 0.0,
    "train.r1_gamma": 0.0,
    "train.r1_epsilon": 0.01,
    "train.r1_every": 1,
    "train.r1_stride": 1,
    "model.generator.highway_bias": 0.0,
    "model.generator.initial_state": False,
    "model.generator.output_noise_dim": 0,
    "model.generator.layer_norm": False,
    "model.discriminator.pooled_stats": False,
    "model.discriminator.step_features": False,
    "model.discriminator.step_window": 2,
    "model.discriminator.minibatch_std": 0,
    "model.generator.dropout": 0.0,
    "model.discriminator.channels": 64,
    "model.discriminator.kernel_size": 5,
    "train.weight_clip": 0.01,
    "train.loss": "least_squares",
    "model.generator.weight_c": False,
    "model.generator.activation": "tanh",
    "model.generator.output_activation": "sigmoid",
    "model.generator.time_feature": True,
    "train.n_critic": 1,
    "train.beta1": 0.5,
    "model.discriminator.identity_skip": False,
    "train.g_ema_rampup": None,
    **LR_SCHEDULE,
}
SRU_KEYS = ("model.generator.weight_c", "model.generator.activation")  # the generator's SRU options
OUTPUT_KEYS = ("model.generator.output_activation", "model.generator.time_feature")  # G's output and time input
# removed key -> its results page, where not RESULTS_PAGE
OPTIMIZER_KEYS = ("train.weight_clip", "model.generator.dropout", "model.discriminator.channels",
                  "model.discriminator.kernel_size", "train.beta1")
PAGES = {**dict.fromkeys(LR_SCHEDULE, SETTLE_PAGE), **dict.fromkeys(OPTIMIZER_KEYS, OPTIMIZER_PAGE),
         "model.generator.output_noise_dim": OUTPUT_NOISE_PAGE, "model.generator.layer_norm": SCORE_NOISE_PAGE,
         "train.loss": LOSS_PAGE, **dict.fromkeys(SRU_KEYS, GENERATOR_OPTIONS_PAGE),
         **dict.fromkeys(OUTPUT_KEYS + ("train.n_critic",), GENERATOR_OUTPUT_PAGE),
         "model.discriminator.identity_skip": CAPACITY_PAGE, "train.g_ema_rampup": CONDITIONAL_PAGE}
# removed key -> why, where not "it did not improve the scores on real data"
REASONS = {"model.discriminator.identity_skip": "it acts only on a second discriminator layer, and a second layer "
                                                "scored worse",
           "train.g_ema_rampup": "at g_ema 0.995 the initial weights' share of the average is below 1% after 1,000 "
                                 "updates, and the ramp-up did not help conditional runs"}
GENERATOR_KEYS = ("model.generator.highway_bias", "model.generator.initial_state", "model.generator.output_noise_dim",
                  "model.generator.layer_norm") + SRU_KEYS + OUTPUT_KEYS  # change what G computes
# a kept key's removed value -> the value a run folder read to sample from takes instead
REMOVED_VALUES = {("model.discriminator.name", "conv1d"): "sru_bi"}
REMOVED_TERMS = ("marginal", "sequence_whitened", "window_covariance", "predictor", "step_profile")
# (term, removed option) -> (its inert value, its results page); the terms shape only training, not G
REMOVED_OPTIONS = {("sequence_moment", "tails"): (False, TAILS_PAGE), ("sequence_moment", "lags"): (1, LAGS_PAGE)}

# G's and D's learning rates, now one train.lr, and the value both had by default
LR_KEYS = ("train.g_lr", "train.d_lr")
OLD_LR = 0.001

KEYS = set(TERM_KEYS) | set(OPTION_KEYS) | set(REMOVED) | set(LR_KEYS)


def removed_term_error(name, where):
    return ConfigError(f"{where}: the {name!r} generator term was removed: it did not improve the scores on real "
                       f"data ({RESULTS_PAGE}); remove it from train.terms")


def _removed_error(where, key, value, page, fix):
    why = REASONS.get(key, "it did not improve the scores on real data")
    return ConfigError(f"{where}: {key}: {value!r}: this option was removed: {why} ({page}); {fix}")


def translate(flat, origins, removed="refuse"):
    """{dotted key: value} with the keys of KEYS replaced: old term weights (and their options) become a
    train.terms list, removed keys at their inert value are dropped, at another value refused (or dropped with
    removed="drop"). origins: {key: where it came from}, for messages. Returns the new flat mapping."""
    out = {k: v for k, v in flat.items() if k not in KEYS}
    for key in REMOVED:
        if key in flat and flat[key] != REMOVED[key] and (removed != "drop" or key in GENERATOR_KEYS):
            fix = ("a run trained with it cannot be sampled by this version" if removed == "drop" else
                   "remove the key")
            raise _removed_error(origins.get(key, "<config>"), key, flat[key], PAGES.get(key, RESULTS_PAGE), fix)
    for (key, value), instead in REMOVED_VALUES.items():
        if flat.get(key) == value:
            if removed != "drop":
                raise _removed_error(origins.get(key, "<config>"), key, value, OPTIMIZER_PAGE, f"use {instead!r}")
            out[key] = instead  # sampling builds neither the discriminator nor the losses
    _translate_rates(flat, origins, removed, out)
    old = [k for k in flat if k in TERM_KEYS or k in OPTION_KEYS]
    if not old:
        if isinstance(flat.get("train.terms"), list):
            out["train.terms"] = _drop_removed_options(flat["train.terms"], origins.get("train.terms", "<config>"),
                                                       removed)
        return out
    if "train.terms" in flat:
        raise ConfigError(f"{origins.get(old[0], '<config>')}: {old[0]}: the terms are set by train.terms; "
                          f"write it as a train.terms entry (e.g. [{{name: moment, weight: 1.0}}]) and remove {old[0]}")
    terms = []
    for key, (name, options) in TERM_KEYS.items():
        weight = flat.get(key, 0.0)
        if weight:
            terms.append({"name": name, "weight": weight,
                          **{option: flat[o] for o, option in options.items() if o in flat}})
    out["train.terms"] = _drop_removed_options(terms, origins.get(old[0], "<config>"), removed,
                                               {option: o for o, option in OPTION_KEYS.items()})
    return out  # train.terms given (possibly empty): the config chose its terms


def _drop_removed_options(terms, where, removed, names=None):
    """train.terms entries without their REMOVED_OPTIONS: one at its inert value is dropped, at another refused
    naming it (names: option -> the key the config wrote it as), or dropped to sample (removed="drop")."""
    out = []
    for i, entry in enumerate(terms):
        if not isinstance(entry, dict):  # the typed config names a malformed entry
            out.append(entry)
            continue
        entry = dict(entry)
        for (term, option), (inert, page) in REMOVED_OPTIONS.items():
            if entry.get("name") == term and option in entry:
                value = entry.pop(option)
                if value != inert and removed != "drop":
                    key = (names or {}).get(option, f"train.terms entry {i} ({term}) option {option}")
                    raise _removed_error(where, key, value, page, "remove the option")
        out.append(entry)
    return out


def _translate_rates(flat, origins, removed, out):
    """train.g_lr and train.d_lr (an unset one at OLD_LR) -> out["train.lr"] when they are equal numbers; unequal
    rates are refused, unless a run folder is read to sample (`removed="drop"`), which they do not affect."""
    given = [k for k in LR_KEYS if k in flat]
    if not given:
        return
    where = origins.get(given[0], "<config>")
    if "train.lr" in flat:
        raise ConfigError(f"{where}: {given[0]}: the learning rate of G and D is set by train.lr; remove {given[0]}")
    rates = [flat.get(k, OLD_LR) for k in LR_KEYS]
    for key, rate in zip(LR_KEYS, rates):
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise ConfigError(f"{origins.get(key, where)}: {key}: got {rate!r} ({type(rate).__name__}); expected a "
                              "number > 0 (now train.lr, the rate of G and D)")
    if float(rates[0]) != float(rates[1]) and removed != "drop":
        raise ConfigError(f"{where}: train.g_lr {rates[0]!r} and train.d_lr {rates[1]!r}: unequal learning rates "
                          f"were removed: they did not improve the scores on real data ({OPTIMIZER_PAGE}); set one "
                          "train.lr for G and D")
    out["train.lr"] = rates[0]
