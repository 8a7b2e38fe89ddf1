"""The generator's extra loss terms, one interface: statistics of the real data computed once per bucket (the
term's reference) and a discrepancy of the fake batch against them, added to G's loss with the term's weight.

    train:
      terms: [{name: moment, weight: 1.0}, {name: sequence_moment, weight: 1.0}]

A term registers under its name (`TERMS.register`), like the networks in gan_sru/registry.py; one module per
term in this package. `term_list(train_cfg)` turns `train.terms` into Term objects (older configs' *_loss keys
become `train.terms` entries when the config is read: gan_sru/config/retired.py).
"""
from abc import ABC, abstractmethod
from typing import NamedTuple, Optional

import numpy as np

from gan_sru import ConfigError
from gan_sru.config import retired
from gan_sru.registry import Registry

TERMS = Registry("generator term")


class RealData(NamedTuple):
    """The real sequences of one bucket that the terms' references are computed from (GanSteps.real_data)."""

    x: np.ndarray  # (L, N, C), 0 at padded steps
    mask: np.ndarray  # (L, N)
    attrs: Optional[np.ndarray] = None  # (N, A) encoded attributes (conditional runs)


class Term(ABC):
    """One generator term. Subclasses set `name`, `options` ({option: default}) and define `reference` and
    `discrepancy`; `applies` where a bucket can go without it."""

    name = ""
    options = {}

    def __init__(self, weight, **opts):
        unknown = sorted(set(opts) - set(self.options))
        if unknown:
            raise ConfigError(f"train.terms: term {self.name!r} has no option {', '.join(map(repr, unknown))}; "
                              f"its options: {', '.join(self.options) or 'none'}")
        self.weight = float(weight)
        self.opts = {k: opts.get(k, default) for k, default in self.options.items()}

    def applies(self, length, graph):
        """Whether the bucket of `length` (and the step graph `graph`) gets this term; True unless overridden."""
        return True

    @abstractmethod
    def reference(self, data, graph):
        """The term's statistics of the real data `data` (a RealData of the bucket), NumPy, computed once when
        the bucket's step graph is built."""

    @abstractmethod
    def discrepancy(self, graph, reference):
        """The term's value, a scalar nnabla Variable, for `graph` (a StepGraph: fake_g (L, B, C), mask (L, B),
        moment_impl, attrs, cond) against `reference`."""

    def __repr__(self):
        return f"{type(self).__name__}(weight={self.weight}, {self.opts})"


def term_list(tcfg):
    """The Term objects of a train config section's `train.terms` (None: no terms; entries of weight 0 left
    out). An unknown or removed name, or an unknown option, is a ConfigError naming it."""
    load_terms()
    out = []
    for i, entry in enumerate(tcfg.terms or ()):
        entry = dict(entry)
        name, weight = entry.pop("name"), entry.pop("weight", 1.0)
        if name in retired.REMOVED_TERMS:
            raise retired.removed_term_error(name, f"train.terms entry {i}")
        if name not in TERMS:
            raise ConfigError(f"train.terms entry {i}: unknown term {name!r}; known: {', '.join(sorted(TERMS))}")
        if weight:
            out.append(TERMS[name](weight, **entry))
    return out


def load_terms():
    """Import the built-in terms (each module registers itself)."""
    from . import class_moment, innovation, moment, sequence_moment  # noqa: F401
