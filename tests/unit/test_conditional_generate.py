"""generate / evaluate / SequenceGAN on a tiny conditional run: conditions (file, key=value), their refusals, the
labels and attributes in every output, resume and unconditional behaviour unchanged."""
import json
import os

import numpy as np
import pandas as pd
import pytest

import gan_sru.models  # noqa: F401  (fills the registries)
from gan_sru.conditional.conditions import ConditionError
from gan_sru.config import load_config
from gan_sru.data import read_data

TINY = ["data.source=sines_classes", "data.num_sequences=60", "data.num_features=2", "data.seq_len=8",
        "train.steps=6", "train.batch_size=8", "train.checkpoint_every=3", "train.sample_every=6",
        "model.generator.hidden_size=8", "model.discriminator.hidden_size=8", "data.holdout_fraction=0.25",
        "train.log_every=2"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from gan_sru.train import Trainer

    folder = tmp_path_factory.mktemp("cond")
    cfg = load_config(None, TINY + [f"run_dir={folder}", "name=tiny"])
    return Trainer(cfg, progress=False).train()


@pytest.fixture(scope="module")
def enc(run):
    from gan_sru.sampling import TrainedRun

    return TrainedRun(run).encoding


def test_run_folder_and_checkpoint_keep_the_categories(run):
    from gan_sru.sampling import TrainedRun

    saved = json.load(open(os.path.join(run, "conditioning.json")))
    assert saved["attributes"][0]["categories"]["labels"] == ["c0", "c1", "c2"]
    assert TrainedRun(run).encoding.categorical[0].labels == ["high", "low", "mid"]


@pytest.mark.slow  # 10-25 s: pictures, the checkpoint GIF, the metrics
def test_generate_writes_labels_and_attributes_that_read_back(run, tmp_path):
    from gan_sru.commands.generate import generate

    paths = generate(run, num=9, seed=3, out=str(tmp_path / "g"), progress=False)
    raw = read_data(paths["samples.csv"], extra={"attributes": ["class"], "categorical": ["state"]})
    assert len(raw) == 9 and raw.arrays[0].shape == (8, 2)
    assert set(raw.extras["attributes"]["rows"][:, 0]) <= {"c0", "c1", "c2"}
    assert set(np.concatenate(raw.extras["categorical"]["arrays"]).ravel()) <= {"low", "mid", "high"}
    z = np.load(paths["samples.npz"], allow_pickle=False)
    assert z["data"].shape == (9, 8, 2) and z["class"].shape == (9, 8) and z["state"].dtype.kind == "U"
    assert os.path.isfile(paths["per_class.png"]) and os.path.isfile(paths["categories.png"])
    again = generate(run, num=9, seed=3, out=str(tmp_path / "g2"), progress=False)
    assert open(paths["samples.csv"]).read() == open(again["samples.csv"]).read()


@pytest.mark.slow  # 10-25 s: pictures, the checkpoint GIF, the metrics
def test_conditions_file_and_condition_items(run, tmp_path):
    from gan_sru.commands.generate import generate

    file = tmp_path / "cond.csv"
    pd.DataFrame({"class": ["c2", "c0", "c2"]}).to_csv(file, index=False)
    paths = generate(run, num=100, seed=0, out=str(tmp_path / "a"), progress=False, conditions=str(file))
    df = pd.read_csv(paths["samples.csv"])
    assert df.groupby("id")["class"].first().tolist() == ["c2", "c0", "c2"]
    paths = generate(run, num=5, seed=0, out=str(tmp_path / "b"), progress=False, condition=["class=c1"])
    assert set(pd.read_csv(paths["samples.csv"])["class"]) == {"c1"}


@pytest.mark.parametrize("kwargs, message", [
    ({"condition": ["class=c7"]}, r"--condition class=c7: 'c7' was never seen in training for the categorical "
                                  r"attribute 'class'; allowed values: \['c0', 'c1', 'c2'\]"),
    ({"condition": ["colour=red"]}, r"unknown attribute 'colour'; the run's attributes are \['class'\]"),
    ({"condition": ["class"]}, r"--condition 'class': expected KEY=VALUE"),
    ({"conditions": "extra"}, r"columns \['class', 'size'\] do not match the run's attributes \['class'\]; "
                              r"extra \['size'\]"),
    ({"conditions": "missing"}, r"columns \['size'\] do not match .*; missing \['class'\]; extra \['size'\]"),
    ({"conditions": "unseen"}, r"column 'class': value 'c9' was never seen in training; expected one of"),
])
def test_bad_conditions_are_refused_before_anything_is_written(run, tmp_path, kwargs, message):
    from gan_sru.commands.generate import generate

    tables = {"extra": {"class": ["c0"], "size": [1]}, "missing": {"size": [1]}, "unseen": {"class": ["c9"]}}
    if "conditions" in kwargs:
        path = tmp_path / "c.csv"
        pd.DataFrame(tables[kwargs["conditions"]]).to_csv(path, index=False)
        kwargs = {"conditions": str(path)}
    with pytest.raises(ConditionError, match=message):
        generate(run, num=4, out=str(tmp_path / "out"), progress=False, **kwargs)
    assert not os.path.exists(tmp_path / "out")


@pytest.mark.slow  # 10-25 s: pictures, the checkpoint GIF, the metrics
def test_cli_takes_conditions(run, tmp_path):
    from gan_sru.commands.main import main

    code = main(["generate", "--run", run, "--num", "4", "--condition", "class=c0", "--out", str(tmp_path / "o"),
                 "--no-progress"])
    assert code == 0 and set(pd.read_csv(tmp_path / "o" / "samples.csv")["class"]) == {"c0"}


@pytest.mark.slow  # 10-25 s: pictures, the checkpoint GIF, the metrics
def test_evaluate_reports_conditional_scores(run, tmp_path):
    from gan_sru.commands.evaluate import evaluate_run

    result = evaluate_run(run, num=30, repeats=1, iterations=3, progress=False, out=str(tmp_path / "e"))
    section = result["conditional"]
    assert 0 <= section["classes"]["trtr_accuracy"] <= 1 and set(section["classes"]["per_class_accuracy"]) == \
        {"c0", "c1", "c2"}
    assert section["attributes"]["class"]["measure"] == "total variation"
    assert 0 <= section["categorical"]["state"]["transition_tv"] <= 1
    report = open(tmp_path / "e" / "report.md").read()
    assert "## Conditional generation" in report and "TSTR" in report
    assert os.path.isfile(tmp_path / "e" / "per_class.png")


def test_unconditional_noise_streams_are_unchanged():
    """Conditioning draws its Gumbel noise after the normal noise: an unconditional run's noise is as before."""
    from gan_sru.networks import noise_shapes, sample_noise
    from gan_sru.sizes import apply_size_rules

    gcfg = apply_size_rules(load_config(None), 5, 5)["model"]["generator"]
    a = sample_noise(gcfg, 5, 3, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    b = {k: rng.standard_normal(s).astype(np.float32) for k, s in noise_shapes(gcfg, 5, 3).items()}
    assert a.keys() == b.keys() == {"step", "static"}
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


# ---------------------------------------------------------------- fuzz: the new input paths

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gan_sru import GanSruError  # noqa: E402

FUZZ = settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
CELLS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True),
                  st.sampled_from(["c0", "c1", "c2", "c9", "", "NA", "1"]), st.text(max_size=3))


