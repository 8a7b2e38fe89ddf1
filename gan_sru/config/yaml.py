"""The YAML dialect of config files: duplicate keys refused, 1e-3 read as a number, no dates, exact dumps.

`parse_yaml(text, where)` turns every parser failure into a ConfigError naming `where`, line and column;
`dump_yaml(tree)` writes text that `parse_yaml` reads back to the same tree.
"""
import re

import yaml
from pydantic import BaseModel

from gan_sru import ConfigError


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
    """SafeDumper that quotes every string _Loader would read as something else, so dump->load is exact,
    and writes a config model as its nested mapping."""


_Dumper.add_multi_representer(BaseModel, lambda dumper, model: dumper.represent_dict(model.model_dump()))


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


def parse_yaml(text, where):
    """YAML text -> Python value; every parser failure becomes a ConfigError naming `where`."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(e.problem or e.context or "invalid YAML").split())  # PyYAML's may span lines
        kind = "YAML error" if isinstance(e, yaml.constructor.ConstructorError) else "YAML syntax error"
        raise ConfigError(f"{where}:{line}: {kind}: {problem}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{where}: YAML syntax error: {' '.join(str(e).split())}") from None
    except RecursionError:
        raise ConfigError(f"{where}: YAML is nested too deeply") from None
    except Exception as e:  # PyYAML constructors raise ValueError, TypeError, ... on odd scalars
        raise ConfigError(f"{where}: cannot read YAML value ({type(e).__name__}: {e})") from None


def dump_yaml(tree):
    """Nested mapping -> YAML text that parse_yaml reads back to the same value."""
    return yaml.dump(tree, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
