"""Config files: typed section models (models.py) and their flat table of keys (table.py), YAML loading
with validation and `--set` overrides (load.py), the messages that refuse a value (refusals.py), and the
YAML dialect (yaml.py).

    cfg = load_config("configs/sines.yaml", overrides=["train.steps=500"])
    cfg.train.steps        # -> 500
    cfg["train"]["steps"]  # the same; sections also read and write like dicts

Every refusal is a gan_sru.ConfigError whose message names the file (or the override), the dotted key, the
bad value and what was expected.
"""
from gan_sru import ConfigError
from gan_sru.config.load import (
    DATA_SUFFIXES,
    assign,
    check_value,
    dump_config,
    flat_config,
    load_config,
    parse_override,
    resolve_config,
    schema_markdown,
    set_keys,
    value_at,
)
from gan_sru.config.models import (
    Config,
    DataConfig,
    DiscriminatorConfig,
    GeneratorConfig,
    ModelConfig,
    Section,
    TrainConfig,
)
from gan_sru.config.table import SCHEMA, SECTIONS, Field
from gan_sru.config.yaml import dump_yaml, parse_yaml

__all__ = ["ConfigError", "Config", "DataConfig", "DiscriminatorConfig", "Field", "GeneratorConfig", "ModelConfig",
           "SCHEMA", "SECTIONS", "Section", "TrainConfig", "DATA_SUFFIXES", "assign", "check_value", "dump_config",
           "dump_yaml", "flat_config", "load_config", "parse_override", "parse_yaml", "resolve_config",
           "schema_markdown", "set_keys", "value_at"]
