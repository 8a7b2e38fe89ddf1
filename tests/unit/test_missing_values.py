"""data.missing (error | drop | interpolate) on known cases, and the data summary (dict, text, files)."""
import io
import json
import os
import re

import numpy as np
import pandas as pd
import pytest

from gan_sru import DataError
from gan_sru.config import load_config
from gan_sru.data import load_dataset, read_sequences
from gan_sru.data.summary import describe, read_summary, summary_text, write_summary
from gan_sru.train import Trainer

NAN = np.nan


def cfg_for(path, *overrides):
    return load_config(None, ["data.source=file", f"data.path={path}", "data.holdout_fraction=0", *overrides])


@pytest.fixture
def gappy(tmp_path):
    """Two sequences: 'a' with a gap at irregular times (0, 1, 3, 4) and a missing first value, 'b' complete."""
    path = tmp_path / "gappy.csv"
    path.write_text("id,time,x,y\n"
                    "a,0,,10\n"
                    "a,1,2,\n"
                    "a,3,6,30\n"
                    "a,4,NA,40\n"
                    "b,0,1,1\n"
                    "b,1,2,2\n")
    return path


def test_error_says_how_many_and_where_the_first_is(gappy):
    with pytest.raises(DataError, match=re.escape(
            f"{gappy}: 3 missing values in 1 of 2 sequences; the first at line 2, column 'x' (sequence 'a'). "
            "data.missing is 'error': set data.missing: interpolate")):
        read_sequences(gappy)
    x = np.zeros((2, 3, 2))
    x[1, 2, 0] = NAN
    with pytest.raises(DataError, match=r"1 missing value in 1 of 2 sequences; the first at sequence 1, step 2, "
                                         r"feature 0"):
        load_dataset(cfg_for("x.npy")["data"], 0, source=x)


def test_interpolate_is_linear_in_time_with_nearest_values_at_the_edges(gappy):
    a, b = read_sequences(gappy, missing="interpolate")
    # x: known (1, 2), (3, 6): t=0 takes the nearest (2), t=4 the nearest (6); y at t=1: between 10 and 30 at t=0, 3
    assert a.tolist() == [[2, 10], [2, 10 + 20 / 3], [6, 30], [6, 40]]
    assert b.tolist() == [[1, 1], [2, 2]]
    wide = pd.DataFrame({"v": [NAN, 1.0, NAN, NAN, 4.0, NAN]})  # no time column: by step
    ds = load_dataset(cfg_for("w.csv", "data.missing=interpolate", "data.window=6")["data"], 0, source=wide)
    assert ds.scaler.inverse(ds.sequences[0])[:, 0].tolist() == [1, 1, 2, 3, 4, 4]
    assert ds.info["missing"]["action"] == "interpolated 4 values in 1 sequence"
    with pytest.raises(DataError, match=r"sequence 'b' \(first row at row 2\): every value of feature 'v' is missing"):
        load_dataset(cfg_for("x.csv", "data.missing=interpolate")["data"], 0,
                     source=pd.DataFrame({"id": list("aabb"), "v": [1.0, 2.0, NAN, NAN]}))


def test_drop_leaves_out_sequences_or_windows(gappy, tmp_path):
    seqs = read_sequences(gappy, missing="drop")
    assert [s.tolist() for s in seqs] == [[[1, 1], [2, 2]]]
    ds = load_dataset(cfg_for(gappy, "data.missing=drop")["data"], 0)
    assert len(ds) == 1 and ds.info["missing"]["action"] == "dropped 1 of 2 sequences (3 missing values)"
    series = np.arange(20.0)
    series[[5, 12]] = NAN  # windows of 4, stride 2 start at 0, 2, ..., 16: those covering 5 (2, 4) or 12 (10, 12) go
    path = tmp_path / "wide.csv"
    pd.DataFrame({"v": series}).to_csv(path, index=False)
    ds = load_dataset(cfg_for(path, "data.missing=drop", "data.window=4", "data.window_stride=2")["data"], 0)
    starts = [int(round(ds.scaler.inverse(w)[0, 0])) for w in ds.sequences]
    assert starts == [0, 6, 8, 14, 16]
    assert ds.info["missing"]["action"] == "dropped 4 of 9 windows (2 missing values)"
    assert not any(np.isnan(w).any() for w in ds.sequences)


