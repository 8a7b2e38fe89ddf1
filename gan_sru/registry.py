"""Names the library knows, each defined once, and the network registries that `gan_sru.models` fills.

    from gan_sru.registry import GENERATORS
    @GENERATORS.register("sru")
    def sru_generator(gcfg, noise, mask, num_features, max_len, train=True): ...

The built-in networks (`gan_sru.models`) are imported on the first lookup or listing of names, so importing
`gan_sru` stays light and no caller has to import them. A user adds a network the same way, from a module of
their own imported before training. The config schema takes its allowed values from here.
"""
from gan_sru import ConfigError

STRATEGIES = ("detached", "linked", "recompute")  # how the fake batch is shared by the D and G steps (DESIGN.md)


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

    def names(self):
        """The registered names, sorted, the built-in networks included."""
        load_builtin_networks()
        return sorted(self)

    def lookup(self, name):
        load_builtin_networks()
        if name not in self:
            known = ", ".join(sorted(self)) or "none (import the module that registers yours first)"
            raise ConfigError(f"unknown {self.kind} {name!r}; registered: {known}")
        return self[name]


BUILTIN_NETWORKS = "gan_sru.models"  # the plug-in module of built-in networks, loaded by name like a user's


def load_builtin_networks():
    """Import the built-in networks' module once, which registers its generators and discriminators."""
    import importlib

    importlib.import_module(BUILTIN_NETWORKS)


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
