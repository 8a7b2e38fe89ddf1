"""Property tests: random and mutated inputs to the config and data loaders.

Each loader may only succeed or raise its own error (ConfigError / DataError) with a message;
never a bare YAML, NumPy, csv or Python exception. A module fixture prints how many examples ran.
"""
import csv
import io
import json
import os
from collections import Counter

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from conftest import SCORE_DEFECTS, SCORE_FORMATS, mutate_yaml, score_inputs, write_score_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gan_sru import ConfigError, DataError
from gan_sru.config import SCHEMA, SECTIONS, dump_yaml, load_config, parse_override
from gan_sru.data import load_dataset, read_sequences

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = Counter()  # test name -> examples tried
ACCEPTED = Counter()  # test name -> examples that loaded without an error
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

text_chars = st.characters(blacklist_categories=("Cs",))  # no lone surrogates: they cannot be written as UTF-8


@pytest.fixture(scope="module", autouse=True)
def report_example_counts(request):
    """After the module's tests: how many examples each fuzz family tried and how many loaded."""
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and EXAMPLES:
        reporter.write_line("\nfuzz examples (tried/loaded): "
                            + ", ".join(f"{name}: {n}/{ACCEPTED[name]}" for name, n in sorted(EXAMPLES.items()))
                            + f"; total {sum(EXAMPLES.values())}/{sum(ACCEPTED.values())}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def only_ours(error, call, *args, **kwargs):
    """Run call(*args); a raise must be `error` with a non-empty message. Returns the result or None."""
    try:
        return call(*args, **kwargs)
    except error as e:
        assert str(e).strip()
        return None


def check_config(cfg):
    """A config that loaded is complete and passes its own validation again."""
    assert set(cfg) == set(load_config())
    assert load_config(None, [f"train.steps={cfg['train']['steps']}"])["train"]["steps"] == cfg["train"]["steps"]


# ---------------------------------------------------------------- config files

with open(os.path.join(REPO, "configs", "sines.yaml")) as f:
    BASE_TEXTS = [f.read(), dump_yaml(load_config())]
YAML_BITS = st.sampled_from([":", "- ", "[", "]", "{", "}", "#", "&a", "*a", "!!int", "!!float", "!!binary",
                             "!!timestamp", "|", ">", "'", '"', "%", "@", "\t", "\n", "  ", ",", "~", "null",
                             "true", "no", ".inf", ".nan", "1e-3", "0x1F", "0o7", "1_0", "2001-13-45", "._",
                             "1:30", "<<: *a", "? ", "---", "...", "\x00", "\ufeff", "é"])
SCALARS = st.one_of(st.sampled_from(["null", "true", "~", ".inf", "-.inf", ".nan", "[1, 2]", "[0.5,0.9]",
                                     "{a: 1}", "1e-3", "1e400", "0x1F", "2001-13-45", "2001-12-14", "._",
                                     "!!int x", "!!float y", "!!timestamp 1", "'quoted'", "sru", "detached",
                                     "file", "x.csv", "-1", "0", "[a, a]", "[]", "*undefined"]),
                    st.integers(-10**30, 10**30).map(str),
                    st.floats().map(str),
                    st.text(text_chars, max_size=8))


@st.composite
def mutated_yaml(draw):
    """A shipped config with 1-4 random edits: delete, insert YAML-ish bits, replace a value, reorder lines."""
    return mutate_yaml(draw, draw(st.sampled_from(BASE_TEXTS)), YAML_BITS, SCALARS, 4, 20)


KEYS = st.one_of(st.sampled_from(sorted({k.split(".")[-1] for k in SCHEMA} | {s.split(".")[-1] for s in SECTIONS})),
                 st.text(text_chars, max_size=6), st.integers(-3, 3), st.none(), st.booleans())
VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(),
                                st.text(text_chars, max_size=8)),
                      lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
                      max_leaves=10)


@st.composite
def config_trees(draw):
    """Nested dicts shaped like configs: real section and key names with random values, some random keys."""
    tree = {}
    for key in draw(st.lists(st.sampled_from(sorted(SCHEMA)), max_size=8)):
        node = tree
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {}) if isinstance(node.get(p, {}), dict) else {}
        node[leaf] = draw(VALUES)
    if draw(st.booleans()):
        tree[draw(KEYS)] = draw(VALUES)
    return tree


@settings(FUZZ, max_examples=250)
@given(text=st.one_of(st.text(text_chars, max_size=200), st.lists(YAML_BITS, max_size=20).map("".join)))
def test_config_random_text(folder, text):
    EXAMPLES["config: random text"] += 1
    path = folder / "random.yaml"
    path.write_text(text, encoding="utf-8")
    cfg = only_ours(ConfigError, load_config, path)
    ACCEPTED["config: random text"] += cfg is not None
    if cfg is not None:
        check_config(cfg)


