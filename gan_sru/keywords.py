"""The Python API's words for config keys: keyword options as dotted config keys, errors back in the API's
words (argument names for config keys and CLI flags), and the checks of its integer arguments."""
import copy

import numpy as np

from gan_sru import ConfigError
from gan_sru.config import SCHEMA

# words of the config and the CLI in errors, as the API's arguments say them
PYTHON_TERMS = (("data.csv_id_column", "sequence_key"), ("data.csv_time_column", "sequence_index"),
                ("data.csv_feature_columns", "feature_columns"), ("--set data.window=", "window="),
                ("--conditions ", "conditions "), ("--condition ", "conditions "), ("--num ", "num_sequences="),
                ("--length ", "length="), ("--seed ", "seed="), ("--start ", "start="), ("--set ", ""))


def aliases():
    """{keyword: dotted key}: unique last parts, top-level keys, and generator_<key> / discriminator_<key>."""
    leaves = {}
    for key in SCHEMA:
        leaves.setdefault(key.split(".")[-1], []).append(key)
    out = {leaf: keys[0] for leaf, keys in leaves.items() if len(keys) == 1}
    out.update({key: key for key in SCHEMA if "." not in key})
    for key in SCHEMA:
        if key.startswith("model."):
            _, net, leaf = key.split(".")
            out[f"{net}_{leaf}"] = key
    return out


ALIASES = aliases()


def config_key(name):
    """A keyword or dotted key -> its dotted config key; ConfigError for an unknown one."""
    if name in SCHEMA:
        return name
    if name in ALIASES:
        return ALIASES[name]
    import difflib

    close = difflib.get_close_matches(name, list(ALIASES) + list(SCHEMA), n=3)
    raise ConfigError(f"SequenceGAN: unknown option {name!r}" + (f"; did you mean {', '.join(close)}?" if close else
                                                                 "; see docs/reference/config.md"))


def in_python_terms(error):
    """The same error with its message in this API's words: argument names for config keys and CLI flags."""
    import re

    text = str(error)
    for old, new in PYTHON_TERMS:
        text = text.replace(old, new)
    names = {key: alias for alias, key in ALIASES.items() if alias != key}
    text = re.sub(r"\b((?:data|train|model\.generator|model\.discriminator)\.\w+)",
                  lambda m: names.get(m.group(1), m.group(1)), text)
    if text == str(error):
        return error
    new = copy.copy(error)
    new.args = (text,)
    return new


def checked_int(name, value, low, high=None):
    """An int argument: TypeError for another type (bool included), ValueError outside [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}={value!r}: expected an integer, got {type(value).__name__}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bounds = f"at least {low}" if high is None else f"from {low} to {high}"
        raise ValueError(f"{name}={value}: expected an integer {bounds}")
    return value
