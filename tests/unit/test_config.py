"""gan_sru.config: schema, loading, overrides, refusals, dump round trip."""
import glob
import os
import re

import pytest

from gan_sru import ConfigError
from gan_sru.config import (
    SCHEMA,
    Config,
    TrainConfig,
    dump_config,
    load_config,
    parse_override,
    resolve_config,
    schema_markdown,
)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write(tmp_path, text, name="cfg.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(tmp_path, text, *patterns, overrides=()):
    """Load `text` as a config file, expect ConfigError naming the file and matching every pattern."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=re.escape(str(path))) as info:
        load_config(path, overrides)
    for p in patterns:
        assert re.search(p, str(info.value)), (p, str(info.value))
    return str(info.value)


# ---------------------------------------------------------------- loading

def test_defaults_fill_every_schema_key():
    cfg = load_config(None)
    assert cfg == load_config()
    assert cfg["train"]["steps"] == 2000 and cfg["data"]["source"] == "sines"
    assert cfg["model"]["generator"]["hidden_size"] is None and cfg["train"]["grad_clip"] is None  # size rules
    for key, field in SCHEMA.items():
        node = cfg
        for part in key.split("."):
            node = node[part]
        assert node == field.default


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(REPO, "configs", "*.yaml"))))
def test_shipped_configs_load(path, monkeypatch):
    monkeypatch.chdir(REPO)
    assert load_config(path)["name"]


def test_partial_file_keeps_other_defaults(tmp_path):
    cfg = load_config(write(tmp_path, "train:\n  steps: 10\nmodel:\n  generator:\n    hidden_size: 16\n"))
    assert cfg["train"]["steps"] == 10 and cfg["train"]["batch_size"] == 128
    assert cfg["model"]["generator"]["hidden_size"] == 16 and cfg["model"]["generator"]["num_layers"] is None


def test_empty_file_and_empty_section_mean_defaults(tmp_path):
    assert load_config(write(tmp_path, "")) == load_config()
    assert load_config(write(tmp_path, "train:\n# steps: 5\n")) == load_config()


def test_float_forms_and_int_for_float(tmp_path):
    cfg = load_config(write(tmp_path, "train:\n  lr: 1e-3\n  grad_clip: 2\n  beta2: 9.9e-1\n"))
    assert cfg["train"]["lr"] == 0.001
    assert cfg["train"]["grad_clip"] == 2.0 and isinstance(cfg["train"]["grad_clip"], float)
    assert cfg["train"]["beta2"] == 0.99


def test_dump_then_load_round_trip(tmp_path):
    cfg = load_config(None, ["name=1e-3", "train.lr=1e-05", "train.grad_clip=0.5", "data.source=file",
                             "data.path=x.csv", "data.csv_feature_columns=[a, 'yes', '1.5']", "seed=7"])
    path = tmp_path / "resolved.yaml"
    dump_config(cfg, path)
    assert load_config(path) == cfg
    assert cfg["name"] == "1e-3"  # a string that the float resolver must not turn into a number
    dump_config(load_config(), path)  # overwrite in place
    assert load_config(path) == load_config()
    assert os.listdir(tmp_path) == ["resolved.yaml"]  # no temp file left behind
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # an ordinary file, not a private temp file


def test_schema_markdown_lists_every_key():
    table = schema_markdown()
    assert table.startswith("| key | type | default | allowed | meaning |")
    for key in SCHEMA:
        assert f"| `{key}` |" in table
    assert "`detached` \\| `linked` \\| `recompute`" in table
    assert len(table.strip().splitlines()) == len(SCHEMA) + 2


# ---------------------------------------------------------------- overrides

@pytest.mark.parametrize("text, keys, value", [
    ("train.steps=500", ["train", "steps"], 500),
    ("train.lr=1e-3", ["train", "lr"], 0.001),
    ("train.lr=.5", ["train", "lr"], 0.5),
    ("model.generator.bidirectional=true", ["model", "generator", "bidirectional"], True),
    ("train.grad_clip=null", ["train", "grad_clip"], None),
    ("train.grad_clip=", ["train", "grad_clip"], None),
    ("data.csv_feature_columns=[a, b]", ["data", "csv_feature_columns"], ["a", "b"]),
    ("name = my run", ["name"], "my run"),
    ("name=a=b", ["name"], "a=b"),
    ("name=2024", ["name"], "2024"),
    ("data.csv_id_column= no ", ["data", "csv_id_column"], "no"),
    ("model.generator={hidden_size: 8}", ["model", "generator"], {"hidden_size": 8}),
])
def test_parse_override(text, keys, value):
    assert parse_override(text) == (keys, value)


def test_overrides_apply_in_order_and_merge_sections(tmp_path):
    path = write(tmp_path, "train:\n  steps: 10\n")
    cfg = load_config(path, ["train.steps=20", "train.steps=30", "model.generator={hidden_size: 8}"])
    assert cfg["train"]["steps"] == 30
    assert cfg["model"]["generator"]["hidden_size"] == 8 and cfg["model"]["generator"]["num_layers"] is None


@pytest.mark.parametrize("text, pattern", [
    ("train.steps", r"--set 'train.steps': expected KEY=VALUE"),
    ("=5", r"--set '=5': empty key"),
    ("  =5", r"empty key"),
    ("train..steps=5", r"malformed key 'train..steps'"),
    ("train.stesp=5", r"--set 'train.stesp=5': unknown key 'train.stesp'; did you mean 'train.steps'\?"),
    ("train.steps=[1", r"--set 'train.steps=\[1': line 1.*YAML syntax error"),
    ("train=5", r"train: got 5 \(int\); expected a mapping"),
])
def test_bad_overrides_refused(text, pattern):
    with pytest.raises(ConfigError, match=pattern):
        parse_override(text)


def test_override_values_are_validated_naming_the_override():
    with pytest.raises(ConfigError, match=r"--set 'train.steps=-5': train.steps: got -5 \(int\); "
                                          r"expected an integer >= 1"):
        load_config(None, ["train.steps=-5"])
    with pytest.raises(ConfigError, match=r"--set 'train.steps=1e3': train.steps: got 1000.0 \(float\)"):
        load_config(None, ["train.steps=1e3"])
    with pytest.raises(ConfigError, match=r"--set 'model.generator=\{hidden_sise: 8\}': unknown key "
                                          r"'model.generator.hidden_sise'; did you mean "
                                          r"'model.generator.hidden_size'\?"):
        load_config(None, ["model.generator={hidden_sise: 8}"])


# ---------------------------------------------------------------- refusals

def test_missing_file():
    with pytest.raises(ConfigError, match=r"nope/none.yaml: config file not found"):
        load_config("nope/none.yaml")


def test_folder_instead_of_file(tmp_path):
    with pytest.raises(ConfigError, match=r"is a folder"):
        load_config(tmp_path)


def test_yaml_syntax_error_names_line(tmp_path):
    refused(tmp_path, "train:\n  steps: 5\n  batch_size: [1, 2\n", r"cfg.yaml: line \d+, column \d+: YAML syntax error")
    refused(tmp_path, "train:\n  steps: 5\n bad: 1\n", r"line 3, column 2: YAML syntax error")


def test_duplicate_keys_refused_with_lines(tmp_path):
    refused(tmp_path, "train:\n  steps: 5\n  steps: 6\n", r"line 3, column 3: YAML error: duplicate key 'steps' "
                                                          r"\(first at line 2\)")
    refused(tmp_path, "train:\n  steps: 5\nseed: 1\ntrain:\n  batch_size: 6\n", r"duplicate key 'train'")


def test_yaml_oddities_do_not_leak(tmp_path):
    assert load_config(write(tmp_path, "name: 2001-12-14\n"))["name"] == "2001-12-14"  # no dates in configs
    refused(tmp_path, "train:\n  steps: !!int x\n", r"cannot read YAML value")
    refused(tmp_path, "train: " + "[" * 3000 + "]" * 3000 + "\n", r"nested too deeply")


def test_not_utf8(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(ConfigError, match=r"cfg.yaml: not UTF-8 text"):
        load_config(path)


@pytest.mark.parametrize("text, kind", [("- a\n- b\n", "list"), ("42\n", "int"), ("just text\n", "str")])
def test_top_level_not_mapping(tmp_path, text, kind):
    refused(tmp_path, text, rf"top level is {kind}; expected a mapping")


@pytest.mark.parametrize("text, pattern", [
    ("trian:\n  steps: 5\n", r"unknown key 'trian'; did you mean 'train'\?"),
    ("train:\n  stpes: 5\n", r"unknown key 'train.stpes'; did you mean 'train.steps'\?"),
    ("model:\n  generator:\n    hiden_size: 5\n",
     r"unknown key 'model.generator.hiden_size'; did you mean 'model.generator.hidden_size'\?"),
    ("zzzzzz: 1\n", r"unknown key 'zzzzzz'; see the config reference"),
    ("1: 2\n", r"top level: key 1 \(int\) is not a non-empty string"),
])
def test_unknown_keys_refused_with_suggestion(tmp_path, text, pattern):
    refused(tmp_path, text, pattern)


@pytest.mark.parametrize("text, pattern", [
    ("train:\n  steps: abc\n", r"train.steps: got 'abc' \(str\); expected an integer >= 1"),
    ("train:\n  steps: true\n", r"train.steps: got True \(bool\); expected an integer"),
    ("train:\n  steps: 2.5\n", r"train.steps: got 2.5 \(float\); expected an integer"),
    ("train:\n  steps: null\n", r"train.steps: got None \(null\); expected an integer"),
    ("train:\n  lr: true\n", r"train.lr: got True \(bool\); expected a number > 0"),
    ("train:\n  lr: '0.1'\n", r"train.lr: got '0.1' \(str\); expected a number"),
    ("train:\n  lr: .nan\n", r"train.lr: got nan \(float\); expected a number > 0 \(finite\)"),
    ("train:\n  grad_clip: .inf\n", r"train.grad_clip: got inf \(float\); expected a number > 0 or null \(finite\)"),
    ("train:\n  g_ema: .nan\n", r"train.g_ema: got nan \(float\); expected a number \[0, 1\)"),
    ("model:\n  generator:\n    bidirectional: 1\n", r"bidirectional: got 1 \(int\); expected true or false"),
    ("name: no\n", r"name: got False \(bool\); expected a string.*quote it"),
    ("name: ../x\n", r"name: got '../x' \(str\); expected a string matching"),
    ("run_dir: ''\n", r"run_dir: got '' \(str\); expected a string \(not empty\)"),
    ("train: 5\n", r"train: got 5 \(int\); expected a mapping"),
    ("train:\n  steps: {a: 1}\n", r"train.steps: got \{'a': 1\} \(dict\)"),
    ("data:\n  csv_feature_columns: a\n", r"csv_feature_columns: got 'a' \(str\); expected a list of strings"),
    ("data:\n  csv_feature_columns: [a, a]\n", r"csv_feature_columns: .*without repeats"),
    ("data:\n  csv_feature_columns: []\n", r"csv_feature_columns: got \[\] \(list\)"),
])
def test_wrong_types_refused(tmp_path, text, pattern):
    refused(tmp_path, text, pattern)


@pytest.mark.parametrize("text, pattern", [
    ("train:\n  lr: 0\n", r"train.lr: got 0.0 \(float\); expected a number > 0"),
    ("train:\n  steps: 0\n", r"train.steps: got 0 \(int\); expected an integer >= 1"),
    ("data:\n  holdout_fraction: 1.0\n", r"holdout_fraction: got 1.0 \(float\); expected a number \[0, 1\)"),
    ("seed: -1\n", r"seed: got -1 \(int\); expected an integer \[0, 4294967295\]"),
    ("seed: 4294967296\n", r"seed: got 4294967296 \(int\); expected an integer \[0, 4294967295\]"),
    ("train:\n  grad_clip: -1\n", r"grad_clip: got -1.0 \(float\); expected a number > 0 or null"),
    ("train:\n  lr: 1e400\n", r"lr: got inf \(float\)"),
])
def test_out_of_range_refused(tmp_path, text, pattern):
    refused(tmp_path, text, pattern)


@pytest.mark.parametrize("text, pattern", [
    ("train:\n  strategy: detach\n", r"train.strategy: got 'detach' \(str\); expected one of 'detached', "
                                      r"'linked', 'recompute' \(did you mean 'detached'\?\)"),
    ("data:\n  source: sine\n", r"data.source: got 'sine'.*did you mean 'sines'\?"),
    ("model:\n  discriminator:\n    name: lstm\n",
     r"discriminator.name: got 'lstm' \(str\); expected one of 'sru_bi'$"),
])
def test_bad_choices_refused(tmp_path, text, pattern):
    refused(tmp_path, text, pattern)


@pytest.mark.parametrize("text, pattern", [
    ("data:\n  source: file\n", r"data.path: got null; expected a data file .* because data.source is 'file'"),
    ("data:\n  source: file\n  path: x.txt\n", r"data.path: got 'x.txt'; expected a file \(or glob pattern\) ending in "
                                              r"\.csv, \.csv\.gz, \.parquet, \.npy, \.npz, or a folder of such files"),
    ("data:\n  path: x.csv\n", r"data.path: got 'x.csv' but data.source is 'sines'"),
    ("data:\n  source: sines_varlen\n  min_len: 30\n",
     r"data.min_len: got 30; expected at most data.seq_len \(24\)"),
    ("data:\n  csv_time_column: id\n", r"data.csv_time_column: got 'id'; expected a column other than"),
    ("data:\n  csv_feature_columns: [a, time]\n", r"csv_feature_columns: .*other than the id and time"),
])
def test_cross_field_checks(tmp_path, text, pattern):
    refused(tmp_path, text, pattern)


def test_cross_field_check_after_overrides_names_them(tmp_path):
    path = write(tmp_path, "name: x\n")
    with pytest.raises(ConfigError, match=r"cfg.yaml \(with --set overrides\): data.path: got null"):
        load_config(path, ["data.source=file"])


def test_resolve_config_from_dict():
    cfg = resolve_config({"train": {"steps": 3}}, "inline")
    assert cfg["train"]["steps"] == 3
    with pytest.raises(ConfigError, match=r"inline: unknown key 'train.step'; did you mean 'train.steps'\?"):
        resolve_config({"train": {"step": 3}}, "inline")


# ---------------------------------------------------------------- wall-time budget and loss terms

def test_budget_and_terms_load_and_round_trip(tmp_path):
    cfg = load_config(write(tmp_path, "train:\n  budget: 1h30m\n  terms:\n    - {name: moment, weight: 1.0}\n"
                                      "    - {name: sequence_moment, weight: 0.5}\n"))
    assert cfg["train"]["budget"] == "1h30m"
    assert cfg["train"]["terms"] == [{"name": "moment", "weight": 1.0},
                                     {"name": "sequence_moment", "weight": 0.5}]
    assert load_config(None)["train"]["budget"] is None and load_config(None)["train"]["terms"] is None
    out = tmp_path / "out.yaml"
    dump_config(cfg, out)
    assert load_config(out) == cfg
    cfg = load_config(None, ["train.budget=90s", "train.terms=[{name: moment, weight: 2}]"])
    assert cfg["train"]["budget"] == "90s" and cfg["train"]["terms"] == [{"name": "moment", "weight": 2}]


@pytest.mark.parametrize("text, pattern", [
    ("train:\n  budget: 15\n", r"train\.budget: got 15 \(int\).*quote it"),
    ("train:\n  budget: fifteen minutes\n", r"train\.budget: got 'fifteen minutes'.*matching"),
    ("train:\n  terms: moment\n", r"train\.terms: got 'moment' \(str\); expected a list of mappings"),
    ("train:\n  terms: [{weight: 1.0}]\n", r"entry 0 has no 'name' string"),
    ("train:\n  terms: [{name: moment}, 3]\n", r"entry 1 is not a mapping"),
    ("train:\n  terms: [{name: moment, weight: heavy}]\n", r"entry 0: weight 'heavy' is not a finite number"),
])
def test_budget_and_terms_refused(tmp_path, text, pattern):
    refused(tmp_path, text, pattern)


# ---------------------------------------------------------------- typed models, dict access, old run folders

def test_typed_attributes_and_dict_access_agree(tmp_path):
    cfg = load_config(write(tmp_path, "train:\n  steps: 10\n  lr: 1\n"))
    assert isinstance(cfg, Config) and isinstance(cfg.train, TrainConfig)
    assert cfg.train.steps == cfg["train"]["steps"] == 10
    assert cfg.train.lr == 1.0 and isinstance(cfg.train.lr, float)  # an integer read for a float key
    assert cfg.model.generator.name == cfg["model"]["generator"]["name"] == "sru"
    assert "steps" in cfg["train"] and "nope" not in cfg["train"] and cfg["train"].get("nope", 7) == 7
    assert cfg["train"].get("batch_size") == 128 and len(cfg["train"]) == len(TrainConfig.model_fields)
    assert dict(cfg["train"])["steps"] == 10 and list(cfg["train"])[0] == "steps"
    cfg["train"]["steps"] = 20
    cfg["data"].update({"num_sequences": 50}, seq_len=12)
    assert cfg.train.steps == 20 and cfg.data.num_sequences == 50 and cfg.data.seq_len == 12
    with pytest.raises(KeyError):
        cfg["train"]["nope"]
    assert cfg == cfg.model_dump() and cfg["train"] == cfg.model_dump()["train"]
    assert cfg != load_config(None)


def test_resolve_config_takes_a_config_and_dotted_keys():
    cfg = resolve_config({"train.steps": 5, "model": {"generator": {"hidden_size": 8}}})
    assert cfg.train.steps == 5 and cfg.model.generator.hidden_size == 8
    assert resolve_config(cfg) == cfg and resolve_config(cfg) is not cfg


def test_schema_table_is_derived_from_the_models():
    assert SCHEMA["train.steps"] == ("int", 2000, ">= 1", "generator updates")
    assert SCHEMA["data.holdout_fraction"][:3] == ("float", 0.1, "[0, 1)")
    assert SCHEMA["model.generator.noise_dim"].kind == "int?"
    assert SCHEMA["data.attributes"].kind == "list[str]?" and SCHEMA["train.terms"].kind == "list[dict]?"
    assert SCHEMA["train.strategy"].allowed == ("detached", "linked", "recompute")
    assert all(f.doc and "\n" not in f.doc for f in SCHEMA.values())
    for key, field in SCHEMA.items():  # a default is itself a valid value
        assert resolve_config({key: field.default}) == load_config(None), key


def test_legacy_run_folder_config_loads_to_sample_from(tmp_path):
    """A run folder's config.yaml as the dict-based config code wrote it (header comment, every key, removed
    terms and R1 on) is refused for training, naming a removed key; read to sample from (removed="drop") it
    loads with its kept terms as train.terms, and dumping and loading it again gives the same config."""
    path = os.path.join(REPO, "tests", "data", "legacy_run_config.yaml")
    with pytest.raises(ConfigError, match=r"legacy_run_config.yaml: train.sequence_whitened_loss: 0.3: this option "
                                          r"was removed: it did not improve the scores on real data \(docs/results/"
                                          r"2026-11-28-recipe.md\); remove the key"):
        load_config(path)
    cfg = load_config(path, removed="drop")
    assert cfg.name == "wide" and cfg.data.source == "factors" and cfg.data.num_features == 28
    assert cfg.train.steps == 2 and cfg.model.generator.oscillators is True
    assert [(t["name"], t["weight"]) for t in cfg.train.terms] == [("moment", 1.0), ("sequence_moment", 1.0)]
    assert cfg.train.terms[1] == {"name": "sequence_moment", "weight": 1.0}  # tails: false and lags: 1 dropped
    assert cfg.train.budget is None  # a key added since: its default
    assert cfg.train.lr == 0.001 and "g_lr" not in cfg.train  # its equal rates, as the one rate
    out = tmp_path / "config.yaml"
    dump_config(cfg, out, comment="world_size: 1")
    assert out.read_text().startswith("# world_size: 1\nname: wide\n")
    assert load_config(out) == cfg


def test_a_yaml_reader_error_is_one_line():
    """PyYAML's reader puts the position on a second line; the message stays one line naming the file."""
    from gan_sru.config.yaml import parse_yaml

    with pytest.raises(ConfigError) as e:
        parse_yaml("a: \x19", "c.yaml")
    assert str(e.value).startswith("c.yaml: YAML syntax error: unacceptable character #x0019")
    assert "\n" not in str(e.value)