def test_drop_that_leaves_nothing_is_refused(tmp_path):
    path = tmp_path / "wide.csv"
    series = np.arange(30.0)
    series[[6, 13, 20, 27]] = NAN
    pd.DataFrame({"v": series}).to_csv(path, index=False)
    with pytest.raises(DataError, match=re.escape(
            f"{path}: every one of the 23 windows of 8 steps holds a missing value; data.missing: drop leaves none "
            f"(the longest stretch without missing values is 6 steps, first missing value at {path}: line 8, "
            "column 'v'); use a data.window of at most 6, or data.missing: interpolate")):
        load_dataset(cfg_for(path, "data.missing=drop", "data.window=8")["data"], 0)
    df = pd.DataFrame({"id": list("aabb"), "v": [1.0, NAN, NAN, 2.0]})
    with pytest.raises(DataError, match=r"DataFrame: every sequence holds a missing value \(2 missing values in 2 "
                                        r"of 2 sequences; the first at row 1, column 'v' \(sequence 'a'\)\); "
                                        r"data.missing: drop leaves no sequence"):
        read_sequences_frame(df, "drop")


def read_sequences_frame(df, missing):
    return load_dataset(cfg_for("x.csv", f"data.missing={missing}")["data"], 0, source=df)


def test_summary_reports_layout_ranges_missing_spacing_and_buckets(tmp_path):
    path = tmp_path / "d.csv"
    times = ["2024-01-01 00:00", "2024-01-01 01:00", "2024-01-01 02:00", "2024-01-01 04:00", "2024-01-01 05:00"]
    pd.DataFrame({"id": ["a"] * 5 + ["b"] * 3, "time": times + times[:3], "x": [1, 2, None, 4, 5, 6, 7, 8.5],
                  "y": [0.5] * 8}).to_csv(path, index=False)
    cfg = cfg_for(path, "data.missing=interpolate", "data.num_buckets=2")
    ds = load_dataset(cfg["data"], 0)
    s = describe(ds, cfg["data"], 0)
    assert s["layout"] == "long" and s["id_column"] == "id" and s["time_column"] == "time"
    assert s["sequences_read"] == 2 and s["lengths_read"] == {"min": 3, "median": 4.0, "max": 5}
    assert s["features"] == [{"name": "x", "min": 1.0, "max": 8.5}, {"name": "y", "min": 0.5, "max": 0.5}]
    assert s["missing"]["values"] == 1 and s["missing"]["policy"] == "interpolate"
    assert s["missing"]["first"] == f"{path}: line 4, column 'x' (sequence 'a')"
    t = s["time"]
    assert t["kind"] == "dates" and t["step"] == 3600 and t["irregular"] and t["irregular_gaps"] == 1
    assert t["max_step"] == 7200 and t["gaps"] == 6
    assert s["buckets"] == [{"length": 5, "sequences": 2}]  # the median length (5, 'higher') is the longest
    text = summary_text(s)
    for part in ("long format; id 'id', time 'time'", "read: 2 sequences, lengths 3 / 4 / 5",
                 "x [1, 8.5], y [0.5, 0.5]", "missing values: 1 in 1 sequence", "interpolated 1 value in 1 sequence",
                 "dates, step 1 h (median), IRREGULAR: 1 of 6 steps differ (from 1 h to 2 h)",
                 "buckets: <= 5 steps: 2"):
        assert part in text, (part, text)
    json_path, text_path = write_summary(tmp_path, s)
    assert read_summary(tmp_path) == json.loads(json.dumps(s)) and open(text_path).read() == text + "\n"
    assert sorted(os.listdir(tmp_path)) == ["d.csv", "data_summary.json", "data_summary.txt"]


def test_trainer_prints_and_saves_the_summary_and_a_refused_run_leaves_nothing(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"id": ["a"] * 4, "time": range(4), "x": [1.0, None, 3.0, 4.0]}).to_csv(path, index=False)
    base = ["data.source=file", f"data.path={path}", f"run_dir={tmp_path / 'runs'}", "name=r", "train.batch_size=2",
            "model.generator.hidden_size=4", "model.discriminator.hidden_size=4"]
    trainer = Trainer(load_config(None, base), progress=False)
    with pytest.raises(DataError, match="1 missing value"):
        trainer.prepare()
    assert not os.path.exists(tmp_path / "runs")  # refused before the run folder exists
    out = io.StringIO()
    trainer = Trainer(load_config(None, base + ["data.missing=interpolate"]), progress=False, out=out)
    trainer.prepare()
    trainer.run.unlock()
    assert "missing values: 1 in 1 sequence" in out.getvalue()
    assert read_summary(trainer.run.path)["missing"]["action"] == "interpolated 1 value in 1 sequence"
    assert os.path.isfile(os.path.join(trainer.run.path, "data_summary.txt"))
