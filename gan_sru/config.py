"""Config files: one schema table, YAML loading with validation, `--set` overrides, atomic dump.

A config is a nested plain dict once loaded, every key of SCHEMA filled in:

    cfg = load_config("configs/sines.yaml", overrides=["train.steps=500"])
    cfg["train"]["steps"]  # -> 500

Every refusal is a gan_sru.ConfigError whose message names the file (or the override),
the dotted key, the bad value and what was expected.
"""
import copy
import difflib
import math
import os
import re
import reprlib
from collections import namedtuple

import yaml

from gan_sru import ConfigError
from gan_sru.files import atomic_write_text

# kind: int | float | bool | str | list[str], with a trailing "?" when null is allowed.
# allowed: None, a tuple of choices, a numeric range (">= 1", "> 0", "[0, 1)"), or a regex for strings.
Field = namedtuple("Field", "kind default allowed doc")

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")

SCHEMA = {
    "name": Field("str", "sines", _NAME, "run name; the run folder is run_dir/name"),
    "seed": Field("int", 0, ">= 0", "seed of the data, the split, the batches and the weights"),
    "run_dir": Field("str", "runs", None, "parent folder of run folders"),
    # data
    "data.source": Field("str", "sines", ("sines", "sines_varlen", "file"),
                         "built-in sines (TimeGAN protocol), sines of random lengths, or a file"),
    "data.path": Field("str?", None, None,
                       "data file (.npy, .npz or .csv) when source is file; relative to the working folder"),
    "data.num_sequences": Field("int", 10000, ">= 1", "number of built-in sequences"),
    "data.seq_len": Field("int", 24, ">= 2", "built-in sines: length; sines_varlen: longest length"),
    "data.min_len": Field("int", 8, ">= 2", "sines_varlen: shortest length (lengths drawn U{min_len..seq_len})"),
    "data.num_features": Field("int", 5, ">= 1", "number of built-in features"),
    "data.csv_id_column": Field("str", "id", None, "CSV: column holding the sequence id"),
    "data.csv_time_column": Field("str", "time", None, "CSV: column holding the time; rows are sorted by it"),
    "data.csv_feature_columns": Field("list[str]?", None, None, "CSV: feature columns; null means all others"),
    "data.window": Field("int?", None, ">= 2",
                         "file data: cut every sequence into sliding windows of this length; null keeps them whole"),
    "data.window_stride": Field("int", 1, ">= 1", "file data: step between window starts"),
    "data.num_buckets": Field("int", 3, ">= 1", "number of length buckets (quantiles of the lengths)"),
    "data.holdout_fraction": Field("float", 0.1, "[0, 1)", "share of sequences held out as real data for evaluate"),
    # generator
    "model.generator.name": Field("str", "sru", ("sru",), "generator architecture"),
    "model.generator.noise_dim": Field("int", 2, ">= 1", "noise features per time step"),
    "model.generator.static_noise_dim": Field("int", 8, ">= 0",
                                              "noise features drawn once per sequence and fed at every step"),
    "model.generator.time_feature": Field("bool", True, None, "feed t / (longest length - 1) at every step"),
    "model.generator.highway_bias": Field("float", 0.0, None,
                                          "initial reset-gate bias; > 0 starts the output on the smoothed "
                                          "state instead of the skip path"),
    "model.generator.hidden_size": Field("int", 64, ">= 1", "SRU hidden size"),
    "model.generator.num_layers": Field("int", 2, ">= 1", "stacked SRU layers"),
    "model.generator.bidirectional": Field("bool", False, None, "bidirectional SRU layers"),
    "model.generator.weight_c": Field("bool", False, None, "2018 SRU form: v * c[t-1] in both gates"),
    "model.generator.layer_norm": Field("bool", False, None, "layer normalisation of each layer's input"),
    "model.generator.dropout": Field("float", 0.0, "[0, 1)", "dropout between SRU layers"),
    "model.generator.output_activation": Field("str", "sigmoid", ("sigmoid", "identity"),
                                               "activation of the output features (data is scaled to [0, 1])"),
    # discriminator
    "model.discriminator.name": Field("str", "sru_bi", ("sru_bi", "conv1d"),
                                      "bidirectional SRU or 1-D convolutions over time"),
    "model.discriminator.hidden_size": Field("int", 64, ">= 1", "sru_bi: hidden size per direction"),
    "model.discriminator.num_layers": Field("int", 1, ">= 1", "stacked layers"),
    "model.discriminator.channels": Field("int", 64, ">= 1", "conv1d: channels per layer"),
    "model.discriminator.kernel_size": Field("int", 5, ">= 1", "conv1d: kernel size over time"),
    # training
    "train.steps": Field("int", 2000, ">= 1", "generator updates"),
    "train.batch_size": Field("int", 128, ">= 1", "sequences per batch"),
    "train.loss": Field("str", "non_saturating", ("non_saturating", "hinge", "least_squares", "wasserstein"),
                        "GAN loss"),
    "train.strategy": Field("str", "detached", ("detached", "linked", "recompute"),
                            "how the fake batch is shared by the D and G steps"),
    "train.n_critic": Field("int", 1, ">= 1", "discriminator updates per generator update"),
    "train.g_lr": Field("float", 0.001, "> 0", "generator Adam learning rate"),
    "train.d_lr": Field("float", 0.001, "> 0", "discriminator Adam learning rate"),
    "train.beta1": Field("float", 0.5, "[0, 1)", "Adam beta1"),
    "train.beta2": Field("float", 0.999, "[0, 1)", "Adam beta2"),
    "train.g_ema": Field("float", 0.995, "[0, 1)",
                         "decay of a moving average of G's weights, used for sampling (0: off); it smooths out "
                         "the step-to-step oscillation of GAN training"),
    "train.grad_clip": Field("float?", None, "> 0", "clip gradients to this global norm; null: no clipping"),
    "train.weight_clip": Field("float", 0.01, "> 0", "wasserstein only: clip D weights to [-c, c]"),
    "train.checkpoint_every": Field("int", 250, ">= 1", "steps between checkpoints"),
    "train.sample_every": Field("int", 250, ">= 1", "steps between sample pictures"),
    "train.log_every": Field("int", 25, ">= 1", "steps between log lines"),
    "train.keep_checkpoints": Field("int", 3, ">= 1", "newest checkpoints kept on disk"),
}

