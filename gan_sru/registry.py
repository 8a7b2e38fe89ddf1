"""Names the library knows, each defined once, and the network registries that `models` fills.

    from gan_sru.registry import GENERATORS
    @GENERATORS.register("sru")
    def sru_generator(gcfg, noise, mask, num_features, max_len, train=True): ...

`gan_sru` never imports `models`: the entry points (the CLI, train.py, the Python API, the tests'
conftest) import it once, and that fills GENERATORS and DISCRIMINATORS. A user adds a network the same way,
from a module of their own imported before training. The config schema takes its allowed values from here.
"""
from gan_sru import ConfigError

LOSSES = ("non_saturating", "hinge", "least_squares", "wasserstein")
STRATEGIES = ("detached", "linked", "recompute")  # how the fake batch is shared by the D and G steps (DESIGN.md)
OUTPUT_ACTIVATIONS = ("sigmoid", "sigmoid_margin", "identity")


class Registry(dict):
    """name -> builder; `register(name)` is a decorator; `get(name)` refuses an unknown name clearly."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def register(self, name):
        def add(fn):
            if name in self and self[name] is not fn:
                raise ValueError(f"{self.kind} {name!r} is registered twice ({self[name].__module__} and "
                                 f"{fn.__module__})")
            self[name] = fn
            return fn
        return add

    def lookup(self, name):
        if name not in self:
            known = ", ".join(sorted(self)) or "none (import models, or the module that registers yours, first)"
            raise ConfigError(f"unknown {self.kind} {name!r}; registered: {known}")
        return self[name]


GENERATORS = Registry("generator")
DISCRIMINATORS = Registry("discriminator")


def network_modules():
    """The modules whose import filled the network registries: what a fresh (spawned) process imports to see
    the same networks as this one (`import_network_modules`)."""
    return sorted({fn.__module__ for reg in (GENERATORS, DISCRIMINATORS) for fn in reg.values()})


def import_network_modules(names):
    import importlib

    for name in names:
        importlib.import_module(name)
