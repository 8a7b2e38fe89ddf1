"""The Python API (gan_sru.SequenceGAN): fit / sample / save / load on DataFrames and arrays with tiny models
(seconds), samples in the input's layout, dtypes and units, refusals, and the one-command wide CSV run."""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from gan_sru import ConfigError, DataError, SequenceGAN
from gan_sru.sampling import TrainedRun, training_split

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = dict(steps=4, batch_size=8, generator_hidden_size=8, discriminator_hidden_size=8, checkpoint_every=2,
            sample_every=1000, log_every=2, holdout_fraction=0.2)


def long_df(num=8, length=10, seed=0):
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2024-03-01", tz="UTC")
    df = pd.DataFrame({
        "sensor": np.repeat([f"s{i}" for i in range(num)], length),
        "at": np.tile(pd.date_range(start, periods=length, freq="30min"), num),
        "temp": (20 + 5 * rng.normal(size=num * length)).astype(np.float32),
        "count": rng.integers(100, 200, size=num * length),
        "on": rng.random(num * length) > 0.5,
    })
    df.loc[[3, 17], "temp"] = np.nan  # missing values, interpolated: the generator never sees NaN
    return df


def test_dataframe_round_trip_in_the_input_layout(tmp_path):
    df = long_df()
    model = SequenceGAN(progress=False, missing="interpolate", **TINY)
    assert model.fit(df, sequence_key="sensor", sequence_index="at") is model
    s = model.sample(num_sequences=5, seed=0)
    assert list(s.columns) == list(df.columns) and s.dtypes.to_dict() == df.dtypes.to_dict()
    assert len(s) == 50 and sorted(s["sensor"].unique()) == [str(i) for i in range(5)]
    assert not s.isna().any().any()  # generated data never holds NaN
    for name in ("temp", "count"):  # data units: inside the training range (sigmoid output mapped back)
        assert df[name].min() <= s[name].min() and s[name].max() <= df[name].max()
    assert s["at"].iloc[0] == df["at"].min() and (s["at"].diff().iloc[1:10] == pd.Timedelta("30min")).all()
    pd.testing.assert_frame_equal(s, model.sample(num_sequences=5, seed=0))
    assert not s["temp"].equals(model.sample(num_sequences=5, seed=1)["temp"])
    assert model.summary["missing"]["action"] == "interpolated 2 values in 2 sequences"

    saved = model.save(tmp_path / "my_model")
    loaded = SequenceGAN.load(saved)
    pd.testing.assert_frame_equal(loaded.sample(num_sequences=5, seed=0), s)  # after load = before
    run = TrainedRun(saved)  # the saved folder is a run folder: its config points at its own data
    assert run.cfg["data"]["path"] == os.path.join(saved, "data", "training_data.parquet")
    assert len(training_split(run.cfg)[0]) + len(training_split(run.cfg)[1]) == 8
    with pytest.raises(Exception, match="already exists"):
        model.save(saved)


def test_wide_dataframe_with_a_date_index_and_arrays(tmp_path):
    t = pd.date_range("2024-01-01", periods=60, freq="h", name="when")
    wide = pd.DataFrame({"a": np.sin(np.arange(60) / 5), "b": np.arange(60, dtype=np.int32)}, index=t)
    model = SequenceGAN(progress=False, window=6, **TINY).fit(wide, sequence_key=None)
    s = model.sample(num_sequences=3, seed=2)
    assert s.index.names == ["sequence", "when"] and list(s.columns) == ["a", "b"]
    assert s.dtypes.to_dict() == wide.dtypes.to_dict() and len(s) == 18
    assert s.loc[0].index[0] == t[0] and s.loc[2].index[5] == t[5]
    assert model.summary["layout"] == "wide" and model.summary["training"]["sequences"] == 55

    x = np.random.default_rng(0).normal(size=(12, 7, 3)).astype(np.float32)
    y = SequenceGAN(progress=False, **TINY).fit(x).sample(4, seed=0)
    assert isinstance(y, np.ndarray) and y.shape == (4, 7, 3) and y.dtype == np.float32
    assert np.all(y.min(axis=(0, 1)) >= x.min(axis=(0, 1))) and np.all(y.max(axis=(0, 1)) <= x.max(axis=(0, 1)))
    ragged = [np.arange(n * 2, dtype=np.int64).reshape(n, 2) for n in (5, 6, 7, 5, 6, 7)]
    z = SequenceGAN(progress=False, **TINY).fit(ragged).sample(3, seed=0)
    assert isinstance(z, list) and all(a.dtype == np.int64 and len(a) in (5, 6, 7) for a in z)


