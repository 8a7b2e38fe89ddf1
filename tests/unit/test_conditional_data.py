"""Attribute and categorical columns (issue #13): reading, encoding, decoding, the built-in labelled set, and
every refusal with its message."""
import numpy as np
import pandas as pd
import pytest

from gan_sru import ConfigError, DataError
from gan_sru.config import load_config
from gan_sru.data import load_dataset, read_data, save_sequences, training_data
from gan_sru.data.attributes import Encoding, MissingAttribute
from gan_sru.data.builtin_classes import (
    BAND_WIDTH,
    SHIFT,
    STATES,
    TRANSITION,
    class_band,
    make_sines_classes,
    stationary,
)
from gan_sru.data.categorical import Categories, TooManyCategories
from gan_sru.data.columns import AttributeVaries


def long_frame(n=6, length=5, seed=0):
    """n sequences: features x, y; attribute 'kind' (text), 'size' (float), 'flag' (bool); per-step 'event' (int)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        kind, size, flag = ["a", "b", "c"][i % 3], float(10 + i * 1.5), bool(i % 2)
        for t in range(length):
            rows.append({"id": f"s{i}", "time": t, "x": rng.normal(), "y": rng.normal(), "kind": kind, "size": size,
                         "flag": flag, "event": int(rng.integers(0, 3)) * 10})
    return pd.DataFrame(rows)


def cfg_for(path=None, **data):
    cfg = load_config(None, [f"data.source={'file' if path else 'sines'}"] + ([f"data.path={path}"] if path else []))
    cfg["data"].update({"csv_feature_columns": ["x", "y"], **data})
    return cfg["data"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet", "frame"])
def test_readers_take_attribute_and_categorical_columns_by_name(tmp_path, suffix):
    df = long_frame()
    path = None
    if suffix == ".csv":
        path = str(tmp_path / "d.csv")
        df.to_csv(path, index=False)
    elif suffix == ".parquet":
        path = str(tmp_path / "d.parquet")
        df.to_parquet(path, index=False)
    data_cfg = cfg_for(path or "unused.csv", attributes=["kind", "size", "flag"], categorical=["event"],
                       csv_feature_columns=None)  # the features: every column not named elsewhere
    ds = load_dataset(data_cfg, 0, source=df if suffix == "frame" else None)
    enc = ds.encoding
    assert ds.info["feature_names"] == ["x", "y"]
    kinds = {a["name"]: a["kind"] for a in enc.attributes}
    assert kinds == {"kind": "categorical", "size": "numeric", "flag": "categorical"}
    assert enc.categorical[0].labels == [0, 10, 20]
    assert ds.num_features == 2 + 3 and ds.attributes.shape == (6, 3 + 1 + 2)
    # decoding gives back every original label and attribute
    rows = enc.decode_attributes(ds.attributes)
    want = df.groupby("id", sort=False)[["kind", "size", "flag"]].first().to_numpy()
    assert [r[0] for r in rows] == list(want[:, 0]) and [r[2] for r in rows] == list(want[:, 2])
    np.testing.assert_allclose(rows[:, 1].astype(float), want[:, 1].astype(float), rtol=1e-6)
    events = np.concatenate([enc.decode_steps(s)[:, 0] for s in ds.sequences])
    assert list(events) == list(df["event"])
    # the scaler maps the one-hot columns as identity
    np.testing.assert_array_equal(ds.scaler.inverse(ds.sequences[0])[:, 2:], ds.sequences[0][:, 2:])


def test_wide_table_attribute_follows_its_windows(tmp_path):
    df = pd.DataFrame({"x": np.sin(np.arange(30.0)), "site": "north", "mode": ["on", "off"] * 15})
    path = str(tmp_path / "w.csv")
    df.to_csv(path, index=False)
    ds = load_dataset(cfg_for(path, csv_id_column=None, window=8, attributes=["site"], categorical=["mode"],
                              csv_feature_columns=None), 0)
    assert len(ds) == 23 and ds.attributes.shape == (23, 1)
    assert set(ds.encoding.decode_attributes(ds.attributes)[:, 0]) == {"north"}
    assert list(ds.encoding.decode_steps(ds.sequences[1])[:, 0]) == ["off", "on"] * 4


def test_encoding_round_trips_through_json():
    import json

    df = long_frame()
    ds = load_dataset(cfg_for("x.csv", attributes=["kind", "size"], categorical=["event"]), 0, source=df)
    back = Encoding.from_dict(json.loads(json.dumps(ds.encoding.to_dict())))
    np.testing.assert_array_equal(back.encode_attributes(back.decode_attributes(ds.attributes)), ds.attributes)
    assert back.categorical[0].labels == ds.encoding.categorical[0].labels


def test_categories_sort_and_decode_mixed_labels():
    cats = Categories.fit("c", ["b", 3, True, "a", 3], 10)
    assert cats.labels == [True, 3, "a", "b"]
    assert list(cats.decode(cats.codes(["a", 3, True]))) == ["a", 3, True]
    with pytest.raises(DataError, match=r"column 'c': value 'z' was never seen in training; expected one of "
                                        r"\[True, 3, 'a', 'b'\]"):
        cats.codes(["z"])


def test_integer_attribute_rule():
    from gan_sru.data.categorical import is_categorical_attribute

    assert is_categorical_attribute(pd.Series([1, 2, 3] * 4))
    assert not is_categorical_attribute(pd.Series(range(11)))
    assert not is_categorical_attribute(pd.Series([0.5, 1.0]))
    assert is_categorical_attribute(pd.Series(["1", "x"]))
    assert is_categorical_attribute(pd.Series([True, False]))


# ---------------------------------------------------------------- refusals

def test_attribute_varying_within_a_sequence_is_refused_with_sequence_and_steps(tmp_path):
    df = long_frame()
    df.loc[(df["id"] == "s2") & (df["time"] == 3), "kind"] = "zzz"
    path = str(tmp_path / "d.csv")
    df.to_csv(path, index=False)
    with pytest.raises(AttributeVaries, match=r"d.csv: attribute column 'kind' varies within sequence 's2': 'c' at "
                                              r"step 0 \(line 12, column 'kind'\) but 'zzz' at step 3 \(line 15"):
        load_dataset(cfg_for(path, attributes=["kind"]), 0)


def test_too_many_categories_is_refused_naming_the_column():
    df = long_frame()
    df["event"] = np.arange(len(df))
    with pytest.raises(TooManyCategories, match=r"column 'event' holds 30 distinct values .* expected at most "
                                                r"data.max_categories = 20"):
        load_dataset(cfg_for("x.csv", categorical=["event"], max_categories=20), 0, source=df)


def test_missing_numeric_attribute_refused_under_error_and_dropped_under_drop():
    df = long_frame()
    df.loc[df["id"] == "s1", "size"] = np.nan
    with pytest.raises(MissingAttribute, match=r"attribute column 'size' is missing for sequence 's1' .* data.missing "
                                               r"is 'error'"):
        load_dataset(cfg_for("x.csv", attributes=["size"]), 0, source=df)
    ds = load_dataset(cfg_for("x.csv", attributes=["size"], missing="drop"), 0, source=df)
    assert len(ds) == 5


def test_missing_category_and_missing_column_are_refused():
    df = long_frame()
    df.loc[3, "event"] = None
    with pytest.raises(DataError, match=r"row 3, column 'event' \(sequence 's0'\): missing category"):
        load_dataset(cfg_for("x.csv", categorical=["event"]), 0, source=df)
    with pytest.raises(DataError, match=r"missing column 'colour' \(data.attributes\)"):
        load_dataset(cfg_for("x.csv", attributes=["colour"]), 0, source=long_frame())


def test_attributes_of_array_data_and_of_other_sources_are_refused(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((3, 4, 2)))
    with pytest.raises(DataError, match=r"a.npy: data.attributes and data.categorical name columns of a table"):
        read_data(str(tmp_path / "a.npy"), extra={"attributes": ["k"], "categorical": []})
    with pytest.raises(ConfigError, match=r"data.attributes / data.categorical: got \['k'\] but data.source is "
                                          r"'sines'"):
        load_config(None, ["data.attributes=[k]"])
    with pytest.raises(ConfigError, match=r"column 'k' is also in data.attributes"):
        load_config(None, ["data.source=file", "data.path=x.csv", "data.attributes=[k]", "data.categorical=[k]"])


# ---------------------------------------------------------------- writers: labels and attributes round-trip

@pytest.mark.parametrize("name", ["s.csv", "s.parquet"])
def test_written_samples_read_back_with_their_labels(tmp_path, name):
    seqs = [np.random.default_rng(i).normal(size=(4, 2)) for i in range(3)]
    columns = {"state": [np.array(["lo", "hi", "hi", "lo"], dtype=object)] * 3,
               "kind": [np.full(4, k, dtype=object) for k in ("a", "b", "a")]}
    path = str(tmp_path / name)
    save_sequences(seqs, path, columns=columns)
    raw = read_data(path, extra={"attributes": ["kind"], "categorical": ["state"]})
    assert list(raw.extras["attributes"]["rows"][:, 0]) == ["a", "b", "a"]
    assert list(raw.extras["categorical"]["arrays"][1][:, 0]) == ["lo", "hi", "hi", "lo"]
    np.testing.assert_allclose(raw.arrays[2], seqs[2], rtol=1e-6)


def test_npz_holds_label_arrays_without_pickle(tmp_path):
    seqs = [np.zeros((3, 1)), np.zeros((2, 1))]
    save_sequences(seqs, tmp_path / "s.npz", columns={"state": [np.array(["a", "b", "a"], dtype=object),
                                                                np.array(["b", "b"], dtype=object)]})
    z = np.load(tmp_path / "s.npz", allow_pickle=False)
    assert z["state"].tolist() == [["a", "b", "a"], ["b", "b", ""]]


# ---------------------------------------------------------------- the built-in labelled set

def test_sines_classes_is_deterministic_and_has_its_structure():
    x, classes, states = make_sines_classes(3000, 48, 2, 3, seed=5)
    x2, c2, s2 = make_sines_classes(3000, 48, 2, 3, seed=5)
    np.testing.assert_array_equal(x, x2)
    assert not np.array_equal(make_sines_classes(10, 48, 2, 3, seed=6)[0], x[:10])
    assert np.abs(np.bincount(classes) / 3000 - 1 / 3).max() < 0.04
    # the state chain: transition counts estimate TRANSITION (~3000*47 transitions: standard error < 0.01)
    counts = np.zeros((3, 3))
    np.add.at(counts, (states[:, :-1].ravel(), states[:, 1:].ravel()), 1)
    np.testing.assert_allclose(counts / counts.sum(axis=1, keepdims=True), TRANSITION, atol=0.02)
    np.testing.assert_allclose(np.bincount(states.ravel()) / states.size, stationary(), atol=0.03)
    # the state shifts the signal: removing SHIFT leaves a wave in [-1, 1]
    base = x - SHIFT[states][:, :, None]
    assert np.abs(base).max() <= 1 + 1e-9
    # the class sets the frequency band: the dominant frequency of the (sine) class 0 lies in its band
    sine = base[classes == 0, :, 0]
    spectrum = np.abs(np.fft.rfft(sine, n=1024, axis=1))
    freq = np.argmax(spectrum, axis=1) * 2 * np.pi / 1024
    lo, hi = class_band(0)
    assert np.mean((freq > lo - 0.03) & (freq < hi + 0.03)) > 0.9 and hi - lo == pytest.approx(BAND_WIDTH)
    # the waveform: class 1 is a square wave (most steps near +-1), class 2 a triangle (values spread evenly)
    assert np.mean(np.abs(base[classes == 1]) > 0.9) > 0.6
    assert np.mean(np.abs(base[classes == 2]) > 0.9) < 0.2


def test_sines_classes_config_loads_with_its_columns():
    cfg = load_config(None, ["data.source=sines_classes", "data.num_sequences=60", "data.num_features=2"])
    data = training_data(cfg)
    enc = data.dataset.encoding
    assert enc.attr_names == ["class"] and [c.name for c in enc.categorical] == ["state"]
    assert sorted(enc.categorical[0].labels) == sorted(STATES)
    assert data.train.attributes.shape == (len(data.train), 3) and data.dataset.num_features == 5
    with pytest.raises(ConfigError, match="sines_classes has the attribute 'class' and the categorical feature"):
        load_config(None, ["data.source=sines_classes", "data.attributes=[kind]"])