@FUZZ
@given(items=st.lists(st.text(max_size=12), max_size=3))
def test_fuzz_condition_items_give_rows_or_a_condition_error(enc, items):
    from gan_sru.conditional.conditions import parse_conditions

    attrs = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]
    try:
        rows = parse_conditions(items, enc, attrs, 3, 0)
    except ConditionError as e:
        assert str(e).strip()
        return
    assert rows.shape == (3, 1) and set(rows[:, 0]) <= {"c0", "c1", "c2"}


@FUZZ
@given(columns=st.lists(st.sampled_from(["class", "size", "id", ""]), min_size=1, max_size=3, unique=True),
       cells=st.lists(CELLS, min_size=1, max_size=4))
def test_fuzz_conditions_files_give_rows_or_a_condition_error(enc, tmp_path, columns, cells):
    from gan_sru.conditional.conditions import read_conditions

    path = tmp_path / "c.csv"
    # an escape character lets the writer put any text in the file (a NUL cannot be quoted); the reader is
    # what is under test
    pd.DataFrame({c: cells for c in columns}).to_csv(path, index=False, escapechar="\\")
    try:
        rows = read_conditions(str(path), enc)
    except ConditionError as e:
        assert str(e).strip()
        return
    assert rows.shape == (len(cells), 1) and set(rows[:, 0]) <= {"c0", "c1", "c2"}