def test_refusals_name_the_problem_and_leave_nothing(tmp_path):
    df = long_df()
    run = tmp_path / "run"
    model = SequenceGAN(progress=False, run=str(run), **TINY)
    with pytest.raises(DataError, match=r"DataFrame: no column 'id' \(sequence_key\); found columns \['sensor', "
                                        r"'at', 'temp', 'count', 'on'\]"):
        model.fit(df, sequence_key="id")
    with pytest.raises(DataError, match=r"DataFrame: no column 'time' \(sequence_index\)"):
        model.fit(df, sequence_key="sensor", sequence_index="time")
    gaps = df.copy()
    gaps.loc[5, "at"] = pd.NaT
    with pytest.raises(DataError, match=r"DataFrame: row 5, column 'at' \(sequence 's0'\): missing time"):
        model.fit(gaps, sequence_key="sensor", sequence_index="at")
    with pytest.raises(DataError, match=r"DataFrame: 2 missing values in 2 of 8 sequences; the first at row 3, "
                                        r"column 'temp' \(sequence 's0'\)"):
        model.fit(df, sequence_key="sensor", sequence_index="at")  # data.missing: error (the default)
    assert not run.exists()  # every refusal came before a file was written
    with pytest.raises(ConfigError, match=r"unknown option 'stepz'; did you mean steps"):
        SequenceGAN(stepz=3)
    with pytest.raises(ConfigError, match=r"SequenceGAN\(steps=0\): train.steps: got 0 \(int\); expected an integer "
                                          r">= 1"):
        SequenceGAN(steps=0)
    with pytest.raises(Exception, match="not trained"):
        SequenceGAN().sample(3)


def test_config_dict_dotted_overrides_and_aliases():
    model = SequenceGAN({"train": {"steps": 7}}, overrides={"model.generator.hidden_size": 5}, seed=3, lr=0.01,
                        discriminator_num_layers=2)
    assert model.cfg["train"]["steps"] == 7 and model.cfg["model"]["generator"]["hidden_size"] == 5
    assert model.cfg["seed"] == 3 and model.cfg["train"]["lr"] == 0.01
    assert model.cfg["model"]["discriminator"]["num_layers"] == 2
    assert SequenceGAN(config=os.path.join(REPO, "configs", "sines.yaml"), steps=9).cfg["train"]["steps"] == 9


def test_import_stays_light_and_the_api_is_lazy():
    code = ("import sys, gan_sru; assert 'nnabla' not in sys.modules and 'pandas' not in sys.modules, 'heavy'; "
            "from gan_sru import SequenceGAN; assert 'gan_sru.models' in sys.modules; print(SequenceGAN.__name__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=REPO))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "SequenceGAN"


def test_wide_csv_of_one_series_trains_with_one_command(tmp_path):
    """The issue's 'done when': a wide CSV (a header of feature names, one row per step, no id column) trains with
    the user-data config and nothing else but its path."""
    n = 400
    path = tmp_path / "series.csv"
    pd.DataFrame({"date": pd.date_range("2023-01-01", periods=n, freq="h").strftime("%Y-%m-%d %H:%M"),
                  "load": np.sin(np.arange(n) / 12) * 10 + 50, "temp": np.cos(np.arange(n) / 24)}).to_csv(path,
                                                                                                          index=False)
    cmd = [sys.executable, "train.py", "--config", "configs/user_data.yaml", "--set", f"data.path={path}",
           "--set", f"run_dir={tmp_path / 'runs'}", "--set", "train.steps=2", "--set", "model.generator.hidden_size=8",
           "--set", "model.discriminator.hidden_size=8", "--no-progress"]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=REPO))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "wide format" in out.stdout and "no column 'time': column 'date' holds dates" in out.stdout
    summary = open(tmp_path / "runs" / "user_data" / "data_summary.txt").read()
    assert "read: 1 sequence, lengths 400" in summary and "training data: 377 sequences" in summary


