"""Loading configs: YAML files and `--set` overrides validated into a typed Config, defaults filled in.

Unknown keys are refused with the nearest known key ("did you mean 'train.steps'?"), and every pydantic
error becomes a ConfigError naming the file (or the override), the dotted key, the value and the expectation.
"""
import difflib
import os
import re

from pydantic import BaseModel, ValidationError

from gan_sru import ConfigError
from gan_sru.config import retired
from gan_sru.config.models import Config, plain
from gan_sru.config.refusals import check_value, choices, kind_name, show, translate
from gan_sru.config.table import SCHEMA, SECTIONS
from gan_sru.config.yaml import dump_yaml, parse_yaml
from gan_sru.data.readers import SUFFIXES as DATA_SUFFIXES
from gan_sru.files import atomic_write_text

__all__ = ["DATA_SUFFIXES", "assign", "check_value", "dump_config", "flat_config", "given_tree", "given_values",
           "load_config", "parse_override", "resolve_config", "schema_markdown", "set_keys", "value_at"]


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
            raise ConfigError(f"{where}: {prefix or 'top level'}: key {show(name)} ({kind_name(name)}) "
                              f"is not a non-empty string")
        key = f"{prefix}.{name}" if prefix else name
        if key in SCHEMA or key in retired.KEYS:  # older keys: translated by retired.translate
            flat[key] = value
        elif key in SECTIONS:
            if value is None:  # "train:" with everything commented out
                continue
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: {key}: got {show(value)} ({kind_name(value)}); "
                                  f"expected a mapping (a section with keys)")
            flat.update(_flatten(value, key, where))
        else:
            raise _unknown_key(key, where)
    return flat


def _nest(flat):
    """{dotted key: value} -> nested dict of the keys given."""
    tree = {}
    for key, value in flat.items():
        node = tree
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return tree


def flat_config(cfg):
    """Resolved nested config -> {dotted key: value}, in SCHEMA order (the one flattening of a resolved config)."""
    return {key: value_at(cfg, key) for key in SCHEMA}


def value_at(cfg, key):
    """The value of dotted `key` in the nested config `cfg` (a resolved config or a plain dict)."""
    node = cfg
    for p in key.split("."):
        node = node[p]
    return node


def assign(cfg, key, value):
    """Set dotted `key` of the nested config `cfg` (a resolved config or a plain dict) to `value`."""
    parent, _, leaf = key.rpartition(".")
    (value_at(cfg, parent) if parent else cfg)[leaf] = value


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
    if key not in SCHEMA and key not in SECTIONS and key not in retired.KEYS:
        raise _unknown_key(key, where)
    value = parse_yaml(value_text, where)
    if key in SCHEMA and SCHEMA[key].kind.startswith("str") and isinstance(value, (bool, int, float)):
        value = value_text.strip()  # name=2024 or name=no mean the text, as the key takes only strings
    if key in SECTIONS and not isinstance(value, dict):
        raise ConfigError(f"{where}: {key}: got {show(value)} ({kind_name(value)}); "
                          f"expected a mapping (it is a section), e.g. {key}={{key: value}}")
    return parts, value


# ---------------------------------------------------------------- whole configs

def _check_together(flat, where):
    """Checks that involve several keys."""
    source, path = flat["data.source"], flat["data.path"]
    if source == "file":
        if path is None:
            raise ConfigError(f"{where}: data.path: got null; expected a data file ({', '.join(DATA_SUFFIXES)}) "
                              f"because data.source is 'file'")
        if not path.lower().endswith(DATA_SUFFIXES) and not os.path.isdir(path):
            raise ConfigError(f"{where}: data.path: got {path!r}; expected a file (or glob pattern) ending in "
                              f"{', '.join(DATA_SUFFIXES)}, or a folder of such files")
    elif path is not None:
        raise ConfigError(f"{where}: data.path: got {path!r} but data.source is {source!r}; "
                          f"set data.source: file to read it, or data.path: null")
    if source == "lorenz96" and flat["data.num_features"] < 4:
        raise ConfigError(f"{where}: data.num_features: got {flat['data.num_features']}; expected at least 4 "
                          f"for data.source lorenz96 (each variable couples to two neighbours on each side)")
    if source == "sines_varlen" and flat["data.min_len"] > flat["data.seq_len"]:
        raise ConfigError(f"{where}: data.min_len: got {flat['data.min_len']}; expected at most "
                          f"data.seq_len ({flat['data.seq_len']})")
    id_col, time_col = flat["data.csv_id_column"], flat["data.csv_time_column"]
    attrs, cats = flat["data.attributes"] or [], flat["data.categorical"] or []
    if (attrs or cats) and source not in ("file", "sines_classes"):
        raise ConfigError(f"{where}: data.attributes / data.categorical: got {show(attrs + cats)} but data.source "
                          f"is {source!r}; they name columns of a table (data.source: file) or of sines_classes")
    both = sorted(set(attrs) & set(cats))
    if both:
        raise ConfigError(f"{where}: data.categorical: column {both[0]!r} is also in data.attributes; expected it "
                          "in one of them (attributes are per sequence, categorical features per step)")
    if source == "sines_classes" and not (set(attrs) <= {"class"} and set(cats) <= {"state"}):
        raise ConfigError(f"{where}: data.attributes / data.categorical: got {show(attrs + cats)}; sines_classes "
                          "has the attribute 'class' and the categorical feature 'state'")
    if id_col is not None and id_col == time_col:
        raise ConfigError(f"{where}: data.csv_time_column: got {time_col!r}; expected a column other than "
                          f"data.csv_id_column")
    features = flat["data.csv_feature_columns"] or []
    for col in (id_col, time_col):
        if col in features:
            raise ConfigError(f"{where}: data.csv_feature_columns: got {show(features)}; expected columns "
                              f"other than the id and time columns ({col!r})")