SECTIONS = sorted({key.rsplit(".", 1)[0] for key in SCHEMA if "." in key}
                  | {key.split(".", 1)[0] for key in SCHEMA if "." in key})
DATA_SUFFIXES = (".npy", ".npz", ".csv")

_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlist = 6
_repr.maxdict = 4
_repr.maxlevel = 3


def _show(value):
    """Short repr of a value for messages (bounded size even for huge or recursive values)."""
    return _repr.repr(value)


def _kind_name(value):
    return "null" if value is None else type(value).__name__


# ---------------------------------------------------------------- YAML dialect

class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys; its scalar patterns are set below the class."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key_node.value!r} (first at line {seen[key].line + 1})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep)


class _Dumper(yaml.SafeDumper):
    """SafeDumper that quotes every string _Loader would read as something else, so dump->load is exact."""


# Plain YAML 1.1 reads 1e-3 as a string (it wants 1.0e-3), crashes on '._', and reads 2001-12-14 as a date.
# Configs have no dates, so: a float pattern that takes 1e-3, no timestamps.
_FLOAT = re.compile(r"""^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |[-+]?\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.VERBOSE)
_DROPPED = ("tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp")
for _cls in (_Loader, _Dumper):
    _cls.yaml_implicit_resolvers = {first: [(tag, rx) for tag, rx in resolvers if tag not in _DROPPED]
                                    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    _cls.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))


def _parse_yaml(text, where):
    """YAML text -> Python value; every parser failure becomes a ConfigError naming `where`."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = e.problem or e.context or "invalid YAML"
        kind = "YAML error" if isinstance(e, yaml.constructor.ConstructorError) else "YAML syntax error"
        raise ConfigError(f"{where}:{line}: {kind}: {problem}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{where}: YAML syntax error: {e}") from None
    except RecursionError:
        raise ConfigError(f"{where}: YAML is nested too deeply") from None
    except Exception as e:  # PyYAML constructors raise ValueError, TypeError, ... on odd scalars
        raise ConfigError(f"{where}: cannot read YAML value ({type(e).__name__}: {e})") from None


# ---------------------------------------------------------------- one value

def _in_range(x, spec):
    """True when the number x lies in spec: '>= a', '> a', '[a, b)', '(a, b]', ..."""
    if spec.startswith(">="):
        return x >= float(spec[2:])
    if spec.startswith(">"):
        return x > float(spec[1:])
    lo, hi = (float(s) for s in spec[1:-1].split(","))
    lo_ok = x >= lo if spec[0] == "[" else x > lo
    hi_ok = x <= hi if spec[-1] == "]" else x < hi
    return lo_ok and hi_ok


def _expected(field):
    """Human description of what a field accepts, e.g. 'an integer >= 1 or null'."""
    kind = field.kind.rstrip("?")
    text = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string",
            "list[str]": "a list of strings"}[kind]
    if isinstance(field.allowed, tuple):
        text = "one of " + ", ".join(repr(c) for c in field.allowed)
    elif isinstance(field.allowed, str):
        text += f" {field.allowed}"
    elif isinstance(field.allowed, re.Pattern):
        text += f" matching {field.allowed.pattern}"
    if field.kind.endswith("?"):
        text += " or null"
    return text


