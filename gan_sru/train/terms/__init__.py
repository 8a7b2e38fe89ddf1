"""The generator's extra loss terms, one interface: statistics of the real data computed once per bucket
(the term's reference, or none where the batch's real half is the reference) and a discrepancy of the fake
batch against them, added to G's loss with the term's weight.

    train:
      terms: [{name: moment, weight: 1.0}, {name: predictor, weight: 0.5, lags: 5}]

A term registers under its name (`TERMS.register`), like the networks in gan_sru/registry.py; one module per
term in this package. `term_list(train_cfg)` turns the config into Term objects: `train.terms` when set, else
the older `train.<name>_loss` keys (weight) and their option keys, translated in one place.
"""
from gan_sru import ConfigError
from gan_sru.registry import Registry

TERMS = Registry("generator term")


class Term:
    """One generator term. Subclasses set `name`, `old_key` (the train.* weight key it had before train.terms),
    `options` ({option: (old train.* key, default)}) and define `discrepancy`; `reference` where the term
    compares against statistics computed once from the training data."""

    name = ""
    old_key = ""
    options = {}

    def __init__(self, weight, **opts):
        unknown = sorted(set(opts) - set(self.options))
        if unknown:
            raise ConfigError(f"train.terms: term {self.name!r} has no option {', '.join(map(repr, unknown))}; "
                              f"its options: {', '.join(self.options) or 'none'}")
        self.weight = float(weight)
        self.opts = {k: opts.get(k, default) for k, (_, default) in self.options.items()}

    def applies(self, length, graph):
        """Whether the bucket of `length` (and the step graph `graph`) gets this term; True unless overridden."""
        return True

    def reference(self, steps, length):
        """The real data's statistics for the bucket `length`, from `steps` (a GanSteps: its bucket_sequences,
        _windows_reference and cfg.seed); None: the term compares the fake batch with the real batch."""
        return None

    def discrepancy(self, graph, ref):
        """The term's value, a scalar nnabla Variable, for `graph` (a StepGraph: fake_g (L, B, C), real (L, B, C),
        mask (L, B), moment_impl, attrs, cond) against `ref` (this term's reference for the bucket)."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(weight={self.weight}, {self.opts})"


def term_list(tcfg):
    """The Term objects of a train config section: from `train.terms` when set (entries of weight 0 left out),
    else from the older keys train.<term>_loss > 0 with their options' keys. An unknown name or option is a
    ConfigError naming it."""
    load_terms()
    if getattr(tcfg, "terms", None) is not None:
        out = []
        for i, entry in enumerate(tcfg.terms):
            entry = dict(entry)
            name, weight = entry.pop("name"), entry.pop("weight", 1.0)
            if name not in TERMS:
                raise ConfigError(f"train.terms entry {i}: unknown term {name!r}; known: {', '.join(sorted(TERMS))}")
            if weight:
                out.append(TERMS[name](weight, **entry))
        return out
    return [cls(getattr(tcfg, cls.old_key), **{k: getattr(tcfg, old) for k, (old, _) in cls.options.items()})
            for cls in (TERMS[n] for n in sorted(TERMS)) if getattr(tcfg, cls.old_key, 0) > 0]


def terms_from_old_keys(train):
    """A train section as a mapping with the older train.<term>_loss keys -> the equivalent `terms` list
    ([{name, weight, options}]); the keys it translated are removed from the mapping."""
    load_terms()
    out = []
    for name in sorted(TERMS):
        cls = TERMS[name]
        weight = train.pop(cls.old_key, 0.0)
        opts = {k: train.pop(old) for k, (old, _) in cls.options.items() if old in train}
        if weight:
            out.append({"name": name, "weight": weight, **opts})
    return out


def load_terms():
    """Import the built-in terms (each module registers itself)."""
    from . import (  # noqa: F401
        class_moment,
        innovation,
        marginal,
        moment,
        predictor,
        sequence_moment,
        sequence_whitened,
        step_profile,
        window_covariance,
    )
