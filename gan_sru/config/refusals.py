"""Refusals of config values: each pydantic error becomes a ConfigError naming where it came from (file or
override), the dotted key, the value and what the key accepts; `check_value` validates one value alone.
"""
import difflib
import re
import reprlib

from pydantic import ValidationError

from gan_sru import ConfigError
from gan_sru.config.table import SCHEMA, SECTIONS, section_model
from gan_sru.registry import Registry, load_builtin_networks

_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlist = 6
_repr.maxdict = 4
_repr.maxlevel = 3


def show(value):
    """Short repr of a value for messages (bounded size even for huge or recursive values)."""
    return _repr.repr(value)


def kind_name(value):
    return "null" if value is None else type(value).__name__


def choices(field):
    """The allowed values of a field with a fixed set of them (a registry's names in registration order), or None."""
    if isinstance(field.allowed, Registry):
        load_builtin_networks()
        return tuple(field.allowed)
    return field.allowed if isinstance(field.allowed, tuple) else None


def _expected(field):
    """Human description of what a field accepts, e.g. 'an integer >= 1 or null'."""
    kind = field.kind.rstrip("?")
    text = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string",
            "list[str]": "a list of strings",
            "list[dict]": "a list of mappings, each with a 'name' string (e.g. [{name: moment, weight: 1.0}])"}[kind]
    if isinstance(field.allowed, Registry) and not field.allowed:
        text = (f"a registered {field.allowed.kind} name (none is registered: import the module "
                "that registers yours first)")
    elif choices(field) is not None:
        text = "one of " + ", ".join(repr(c) for c in choices(field))
    elif isinstance(field.allowed, str):
        text += f" {field.allowed}"
    elif isinstance(field.allowed, re.Pattern):
        text += f" matching {field.allowed.pattern}"
    if field.kind.endswith("?"):
        text += " or null"
    return text


def _refusal(key, value, error, where):
    """The ConfigError for pydantic's `error` (one entry of ValidationError.errors()) on dotted `key`."""
    field, kind, extra = SCHEMA[key], SCHEMA[key].kind.rstrip("?"), ""
    if value is None:
        pass
    elif kind == "str" and isinstance(value, (bool, int, float)):
        extra = " (quote it in YAML if it is meant as text)"
    elif kind == "list[str]":
        repeated = error["type"] == "value_error" and "repeats" in str(error["ctx"]["error"])
        extra = " (without repeats)" if repeated else " (a non-empty list of non-empty strings)"
    elif choices(field) is not None:
        close = difflib.get_close_matches(str(value), choices(field), n=1)
        extra = f" (did you mean {close[0]!r}?)" if close else ""
    elif error["type"] == "finite_number":
        extra = " (finite)"
    elif kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        if error["type"] == "float_type":
            extra = " (too large)"
        else:  # out of range: shown as the number it was read as
            value = float(value)
    elif error["type"] == "string_too_short":
        extra = " (not empty)"
    elif error["type"] == "value_error" and kind == "list[dict]":
        extra = f" ({error['ctx']['error']})"
    return ConfigError(f"{where}: {key}: got {show(value)} ({kind_name(value)}); expected {_expected(field)}{extra}")


def translate(error, tree, origins, where):
    """ValidationError -> ConfigError for its first error; `origins` names the file or override of each key."""
    first = error.errors()[0]
    parts = []
    for part in first["loc"]:
        if ".".join(parts + [str(part)]) in SCHEMA or ".".join(parts + [str(part)]) in SECTIONS:
            parts.append(str(part))
        else:
            break
    key = ".".join(parts)
    if key not in SCHEMA:  # not expected: the flattening refuses unknown keys and non-mapping sections first
        return ConfigError(f"{where}: {key or 'top level'}: {first['msg']}")
    node = tree
    for part in parts:
        node = node[part]
    return _refusal(key, node, first, origins.get(key, where))


def check_value(key, value, where):
    """Validate one value for dotted `key`; returns it normalised (int -> float for floats).

    Raises ConfigError naming `where`, the key, the value and the expectation.
    """
    section, _, leaf = key.rpartition(".")
    try:
        return getattr(section_model(section).model_validate({leaf: value}), leaf)
    except ValidationError as e:
        raise _refusal(key, value, e.errors()[0], where) from None