def check_value(key, value, where):
    """Validate one value for dotted `key`; returns it normalised (int -> float for floats).

    Raises ConfigError naming `where`, the key, the value and the expectation.
    """
    field = SCHEMA[key]
    kind = field.kind.rstrip("?")

    def refuse(extra=""):
        raise ConfigError(f"{where}: {key}: got {_show(value)} ({_kind_name(value)}); "
                          f"expected {_expected(field)}{extra}")

    if value is None:
        if field.kind.endswith("?"):
            return None
        refuse()
    if kind == "bool":
        if not isinstance(value, bool):
            refuse()
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            refuse()
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            refuse()
        try:
            value = float(value)
        except OverflowError:
            refuse(" (too large)")
        if not math.isfinite(value):
            refuse(" (finite)")
    elif kind == "str":
        if not isinstance(value, str):
            refuse(" (quote it in YAML if it is meant as text)" if isinstance(value, (bool, int, float)) else "")
        if value == "" and not isinstance(field.allowed, tuple):
            refuse(" (not empty)")
        if isinstance(field.allowed, re.Pattern) and not field.allowed.fullmatch(value):
            refuse()
    elif kind == "list[str]":
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            refuse(" (a non-empty list of non-empty strings)")
        if len(set(value)) != len(value):
            refuse(" (without repeats)")
        return list(value)
    if isinstance(field.allowed, tuple) and value not in field.allowed:
        close = difflib.get_close_matches(str(value), field.allowed, n=1)
        refuse(f" (did you mean {close[0]!r}?)" if close else "")
    if isinstance(field.allowed, str) and not _in_range(value, field.allowed):
        refuse()
    return value


# ---------------------------------------------------------------- keys and nesting

