"""Fuzzing configs: mutated YAML files (the shipped configs with random edits), random YAML text, and
`--set` overrides. Every input must load into a complete, valid config or raise a ConfigError."""
import glob
import os

from conftest import mutate_yaml
from fuzz_outcomes import call, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from gan_sru.config import SCHEMA, SECTIONS, dump_yaml, load_config, parse_override, retired

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
text_chars = st.characters(blacklist_categories=("Cs",))
CONFIG_TEXTS = [open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(REPO, "configs", "*.yaml")))]
CONFIG_TEXTS.append(dump_yaml(load_config()))
# a run folder's config from an earlier version: old term weights, rates and removed options
CONFIG_TEXTS.append(open(os.path.join(REPO, "tests", "data", "legacy_run_config.yaml"), encoding="utf-8").read())
YAML_BITS = st.sampled_from([":", "- ", "[", "]", "{", "}", "#", "&a", "*a", "!!int", "!!float", "!!binary",
                             "!!python/object/apply:os.system [ls]", "!!python/name:os.system", "!!set", "!!omap",
                             "|", ">", "'", '"', "%YAML 1.2\n---\n", "@", "\t", "\n", "  ", ",", "~", "null", "true",
                             "no", ".inf", ".nan", "1e-3", "0x1F", "0o7", "1_0", "2001-13-45", "._", "1:30",
                             "<<: *a", "? ", "---", "...", "\x00", "\ufeff", "é", "&a [*a]", "999999999999999999999"])
SCALARS = st.one_of(st.sampled_from(["null", "true", "~", ".inf", "-.inf", ".nan", "[1, 2]", "{a: 1}", "1e-3", "1e400",
                                     "0x1F", "2001-12-14", "!!int x", "'quoted'", "sru", "detached", "file", "x.csv",
                                     "-1", "0", "4294967296", "100000", "[a, a]", "[]", "*undefined", "/dev/zero",
                                     "../x", ""]),
                    st.integers(-10**30, 10**30).map(str), st.floats().map(str), st.text(text_chars, max_size=8))


@st.composite
def mutated_yaml(draw):
    """A shipped config with 1-5 random edits: delete, insert YAML-ish bits, replace a value, swap or indent."""
    return mutate_yaml(draw, draw(st.sampled_from(CONFIG_TEXTS)), YAML_BITS, SCALARS, 5, 30,
                       ops=("delete", "insert", "value", "value", "swap", "indent"))


def complete(cfg):
    """A loaded config has every section and passes its own validation again."""
    assert set(cfg) == set(load_config())
    assert load_config(None, [f"train.steps={cfg['train']['steps']}"])["train"]["steps"] == cfg["train"]["steps"]


@fuzz_settings(40, 1400)
@given(text=st.one_of(mutated_yaml(), mutated_yaml(), st.text(text_chars, max_size=200),
                      st.lists(YAML_BITS, max_size=20).map("".join)))
def test_yaml_text(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("yaml") / "config.yaml"
    path.write_text(text, encoding="utf-8")
    call("config: YAML text", load_config, path, check=complete)


@fuzz_settings(10, 300)
@given(data=st.binary(max_size=300))
def test_yaml_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("yamlb") / "config.yaml"
    path.write_bytes(data)
    call("config: YAML bytes", load_config, path, check=complete)


OVERRIDES = st.one_of(
    st.text(text_chars, max_size=40),
    st.tuples(st.sampled_from(sorted(SCHEMA) + sorted(retired.KEYS) + SECTIONS + ["", "train.", ".x", "a..b",
                                                                                 "data.path.x"]),
              st.sampled_from(["=", "", "==", " = "]),
              st.one_of(SCALARS, st.lists(YAML_BITS, max_size=5).map("".join))).map("".join))


@fuzz_settings(40, 1400)
@given(overrides=st.lists(OVERRIDES, min_size=1, max_size=4))
def test_set_overrides(overrides):
    for text in overrides:
        call("config: --set parse", parse_override, text)
    call("config: --set overrides", load_config, None, overrides, check=complete)