@settings(FUZZ, max_examples=50)
@given(data=st.binary(max_size=200))
def test_config_random_bytes(folder, data):
    EXAMPLES["config: random bytes"] += 1
    path = folder / "bytes.yaml"
    path.write_bytes(data)
    only_ours(ConfigError, load_config, path)


@settings(FUZZ, max_examples=300)
@given(text=mutated_yaml())
def test_config_mutated_yaml(folder, text):
    EXAMPLES["config: mutated YAML"] += 1
    path = folder / "mutated.yaml"
    path.write_text(text, encoding="utf-8")
    cfg = only_ours(ConfigError, load_config, path)
    ACCEPTED["config: mutated YAML"] += cfg is not None
    if cfg is not None:
        check_config(cfg)


@settings(FUZZ, max_examples=300)
@given(tree=st.one_of(config_trees(), VALUES))
def test_config_random_trees(folder, tree):
    EXAMPLES["config: random trees"] += 1
    path = folder / "tree.yaml"
    try:
        path.write_text(dump_yaml(tree), encoding="utf-8")
    except (ValueError, TypeError):  # not representable in YAML (e.g. mixed-type keys to sort): not our concern
        return
    cfg = only_ours(ConfigError, load_config, path)
    ACCEPTED["config: random trees"] += cfg is not None
    if cfg is not None:
        check_config(cfg)


# ---------------------------------------------------------------- overrides

@settings(FUZZ, max_examples=400)
@given(text=st.one_of(st.text(text_chars, max_size=40),
                      st.tuples(st.sampled_from(sorted(SCHEMA) + SECTIONS + ["", "train.", ".x", "a..b"]),
                                st.sampled_from(["=", "", "==", " = "]),
                                st.one_of(SCALARS, st.lists(YAML_BITS, max_size=5).map("".join))).map("".join)))
def test_parse_override_random(text):
    EXAMPLES["override: random strings"] += 1
    parsed = only_ours(ConfigError, parse_override, text)
    ACCEPTED["override: random strings"] += parsed is not None
    if parsed is not None:
        keys, _ = parsed
        assert ".".join(keys) in SCHEMA or ".".join(keys) in SECTIONS
        cfg = only_ours(ConfigError, load_config, None, [text])
        if cfg is not None:
            check_config(cfg)


# ---------------------------------------------------------------- data files

def check_sequences(sequences):
    """What read_sequences promises when it succeeds."""
    assert sequences and all(s.dtype == np.float64 and s.ndim == 2 for s in sequences)
    assert len({s.shape[1] for s in sequences}) == 1 and sequences[0].shape[1] >= 1
    assert all(len(s) >= 2 and np.all(np.isfinite(s)) for s in sequences)


def check_dataset(path):
    """load_dataset on `path`: DataError or sequences scaled into [0, 1]."""
    cfg = load_config(None, ["data.source=file", f"data.path={path}"])["data"]
    ds = only_ours(DataError, load_dataset, cfg, 0)
    if ds is not None:
        x = np.concatenate(ds.sequences)
        assert x.dtype == np.float32 and x.min() >= 0 and x.max() <= 1


DTYPES = st.sampled_from(["f2", "f4", "f8", "g", "i1", "i8", "u8", "?", "c8", "U3", "S2", "M8[D]", "m8[s]",
                          [("a", "f4"), ("b", "i2")]])
ODD_ARRAYS = hnp.arrays(DTYPES.map(np.dtype), hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
# (N, L, C) numbers, mostly valid: finite unless NaN/inf/huge values are drawn, few sequences
NEAR_VALID = hnp.arrays(st.sampled_from(["f2", "f4", "f8", "i2", "u1"]).map(np.dtype),
                        st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(1, 3)))
ARRAYS = st.one_of(ODD_ARRAYS, NEAR_VALID, NEAR_VALID)
ODD_ITEMS = st.one_of(ODD_ARRAYS, st.none(), st.text(text_chars, max_size=3), st.integers(),
                      st.lists(st.lists(st.floats(), max_size=3), max_size=4))
# (L_i, 2) float sequences of random lengths: a valid ragged set unless a bad value or length is drawn
RAGGED_ITEMS = hnp.arrays(np.float64, st.tuples(st.integers(0, 5), st.just(2)))


@st.composite
def object_arrays(draw):
    """1-D object arrays of random items: ragged sequences, wrong ranks, strings, None."""
    items = draw(st.lists(st.one_of(ODD_ITEMS, RAGGED_ITEMS, RAGGED_ITEMS, RAGGED_ITEMS), max_size=5))
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item
    return array


