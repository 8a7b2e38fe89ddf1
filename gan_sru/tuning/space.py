"""The search space of `gan-sru tune` and a trial's values as config keys."""
import math

# The search space: (dotted key or pseudo-key, kind, arguments). The learning rate log-uniform; sizes as
# factors of the size rules (gan_sru/sizes.py); D depth; batch; weights of two of G's terms (log-uniform).
# A term's weight is named by the key it had before train.terms, so studies begun then go on.
SPACE = (
    ("train.lr", "log", (1e-4, 3e-3)),
    ("train.batch_size", "choice", (32, 64, 128, 256)),
    ("generator_size_factor", "choice", (0.5, 1.0, 2.0)),  # x the rule's generator.hidden_size
    ("discriminator_size_factor", "choice", (0.5, 1.0, 2.0)),  # x the rule's discriminator.hidden_size
    ("model.discriminator.num_layers", "choice", (1, 2, 3)),
    ("train.moment_loss", "log", (0.01, 10.0)),
    ("train.sequence_moment_loss", "log", (0.01, 10.0)),
)
TERM_WEIGHTS = {"train.moment_loss": "moment", "train.sequence_moment_loss": "sequence_moment"}


def suggest(trial, num_features, terms=None):
    """The trial's values -> {dotted config key: value} (as to_config_values; terms: the config's train.terms)."""
    values = {}
    for key, kind, args in SPACE:
        values[key] = trial.suggest_float(key, *args, log=True) if kind == "log" else \
            trial.suggest_categorical(key, list(args))
    return to_config_values(values, num_features, terms)


def to_config_values(values, num_features, terms=None):
    """A trial's params -> {dotted config key: value}: the size factors become hidden sizes (multiples of 16); the
    term weights become train.terms, the config's `terms` (its train.terms, or None) with the entry of each
    searched term taking its weight (its options kept) or added."""
    from gan_sru.sizes import rule_sizes

    rules = rule_sizes(num_features)
    out, weights = {}, {}
    for key, value in values.items():
        if key in TERM_WEIGHTS:
            weights[TERM_WEIGHTS[key]] = value
        elif key.endswith("_size_factor"):
            net = key.split("_", 1)[0]
            rule = rules[f"model.{net}.hidden_size"]
            out[f"model.{net}.hidden_size"] = max(16, int(math.ceil(rule * value / 16.0)) * 16)
        else:
            out[key] = value
    if weights:
        entries = [dict(t, weight=weights.pop(t["name"])) if t["name"] in weights else dict(t) for t in terms or ()]
        out["train.terms"] = entries + [{"name": name, "weight": w} for name, w in weights.items()]
    return out