@FUZZ
@given(kind=st.lists(CELLS, min_size=8, max_size=8), event=st.lists(CELLS, min_size=8, max_size=8),
       missing=st.sampled_from(["error", "drop", "interpolate"]))
def test_fuzz_attribute_and_categorical_columns_load_or_raise_a_gan_sru_error(kind, event, missing):
    from gan_sru.data import load_dataset

    df = pd.DataFrame({"id": [0] * 4 + [1] * 4, "time": list(range(4)) * 2, "x": np.arange(8.0),
                       "kind": pd.Series(kind, dtype=object), "event": pd.Series(event, dtype=object)})
    cfg = load_config(None, ["data.source=file", "data.path=x.csv", f"data.missing={missing}",
                             "data.attributes=[kind]", "data.categorical=[event]"])
    try:
        ds = load_dataset(cfg["data"], 0, source=df)
    except GanSruError as e:
        assert str(e).strip()
        return
    assert all(np.isfinite(s).all() for s in ds.sequences) and np.isfinite(ds.attributes).all()
    for s in ds.sequences:
        np.testing.assert_array_equal(s[:, 1:].sum(axis=1), 1.0)


@pytest.mark.slow  # trains a tiny model
def test_python_api_fits_and_samples_attributes_and_categories(tmp_path):
    from gan_sru import SequenceGAN

    rng = np.random.default_rng(0)
    rows = [{"id": f"s{i}", "time": t, "x": rng.normal(), "kind": "ab"[i % 2], "event": int(rng.integers(0, 2))}
            for i in range(12) for t in range(6)]
    df = pd.DataFrame(rows)
    model = SequenceGAN(steps=4, batch_size=8, log_every=2, generator_hidden_size=8, discriminator_hidden_size=8,
                        run=str(tmp_path / "m"), progress=False)
    model.fit(df, sequence_key="id", sequence_index="time", attributes=["kind"], categorical=["event"])
    out = model.sample(num_sequences=5, seed=0, conditions={"kind": "b"})
    assert list(out.columns) == ["id", "time", "x", "event", "kind"]
    assert set(out["kind"]) == {"b"} and set(out["event"]) <= {0, 1} and out["event"].dtype == df["event"].dtype
    table = model.sample(seed=1, conditions=pd.DataFrame({"kind": ["a", "b", "a"]}))
    assert table.groupby("id", sort=False)["kind"].first().tolist() == ["a", "b", "a"]
    with pytest.raises(ConditionError, match=r"'z' was never seen in training .* allowed values: \['a', 'b'\]"):
        model.sample(conditions={"kind": "z"})


def test_a_conditions_fifo_or_missing_file_is_refused_before_it_is_opened(enc, tmp_path):
    from gan_sru.conditional.conditions import read_conditions

    fifo = tmp_path / "c.csv"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    with pytest.raises(ConditionError, match=r"^--conditions .*c\.csv: is a FIFO \(named pipe\); expected a regular"):
        read_conditions(str(fifo), enc)
    with pytest.raises(ConditionError, match=r"^--conditions .*gone\.csv: data file not found"):
        read_conditions(str(tmp_path / "gone.csv"), enc)