@settings(FUZZ, max_examples=300)
@given(array=st.one_of(ARRAYS, object_arrays()))
def test_npy_random_arrays(folder, array):
    EXAMPLES["npy: random arrays"] += 1
    path = folder / "random.npy"
    with open(path, "wb") as f:
        np.save(f, array, allow_pickle=True)
    sequences = only_ours(DataError, read_sequences, path)
    ACCEPTED["npy: random arrays"] += sequences is not None
    if sequences is not None:
        check_sequences(sequences)
        check_dataset(path)


@settings(FUZZ, max_examples=150)
@given(arrays=st.dictionaries(st.sampled_from(["data", "sequences", "lengths", "x", "arr_0"]),
                              st.one_of(ARRAYS, object_arrays()), max_size=3))
def test_npz_random_arrays(folder, arrays):
    EXAMPLES["npz: random arrays"] += 1
    path = folder / "random.npz"
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    sequences = only_ours(DataError, read_sequences, path)
    ACCEPTED["npz: random arrays"] += sequences is not None
    if sequences is not None:
        check_sequences(sequences)


def _file_bytes(suffix):
    buffer = io.BytesIO()
    x = np.random.default_rng(0).normal(size=(4, 5, 2))
    if suffix == ".npy":
        np.save(buffer, x)
    else:
        np.savez(buffer, data=x)
    return buffer.getvalue()


@settings(FUZZ, max_examples=200)
@given(suffix=st.sampled_from([".npy", ".npz"]), cut=st.integers(0, 2000),
       flips=st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 255)), max_size=4), junk=st.binary(max_size=40))
def test_numpy_damaged_bytes(folder, suffix, cut, flips, junk):
    EXAMPLES["npy/npz: damaged bytes"] += 1
    data = bytearray(_file_bytes(suffix))
    for i, byte in flips:
        data[i % len(data)] = byte
    data = bytes(data[:cut]) + junk if cut < len(data) else bytes(data)
    path = folder / f"damaged{suffix}"
    path.write_bytes(data)
    sequences = only_ours(DataError, read_sequences, path)
    ACCEPTED["npy/npz: damaged bytes"] += sequences is not None
    if sequences is not None:
        check_sequences(sequences)


CELLS = st.one_of(st.integers(-3, 3).map(str), st.floats().map(str), st.text(text_chars, max_size=4),
                  st.sampled_from(["q", "r", "", " 1 ", "2024-01-01", "2024-13-01", "2024-01-01T00:00:00+05:00",
                                   "1e400", "nan", "-inf", '"', '"a,b"', "1_0", "0x1"]))
COLUMNS = st.sampled_from(["id", "time", "a", "b", "", " id", "c"])


@st.composite
def csv_files(draw):
    """Long-format CSV text with random headers and cells, or plain random text."""
    if draw(st.integers(0, 4)) == 0:
        return draw(st.text(text_chars, max_size=120))
    header = draw(st.lists(st.one_of(COLUMNS, st.text(text_chars, max_size=3)), max_size=5))
    if draw(st.booleans()):
        header = ["id", "time", *draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3,
                                               unique=True))]
    width = len(header)
    rows = [header] + draw(st.lists(st.lists(CELLS, min_size=max(0, width - 1), max_size=width + 1), max_size=12))
    if draw(st.booleans()):  # a well-formed body: ids and times that make real sequences
        number = st.floats(-1e6, 1e6).map(str)
        cell = number if draw(st.booleans()) else st.one_of(number, number, number, CELLS)
        features = st.lists(cell, min_size=max(0, width - 2), max_size=max(0, width - 2))
        rows = [header] + [[draw(st.sampled_from(["q", "r"])), str(t), *draw(features)]
                           for t in range(draw(st.integers(0, 10)))]
    return "\n".join(",".join(row) for row in rows)


@pytest.mark.slow  # 300 CSV files through the reader: ~20 s
@settings(FUZZ, max_examples=300)
@given(text=csv_files(),
       columns=st.one_of(st.none(), st.none(), st.lists(COLUMNS, min_size=1, max_size=3, unique=True)))
def test_csv_random_text(folder, text, columns):
    EXAMPLES["csv: random text"] += 1
    path = folder / "random.csv"
    path.write_text(text, encoding="utf-8")
    sequences = only_ours(DataError, read_sequences, path, feature_columns=columns)
    ACCEPTED["csv: random text"] += sequences is not None
    if sequences is not None:
        check_sequences(sequences)
        if columns is None:
            check_dataset(path)


@settings(FUZZ, max_examples=50)
@given(data=st.binary(max_size=200))
def test_csv_random_bytes(folder, data):
    EXAMPLES["csv: random bytes"] += 1
    path = folder / "bytes.csv"
    path.write_bytes(data)
    only_ours(DataError, read_sequences, path)