def _unknown_key(key, where):
    close = difflib.get_close_matches(key, list(SCHEMA) + SECTIONS, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else "; see the config reference (schema_markdown())"
    return ConfigError(f"{where}: unknown key {key!r}{hint}")


def _flatten(tree, prefix, where):
    """Nested mapping -> {dotted key: value}, refusing unknown keys and non-mapping sections."""
    flat = {}
    for name, value in tree.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}: {prefix or 'top level'}: key {_show(name)} ({_kind_name(name)}) "
                              f"is not a non-empty string")
        key = f"{prefix}.{name}" if prefix else name
        if key in SCHEMA:
            flat[key] = value
        elif key in SECTIONS:
            if value is None:  # "train:" with everything commented out
                continue
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: {key}: got {_show(value)} ({_kind_name(value)}); "
                                  f"expected a mapping (a section with keys)")
            flat.update(_flatten(value, key, where))
        else:
            raise _unknown_key(key, where)
    return flat


def _nest(flat):
    """{dotted key: value} -> nested dict, in SCHEMA order."""
    tree = {}
    for key in SCHEMA:
        node = tree
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = flat[key]
    return tree


def _flat_of(cfg):
    """Nested resolved config -> {dotted key: value}."""
    flat = {}
    for key in SCHEMA:
        node = cfg
        for p in key.split("."):
            node = node[p]
        flat[key] = node
    return flat


def default_config():
    """The config with every key at its default, as a nested dict."""
    return _nest({key: copy.deepcopy(f.default) for key, f in SCHEMA.items()})


# ---------------------------------------------------------------- overrides

def parse_override(text):
    """'train.steps=500' -> (['train', 'steps'], 500). The value is read as a YAML scalar or list.

    The key may name a leaf or a section (with a mapping value, e.g. 'model.generator={hidden_size: 32}').
    For string keys a value that YAML reads as a number or bool is kept as text (name=2024 -> '2024').
    """
    where = f"--set {text!r}"
    if not isinstance(text, str) or "=" not in text:
        raise ConfigError(f"{where}: expected KEY=VALUE, e.g. train.steps=500")
    key, value_text = text.split("=", 1)
    key = key.strip()
    if not key:
        raise ConfigError(f"{where}: empty key before '='; expected KEY=VALUE, e.g. train.steps=500")
    parts = key.split(".")
    if any(not p for p in parts):
        raise ConfigError(f"{where}: malformed key {key!r} (empty part between dots)")
    if key not in SCHEMA and key not in SECTIONS:
        raise _unknown_key(key, where)
    value = _parse_yaml(value_text, where)
    if key in SCHEMA and SCHEMA[key].kind.startswith("str") and isinstance(value, (bool, int, float)):
        value = value_text.strip()  # name=2024 or name=no mean the text, as the key takes only strings
    if key in SECTIONS and not isinstance(value, dict):
        raise ConfigError(f"{where}: {key}: got {_show(value)} ({_kind_name(value)}); "
                          f"expected a mapping (it is a section), e.g. {key}={{key: value}}")
    return parts, value


# ---------------------------------------------------------------- whole configs

def _check_together(flat, where):
    """Checks that involve several keys."""
    source, path = flat["data.source"], flat["data.path"]
    if source == "file":
        if path is None:
            raise ConfigError(f"{where}: data.path: got null; expected a data file (.npy, .npz or .csv) "
                              f"because data.source is 'file'")
        if os.path.splitext(path)[1].lower() not in DATA_SUFFIXES:
            raise ConfigError(f"{where}: data.path: got {path!r}; expected a file ending in "
                              f"{', '.join(DATA_SUFFIXES)}")
    elif path is not None:
        raise ConfigError(f"{where}: data.path: got {path!r} but data.source is {source!r}; "
                          f"set data.source: file to read it, or data.path: null")
    if source == "sines_varlen" and flat["data.min_len"] > flat["data.seq_len"]:
        raise ConfigError(f"{where}: data.min_len: got {flat['data.min_len']}; expected at most "
                          f"data.seq_len ({flat['data.seq_len']})")
    id_col, time_col = flat["data.csv_id_column"], flat["data.csv_time_column"]
    if id_col == time_col:
        raise ConfigError(f"{where}: data.csv_time_column: got {time_col!r}; expected a column other than "
                          f"data.csv_id_column")
    features = flat["data.csv_feature_columns"] or []
    for col in (id_col, time_col):
        if col in features:
            raise ConfigError(f"{where}: data.csv_feature_columns: got {_show(features)}; expected columns "
                              f"other than the id and time columns ({col!r})")