def test_fit_on_a_file_path_and_load_a_folder_without_the_api_layout(tmp_path):
    path = tmp_path / "d.csv.gz"
    long_df().dropna().drop(columns="on").to_csv(path, index=False)
    model = SequenceGAN(progress=False, run=str(tmp_path / "run"), **TINY).fit(
        str(path), sequence_key="sensor", sequence_index="at")
    s = model.sample(3, seed=0)
    assert list(s.columns) == ["sensor", "at", "temp", "count"]
    assert str(s["at"].dtype) == "datetime64[ns, UTC]" and s["temp"].dtype == np.float64
    os.remove(tmp_path / "run" / "api_layout.json")  # like a folder made by `gan-sru train`: the data summary says
    pd.testing.assert_frame_equal(SequenceGAN.load(tmp_path / "run").sample(3, seed=0), s)
    np.save(tmp_path / "x.npy", np.random.default_rng(1).normal(size=(10, 6, 2)))
    y = SequenceGAN(progress=False, **TINY).fit(str(tmp_path / "x.npy")).sample(2)
    assert isinstance(y, np.ndarray) and y.shape == (2, 6, 2)


def test_run_dir_and_name_place_the_run_and_progress_false_is_quiet(tmp_path, capfd):
    model = SequenceGAN(run_dir=str(tmp_path / "runs"), name="api_long", progress=False, missing="interpolate",
                        **TINY)
    assert model.run is None
    model.fit(long_df(), sequence_key="sensor", sequence_index="at")
    assert model.run == str(tmp_path / "runs" / "api_long") and os.path.isdir(os.path.join(model.run, "checkpoints"))
    out = capfd.readouterr()
    assert out.out == "" and "world_size" not in out.err and "data:" not in out.err
    assert SequenceGAN.load(model.run).run == model.run
    SequenceGAN(progress=False, verbose=True, missing="interpolate", **TINY).fit(
        long_df(), sequence_key="sensor", sequence_index="at")
    assert "world_size" in capfd.readouterr().out


@pytest.mark.parametrize("kw, error, message", [
    (dict(num_sequences=2.5), TypeError, "num_sequences=2.5: expected an integer, got float"),
    (dict(num_sequences="3"), TypeError, "num_sequences='3': expected an integer, got str"),
    (dict(num_sequences=True), TypeError, "num_sequences=True: expected an integer, got bool"),
    (dict(num_sequences=0), ValueError, "num_sequences=0: expected an integer from 1 to 1000000"),
    (dict(length=-5), ValueError, "length=-5: expected an integer from 2 to 100000"),
    (dict(length=0), ValueError, "length=0: expected an integer from 2 to 100000"),
    (dict(length=2**64), ValueError, "length=18446744073709551616: expected an integer from 2 to 100000"),
    (dict(num_sequences=1000, length=10**5), ValueError,
     "num_sequences=1000, length=100000: 1,000 sequences of up to 100,000 steps: at most 5,000,000"),
    (dict(seed=-1), ValueError, "seed=-1: expected an integer from 0 to"),
    (dict(seed=None), TypeError, "seed=None: expected an integer, got NoneType"),
    (dict(seed=1.5), TypeError, "seed=1.5: expected an integer, got float"),
    (dict(start="2030-01-01"), DataError, "start='2030-01-01': the model was trained on arrays"),
])
def test_sample_arguments_are_checked_in_python_terms(kw, error, message):
    model = SequenceGAN(progress=False, **TINY).fit(np.random.default_rng(0).normal(size=(12, 6, 2)))
    with pytest.raises(error) as e:
        model.sample(**{"num_sequences": 2, **kw})
    assert str(e.value).startswith(message)


def test_data_errors_name_the_arguments_not_config_keys():
    df = long_df().dropna()
    df["mode"] = np.where(np.arange(len(df)) % 2, "on", "off")
    with pytest.raises(DataError) as e:
        SequenceGAN(progress=False, **TINY).fit(df, sequence_key="sensor", sequence_index="at")
    text = str(e.value)
    assert "set categorical: [mode]" in text and "list the features in feature_columns" in text
    assert "data." not in text and "--" not in text
    s = SequenceGAN(progress=False, **TINY).fit(df, sequence_key="sensor", sequence_index="at",
                                                 categorical=["mode"]).sample(3, seed=0, start="2031-05-01")
    assert set(s["mode"]) <= {"on", "off"} and s["at"].iloc[0] == pd.Timestamp("2031-05-01", tz="UTC")