def test_csv_writer_quoting_reads_back(folder):
    """Quoted cells (ids with commas) written by the csv module read back as the same ids."""
    path = folder / "quoted.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "time", "v"])
        writer.writerows([["a,b", 0, 1.5], ["a,b", 1, 2.5]])
    assert read_sequences(path)[0].tolist() == [[1.5], [2.5]]


# ---------------------------------------------------------------- tracking records and tune budgets
@settings(FUZZ, max_examples=200)
@given(data=st.one_of(st.binary(max_size=300),
                      st.dictionaries(st.sampled_from(["uri", "experiment", "run_id", "x"]),
                                      st.one_of(st.text(max_size=20), st.integers(), st.none()),
                                      max_size=4).map(lambda d: json.dumps(d).encode())))
def test_tracking_record_random(folder, data):
    from gan_sru import tracking

    EXAMPLES["tracking.json: random bytes"] += 1
    (folder / tracking.FILE).write_bytes(data)
    record = tracking.read_record(str(folder))  # never raises: a bad record only stops continuing the MLflow run
    ACCEPTED["tracking.json: random bytes"] += record is not None
    if record is not None:
        assert set(record) == {"uri", "experiment", "run_id"} and all(isinstance(v, str) and v
                                                                      for v in record.values())


@settings(FUZZ, max_examples=300)
@given(text=st.one_of(st.text(text_chars, max_size=20), st.from_regex(r"[0-9.]{0,4}[hms ]{0,2}[0-9]{0,3}[hms]?")))
def test_tune_budget_random(text):
    from gan_sru.tuning import parse_duration

    EXAMPLES["tune --budget: random text"] += 1
    seconds = only_ours(ConfigError, parse_duration, text)
    ACCEPTED["tune --budget: random text"] += seconds is not None
    if seconds is not None:
        assert seconds > 0 and np.isfinite(seconds)


# ---------------------------------------------------------------- gan-sru score's files
def run_score(argv, out):
    """`gan-sru score` in this process: (exit status, stdout, stderr lines that are not section progress)."""
    import contextlib

    from gan_sru.commands.main import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(["score", *argv, "--out", str(out), "--no-progress"])
        except SystemExit as e:
            code = e.code
    return code, stdout.getvalue(), [line for line in stderr.getvalue().splitlines() if not line.startswith("[")]


def one_clear_error(code, lines):
    """Exit status 2 and one stderr line, `error: ...` (or argparse's usage error), no traceback."""
    text = "\n".join(lines)
    assert code == 2 and "Traceback" not in text, text
    if lines[-1].startswith("error: "):
        assert len(lines) == 1, text
    else:
        assert lines[-1].startswith("usage: ") or ": error: argument " in lines[-1], text


@pytest.mark.parametrize("fmt", SCORE_FORMATS)
@pytest.mark.parametrize("defect", [d for d in SCORE_DEFECTS if d not in ("good", "one sequence")])
def test_score_file_defects_are_one_clear_error_line(tmp_path, fmt, defect):
    """Each defect in each of --real, --holdout and --fake: one `error:` line that names the option and its
    file (a feature mismatch names both files). An .npy array has no column names or text cells to get wrong."""
    if fmt == ".npy" and defect in ("wrong columns", "text cell"):
        pytest.skip("no such defect in an .npy array")
    for k, option in enumerate(("--real", "--holdout", "--fake")):
        argv, bad = [], None
        for other in ("--real", "--holdout", "--fake"):
            path = write_score_file(str(tmp_path / f"{k}{other[2:]}"), fmt, defect if other == option else "good",
                                    seed=k)
            argv += [other, path]
            bad = path if other == option else bad
        code, _, lines = run_score([*argv, "--only", "privacy"], tmp_path / f"out{k}")
        one_clear_error(code, lines)
        assert f"{option} {bad}" in lines[0], (option, lines)

@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_score_random_files(tmp_path_factory, data):
    """Random trios of good and damaged files and a few option values: a run or one clear error line."""
    EXAMPLES["score: files"] += 1
    folder = tmp_path_factory.mktemp("score")
    argv = score_inputs(data.draw, folder)
    argv += ["--only", data.draw(st.sampled_from(["privacy", "memorisation", "separability", "privacy,memorisation",
                                                  "separability,privacy", "beauty", ","]))]
    argv += data.draw(st.sampled_from([[], [], ["--num", "2"], ["--num", "1"], ["--feature-columns", "a"],
                                       ["--feature-columns", "a,zz"], ["--id-column", "time"]]))
    code, stdout, lines = run_score(argv, folder / "out")
    ACCEPTED["score: files"] += code == 0
    if code == 0:
        assert "written:" in stdout and (folder / "out" / "metrics.json").is_file()
    else:
        one_clear_error(code, lines)
