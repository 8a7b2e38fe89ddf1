"""The flat table of config keys, {dotted key: Field(kind, default, allowed, doc)}, read from the typed
models (gan_sru.config.models): what the loader checks keys against and the config reference shows."""
from collections import namedtuple
from typing import Literal, Union, get_args, get_origin

from typing_extensions import Annotated

from gan_sru.config.models import Columns, Config, Matching, Registered, Section, Terms

Field = namedtuple("Field", "kind default allowed doc")
Field.__doc__ = """One key as the table shows it. kind: int | float | bool | str | list[str] | list[dict], "?" when
null is allowed; allowed: None, a tuple of choices, a Registry, a range (">= 1", "[0, 1)") or a regex."""


def _bound(value):
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(value)


def _describe(info):
    """A pydantic FieldInfo -> (kind, allowed) for the flat table."""
    annotation, optional, metadata, kind = info.annotation, False, list(info.metadata), None
    if get_origin(annotation) is Union and type(None) in get_args(annotation):
        optional = True
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if get_origin(annotation) is Annotated:
        metadata += list(annotation.__metadata__)
        if annotation is Columns:
            kind = "list[str]"
        elif annotation is Terms:
            kind = "list[dict]"
        annotation = get_args(annotation)[0]
    if get_origin(annotation) is Literal:
        kind, allowed = "str", tuple(get_args(annotation))
    else:
        kind = {int: "int", float: "float", bool: "bool", str: "str"}.get(annotation, kind)
        allowed = None
    bounds = {}
    for m in metadata:
        if isinstance(m, Registered):
            allowed = m.registry
        elif isinstance(m, Matching):
            allowed = m.pattern
        for name in ("ge", "gt", "le", "lt"):
            if getattr(m, name, None) is not None:
                bounds[name] = getattr(m, name)
    if bounds:
        low = (f"[{_bound(bounds['ge'])}" if "ge" in bounds else f"({_bound(bounds['gt'])}") if \
            {"ge", "gt"} & set(bounds) else None
        high = (f"{_bound(bounds['le'])}]" if "le" in bounds else f"{_bound(bounds['lt'])})") if \
            {"le", "lt"} & set(bounds) else None
        if high is None:
            allowed = (">= " if low[0] == "[" else "> ") + low[1:]
        else:
            allowed = f"{low}, {high}"
    return kind + ("?" if optional else ""), allowed


def _table(model, prefix=""):
    table = {}
    for name, info in model.model_fields.items():
        dotted = prefix + name
        if isinstance(info.annotation, type) and issubclass(info.annotation, Section):
            table.update(_table(info.annotation, dotted + "."))
        else:
            kind, allowed = _describe(info)
            table[dotted] = Field(kind, info.default, allowed, info.description)
    return table


SCHEMA = _table(Config)  # {dotted key: Field}, in declaration order
SECTIONS = sorted({k.rsplit(".", 1)[0] for k in SCHEMA if "." in k} | {k.split(".", 1)[0] for k in SCHEMA if "." in k})


def section_model(dotted):
    """The model class of a section ('' for the top level, 'model.generator', ...)."""
    model = Config
    for part in filter(None, dotted.split(".")):
        model = model.model_fields[part].annotation
    return model