def resolve_config(raw, where="<config>", overrides=()):
    """Validate a nested mapping (as read from YAML), apply `overrides`, fill defaults.

    raw: dict (or None for all defaults). where: name used in messages (usually the file).
    Returns the resolved nested dict; raises ConfigError.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: top level is {_kind_name(raw)}; expected a mapping of sections and keys "
                          f"(e.g. 'train:\\n  steps: 500')")
    flat = {key: copy.deepcopy(f.default) for key, f in SCHEMA.items()}
    for key, value in _flatten(raw, "", where).items():
        flat[key] = check_value(key, value, where)
    for text in overrides:
        parts, value = parse_override(text)
        key, override_where = ".".join(parts), f"--set {text!r}"
        if key in SECTIONS:
            items = _flatten(value, key, override_where).items()
        else:
            items = [(key, value)]
        for k, v in items:
            flat[k] = check_value(k, v, override_where)
    _check_together(flat, where + (" (with --set overrides)" if overrides else ""))
    return _nest(flat)


def load_config(path=None, overrides=()):
    """Read a YAML config file, apply `--set` overrides ('a.b=value'), validate, fill defaults.

    path: file path or None for the defaults. Returns the resolved nested dict; raises ConfigError.
    """
    if path is None:
        return resolve_config({}, "<defaults>", overrides)
    where = str(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ConfigError(f"{where}: config file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{where}: is a folder; expected a YAML config file") from None
    except OSError as e:
        raise ConfigError(f"{where}: cannot read config file ({e.strerror or e})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{where}: not UTF-8 text (byte {e.start})") from None
    return resolve_config(_parse_yaml(text, where), where, overrides)


def validate_config(cfg, where="<config>"):
    """Check an already resolved nested config (every key present); returns it normalised."""
    if not isinstance(cfg, dict):
        raise ConfigError(f"{where}: top level is {_kind_name(cfg)}; expected a mapping")
    flat = _flatten(cfg, "", where)
    missing = [key for key in SCHEMA if key not in flat]
    if missing:
        raise ConfigError(f"{where}: missing key {missing[0]!r} (a resolved config holds every key)")
    return resolve_config(cfg, where)


def dump_yaml(cfg):
    """Resolved config -> YAML text that load_config reads back to the same dict."""
    return yaml.dump(cfg, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


def dump_config(cfg, path, comment=None):
    """Write `cfg` as YAML to `path` atomically (temp file in the same folder, fsync, os.replace), after
    `comment` as `# ` lines if given (a record for people; loading ignores it)."""
    text = "".join(f"# {line}\n" for line in (comment or "").splitlines()) + dump_yaml(cfg)
    atomic_write_text(path, text)


def schema_markdown():
    """The schema as a Markdown table (key | type | default | allowed | meaning) for the README."""
    def cell(text):
        return str(text).replace("|", "\\|")

    rows = ["| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for key, f in SCHEMA.items():
        default = dump_yaml(f.default).strip().split("\n")[0]  # the YAML spelling: null, true, 0.001
        if isinstance(f.allowed, tuple):
            allowed = " \\| ".join(f"`{c}`" for c in f.allowed)
        elif isinstance(f.allowed, re.Pattern):
            allowed = f"`{f.allowed.pattern}`"
        else:
            allowed = cell(f.allowed or "")
        kind = f.kind.rstrip("?") + (" or null" if f.kind.endswith("?") else "")
        rows.append(f"| `{key}` | {kind} | `{cell(default)}` | {allowed} | {cell(f.doc)} |")
    return "\n".join(rows) + "\n"