def resolve_config(raw, where="<config>", overrides=(), removed="refuse"):
    """Validate a nested mapping (as read from YAML, or a Config), apply `overrides`, fill defaults.

    raw: dict, Config or None (all defaults). where: name used in messages (usually the file).
    removed: "refuse" a removed option set to a working value, or "drop" it (a run folder read to sample
    from; gan_sru/config/retired.py). Returns the resolved Config; raises ConfigError.
    """
    if raw is None:
        raw = {}
    if isinstance(raw, BaseModel):  # only the keys it was given: what stays unset is the recipe's to choose
        raw = given_tree(raw)
    if isinstance(raw, dict):
        raw = plain(raw)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: top level is {kind_name(raw)}; expected a mapping of sections and keys "
                          f"(e.g. 'train:\\n  steps: 500')")
    flat = _flatten(raw, "", where)
    origins = dict.fromkeys(flat, where)
    for text in overrides:
        parts, value = parse_override(text)
        key, override_where = ".".join(parts), f"--set {text!r}"
        items = _flatten(value, key, override_where) if key in SECTIONS else {key: value}
        flat.update(items)
        origins.update(dict.fromkeys(items, override_where))
    flat = retired.translate(flat, origins, removed)
    tree = _nest(flat)
    try:
        cfg = Config.model_validate(tree)
    except ValidationError as e:
        raise translate(e, tree, origins, where) from None
    _check_together(flat_config(cfg), where + (" (with --set overrides)" if overrides else ""))
    return cfg


def set_keys(cfg):
    """The dotted keys of `cfg` (a Config) that a file, an override or code gave a value; the others hold
    defaults, which the recipe (gan_sru/recipe.py) may replace with values chosen from the data."""
    return set(given_values(cfg))


def given_tree(cfg):
    """The keys of `cfg` that were given, as a nested mapping (resolve_config of it gives `cfg` back)."""
    return _nest(given_values(cfg))


def given_values(cfg):
    """{dotted key: value} of the keys of `cfg` that were given (in every section, whether or not the section
    itself was given: code may set a key of a default section)."""
    out = {}

    def walk(node, prefix):
        for name in type(node).model_fields:
            value = getattr(node, name)
            if isinstance(value, BaseModel):
                walk(value, f"{prefix}{name}.")
            elif name in node.model_fields_set:
                out[prefix + name] = plain(value)
    walk(cfg, "")
    return out


def load_config(path=None, overrides=(), removed="refuse"):
    """Read a YAML config file, apply `--set` overrides ('a.b=value'), validate, fill defaults.

    path: file path or None for the defaults; removed: as resolve_config's. Returns the resolved Config;
    raises ConfigError.
    """
    if path is None:
        return resolve_config({}, "<defaults>", overrides, removed)
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
    return resolve_config(parse_yaml(text, where), where, overrides, removed)


def dump_config(cfg, path, comment=None):
    """Write `cfg` as YAML to `path` atomically (temp file in the same folder, fsync, os.replace), after
    `comment` as `# ` lines if given (a record for people; loading ignores it)."""
    text = "".join(f"# {line}\n" for line in (comment or "").splitlines()) + dump_yaml(plain(cfg))
    atomic_write_text(path, text)


def schema_markdown():
    """The config reference as a Markdown table (key | type | default | allowed | meaning), from the models."""
    def cell(text):
        return str(text).replace("|", "\\|")

    rows = ["| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for key, f in SCHEMA.items():
        default = dump_yaml(f.default).strip().split("\n")[0]  # the YAML spelling: null, true, 0.001
        if choices(f) is not None:
            allowed = " \\| ".join(f"`{c}`" for c in choices(f))
        elif isinstance(f.allowed, re.Pattern):
            allowed = f"`{f.allowed.pattern}`"
        else:
            allowed = cell(f.allowed or "")
        kind = f.kind.rstrip("?") + (" or null" if f.kind.endswith("?") else "")
        rows.append(f"| `{key}` | {kind} | `{cell(default)}` | {allowed} | {cell(f.doc)} |")
    return "\n".join(rows) + "\n"
