"""Portable run folders, end to end through the CLI in subprocesses: a run trained on a CSV in one folder is
generated from, evaluated, exported and resumed from another; moved data is found with --data and checked against
the run's fingerprint; a moved run folder samples with no data at all; column names, dates and category labels
come back in CSV and Parquet; a renamed checkpoint is refused; refused commands leave nothing behind."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from gan_sru import CheckpointError
from gan_sru.train.run_folder import RunFolder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["train.steps=4", "train.checkpoint_every=2", "train.batch_size=8", "train.log_every=2",
        "train.sample_every=1000", "model.generator.hidden_size=8", "model.discriminator.hidden_size=8",
        "data.holdout_fraction=0.25", "data.csv_id_column=unit", "data.csv_time_column=at", "data.categorical=[mode]"]


def units_frame(num=12, length=10, seed=0):
    """Long format: unit (text key), at (hourly dates as text), temp and load (numbers), mode (a category)."""
    rng = np.random.default_rng(seed)
    at = pd.date_range("2024-03-01 06:00", periods=length, freq="h").strftime("%Y-%m-%d %H:%M:%S")
    return pd.DataFrame({"unit": np.repeat([f"u{i:02d}" for i in range(num)], length), "at": np.tile(at, num),
                         "temp": rng.normal(20, 3, num * length).round(3), "load": rng.gamma(2, 5, num * length),
                         "mode": rng.choice(["idle", "busy", "off"], num * length)})


def cli(cwd, *argv, check=True):
    p = subprocess.run([sys.executable, "-m", "gan_sru", *argv], cwd=cwd, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=REPO))
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


def train(cwd, data, run_dir, name, *extra):
    args = ["train", "--config", os.path.join(REPO, "configs", "user_data.yaml"), "--no-progress",
            "--set", f"data.path={data}", "--set", f"run_dir={run_dir}", "--set", f"name={name}"]
    for item in TINY + list(extra):
        args += ["--set", item]
    return cli(cwd, *args)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A run trained from folder `home` on home/units.csv given by a relative path; `elsewhere`: another folder."""
    root = tmp_path_factory.mktemp("portable")
    home, elsewhere = root / "home", root / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    units_frame().to_csv(home / "units.csv", index=False)
    train(home, "units.csv", "runs", "units")
    return home, elsewhere, home / "runs" / "units"


def test_the_run_records_its_data_by_absolute_path_and_fingerprint(trained):
    home, _, run = trained
    record = json.loads((run / "sampling.json").read_text())
    assert record["data"]["path"] == str(home / "units.csv") and record["data"]["in_run"] is None
    fp = record["data"]["fingerprint"]
    assert fp["size"] == os.path.getsize(home / "units.csv") and len(fp["sha256"]) == 64
    assert sorted(record["lengths"]) == [10] * 9  # 12 sequences, 3 held out
    assert f"path: {home / 'units.csv'}" in (run / "config.yaml").read_text()  # resumes from any folder


def test_generate_from_another_folder_keeps_names_dates_and_labels(trained):
    _, elsewhere, run = trained
    p = cli(elsewhere, "generate", "--run", str(run), "--num", "4", "--out", "s.parquet", "--no-progress")
    assert "INFO" not in p.stderr  # nnabla's start-up line is silenced
    df = pd.read_parquet(elsewhere / "s.parquet")
    assert list(df.columns) == ["unit", "at", "temp", "load", "mode"]
    assert str(df["at"].dtype).startswith("datetime64") and df["at"].iloc[0] == pd.Timestamp("2024-03-01 06:00")
    assert (df.groupby("unit")["at"].diff().dropna() == pd.Timedelta("1h")).all()
    assert set(df["mode"]) <= {"idle", "busy", "off"} and df["unit"].nunique() == 4

    cli(elsewhere, "generate", "--run", str(run), "--num", "2", "--out", "s.csv", "--start", "2030-01-01",
        "--no-progress")
    text = (elsewhere / "s.csv").read_text().splitlines()
    assert text[0] == "unit,at,temp,load,mode" and text[1].split(",")[1] == "2030-01-01 00:00:00"
    assert text[2].split(",")[1] == "2030-01-01 01:00:00"

    cli(elsewhere, "generate", "--run", str(run), "--num", "3", "--out", "folder", "--no-progress")
    info = json.loads((elsewhere / "folder" / "generate.json").read_text())
    assert info["num_features"] == 3 and info["channels"] == 5  # temp, load, mode (3 one-hot channels)
    assert info["feature_names"] == ["temp", "load", "mode"]
    csv = pd.read_csv(elsewhere / "folder" / "samples.csv", dtype={"unit": str}, parse_dates=["at"])
    pd.testing.assert_frame_equal(csv, pd.read_parquet(elsewhere / "folder" / "samples.parquet"), check_dtype=False)


def test_evaluate_export_and_resume_from_another_folder(trained, tmp_path):
    _, elsewhere, run = trained
    copy = tmp_path / "units"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("run.lock"))
    code = ("from gan_sru.commands.evaluate import evaluate_run; "
            f"r = evaluate_run({str(copy)!r}, num=4, repeats=1, iterations=3, progress=False); "
            "print(r['num_real'], r['checkpoint_step'])")
    p = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=REPO))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[-1] == "4"
    plain = train(tmp_path, str(trained[0] / "units.csv"), "runs", "plain", "data.categorical=null",
                  "data.csv_feature_columns=[temp,load]")  # export takes unconditional runs
    assert "run folder" in plain.stdout
    cli(elsewhere, "export", "--run", str(tmp_path / "runs" / "plain"), "--format", "nnp", "--out", "g.nnp")
    assert os.path.getsize(elsewhere / "g.nnp") > 0
    p = cli(elsewhere, "train", "--config", str(copy / "config.yaml"), "--resume", "--set", "train.steps=6",
            "--no-progress")
    assert f"resumed {copy} from step 4" in p.stdout
    assert [s for s, _ in RunFolder(copy).list_checkpoints()][-1] == 6


def test_moved_data_gives_one_line_and_data_finds_it(trained, tmp_path):
    home, elsewhere, run = trained
    copy = tmp_path / "units"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("run.lock"))
    moved = tmp_path / "moved.csv"
    shutil.move(home / "units.csv", moved)
    try:
        p = cli(elsewhere, "evaluate", "--run", str(copy), "--num", "4", "--repeats", "1", check=False)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert p.stderr.strip().splitlines()[-1] == (
            f"error: the data of {copy} is gone: "
            f"{home / 'units.csv'} does not exist; pass --data NEW_PATH (checked against the run's fingerprint)")
        other = tmp_path / "other.csv"
        units_frame(seed=1).to_csv(other, index=False)
        p = cli(elsewhere, "train", "--config", str(copy / "config.yaml"), "--resume", "--data", str(other),
                "--set", "train.steps=6", "--no-progress", check=False)
        assert p.returncode == 2 and f"--data {other} is not the data {copy} was trained on" in p.stderr
        assert "pass --force-data to use it anyway" in p.stderr
        p = cli(elsewhere, "train", "--config", str(copy / "config.yaml"), "--resume", "--data", str(moved),
                "--set", "train.steps=6", "--no-progress")
        assert f"resumed {copy} from step 4" in p.stdout

        # data.path changed in the config to a different file: the resume says the data changed
        p = cli(elsewhere, "train", "--config", str(copy / "config.yaml"), "--resume", "--set", f"data.path={other}",
                "--set", "train.steps=8", "--no-progress", check=False)
        assert p.returncode == 2 and "error: --resume: the data changed: data.path" in p.stderr
        p = cli(elsewhere, "train", "--config", str(copy / "config.yaml"), "--resume", "--set", f"data.path={other}",
                "--force-data", "--set", "train.steps=8", "--no-progress")
        assert "from step 6" in p.stdout
    finally:
        shutil.move(moved, home / "units.csv")


def test_a_moved_run_folder_samples_without_its_data(trained, tmp_path):
    from gan_sru import SequenceGAN

    _, elsewhere, run = trained
    first = tmp_path / "a"
    shutil.copytree(run, first, ignore=shutil.ignore_patterns("run.lock"))
    before = SequenceGAN.load(first).sample(3, seed=2)
    moved = tmp_path / "b" / "c"
    os.makedirs(moved.parent)
    shutil.move(first, moved)
    after = SequenceGAN.load(moved).sample(3, seed=2)
    pd.testing.assert_frame_equal(before, after)
    assert list(after.columns) == ["unit", "at", "temp", "load", "mode"]
    assert set(after["mode"]) <= {"idle", "busy", "off"}
    p = cli(elsewhere, "generate", "--run", str(moved), "--num", "2", "--out", "m.npz", "--no-progress")
    assert "m.npz" in p.stdout


def test_a_run_folder_with_removed_options_samples_and_refuses_to_resume(trained, tmp_path):
    """A run trained before options were removed (its config.yaml and each checkpoint's saved config hold
    train.predictor_loss and train.r1_gamma at working values) samples as before, also once saved elsewhere;
    --resume, which trains, is refused naming a removed key."""
    from gan_sru import SequenceGAN
    from gan_sru.config.yaml import dump_yaml, parse_yaml
    from gan_sru.train.run_folder import Checkpoint

    _, elsewhere, run = trained
    old = tmp_path / "old"
    shutil.copytree(run, old, ignore=shutil.ignore_patterns("run.lock"))
    removed = {"predictor_loss": 1.0, "predictor_lags": 5, "r1_gamma": 1.0, "r1_stride": 4}
    tree = parse_yaml((old / "config.yaml").read_text(), "config.yaml")
    tree["train"].update(removed)
    (old / "config.yaml").write_text(dump_yaml(tree))
    for name in os.listdir(old / "checkpoints"):
        ckpt = Checkpoint.load(str(old / "checkpoints" / name))
        ckpt.meta["config"]["train"].update(removed)
        ckpt.save(str(old / "checkpoints" / name))
    pd.testing.assert_frame_equal(SequenceGAN.load(old).sample(3, seed=2), SequenceGAN.load(run).sample(3, seed=2))
    copied = SequenceGAN.load(old).save(tmp_path / "old_copy")  # saved elsewhere: the copy samples the same
    pd.testing.assert_frame_equal(SequenceGAN.load(copied).sample(3, seed=2), SequenceGAN.load(run).sample(3, seed=2))
    p = cli(elsewhere, "generate", "--run", str(old), "--num", "2", "--out", "old.npz", "--no-progress")
    assert "old.npz" in p.stdout
    p = cli(elsewhere, "train", "--config", str(old / "config.yaml"), "--resume", "--no-progress", check=False)
    assert p.returncode == 2 and "train.predictor_loss: 1.0: this option was removed" in p.stderr
    assert "Traceback" not in p.stderr


def test_a_model_saved_with_its_data_moves_and_evaluates(tmp_path):
    from gan_sru import SequenceGAN
    from gan_sru.sampling import training_split

    model = SequenceGAN(progress=False, steps=2, checkpoint_every=2, batch_size=8, generator_hidden_size=8,
                        discriminator_hidden_size=8, holdout_fraction=0.25)
    model.fit(units_frame(), sequence_key="unit", sequence_index="at", categorical=["mode"])
    saved = model.save(tmp_path / "saved")
    moved = tmp_path / "elsewhere" / "model"
    os.makedirs(moved.parent)
    shutil.move(saved, moved)
    record = json.loads((moved / "sampling.json").read_text())
    assert record["data"]["in_run"] == os.path.join("data", "training_data.parquet")
    from gan_sru.sampling import TrainedRun

    run = TrainedRun(str(moved))
    train, holdout = training_split(run.cfg, str(moved))  # the copy inside the moved folder, fingerprint checked
    assert len(train) == 9 and len(holdout) == 3
    assert not any(n.endswith(".partial") for n in os.listdir(tmp_path))


def test_a_renamed_checkpoint_is_refused(trained, tmp_path):
    from gan_sru.sampling import TrainedRun

    _, elsewhere, run = trained
    copy = tmp_path / "units"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("run.lock"))
    folder = RunFolder(copy)
    os.rename(folder.checkpoint_path(4), folder.checkpoint_path(50))
    with pytest.raises(CheckpointError, match=r"step_00000050.npz: the file is named step 50 but holds step 4; "
                                              r"rename it back to step_00000004.npz"):
        TrainedRun(str(copy), 50)
    p = cli(elsewhere, "train", "--config", str(copy / "config.yaml"), "--resume", "--set", "train.steps=60",
            "--no-progress", check=False)
    assert p.returncode == 2 and "the file is named step 50 but holds step 4" in p.stderr
    assert "Traceback" not in p.stderr


def test_a_refused_config_leaves_no_run_folder(tmp_path):
    p = cli(tmp_path, "train", "--config", os.path.join(REPO, "configs", "sines.yaml"), "--set", "seed=4294967296",
            "--set", "run_dir=runs", "--no-progress", check=False)
    assert p.returncode == 2 and "seed: got 4294967296" in p.stderr and "Traceback" not in p.stderr
    p = cli(tmp_path, "train", "--config", os.path.join(REPO, "configs", "sines.yaml"), "--set", "run_dir=runs",
            "--set", "data.num_sequences=40", "--set", "train.batch_size=8",
            "--set", "train.terms=[{name: predictor, weight: 1}]", "--no-progress", check=False)  # refused after
    # the folder was made (a removed term is refused when the terms are built)
    assert p.returncode == 2 and "the 'predictor' generator term was removed" in p.stderr
    assert "Traceback" not in p.stderr
    assert not os.path.exists(tmp_path / "runs" / "sines")
    p = cli(tmp_path, "generate", "--help")
    assert p.returncode == 0 and "Initializing" not in p.stdout + p.stderr


def test_a_run_folder_without_the_record_still_samples_by_rereading_its_data(trained, tmp_path):
    from gan_sru import SequenceGAN

    _, _, run = trained
    old = tmp_path / "old"
    shutil.copytree(run, old, ignore=shutil.ignore_patterns("run.lock"))
    now = SequenceGAN.load(old).sample(4, seed=5)
    os.remove(old / "sampling.json")  # as written before the record existed: the data is read again
    pd.testing.assert_frame_equal(SequenceGAN.load(old).sample(4, seed=5), now)


@pytest.mark.parametrize("kind", ["wide_csv", "long_parquet"])
def test_names_and_dates_come_back_from_csv_and_parquet_inputs(tmp_path, kind):
    n = 120
    rng = np.random.default_rng(3)
    if kind == "wide_csv":  # one hourly series with a `timestamp` column, cut into windows automatically
        data = tmp_path / "hourly.csv"
        pd.DataFrame({"timestamp": pd.date_range("2024-01-01", periods=n, freq="h").strftime("%Y-%m-%d %H:%M"),
                      "power kW": rng.normal(size=n), "t_out": rng.normal(size=n)}).to_csv(data, index=False)
        extra = ["data.csv_id_column=null", "data.csv_time_column=timestamp", "data.categorical=null"]
        columns, time, step = ["id", "timestamp", "power kW", "t_out"], "timestamp", pd.Timedelta("1h")
    else:  # long Parquet with numeric times every 0.5
        data = tmp_path / "long.parquet"
        pd.DataFrame({"unit": np.repeat(np.arange(10), 12), "t": np.tile(np.arange(12) * 0.5, 10),
                      "a": rng.normal(size=n), "b": rng.normal(size=n)}).to_parquet(data)
        extra = ["data.csv_id_column=unit", "data.csv_time_column=t", "data.categorical=null"]
        columns, time, step = ["unit", "t", "a", "b"], "t", 0.5
    p = train(tmp_path, str(data), "runs", "r", *extra)
    if kind == "wide_csv":
        assert "reshaped: cut into windows of 24 steps every 1 (data.window unset, one series of 120 steps" in p.stdout
    run = str(tmp_path / "runs" / "r")
    for out in ("s.csv", "s.parquet"):
        cli(tmp_path, "generate", "--run", run, "--num", "3", "--out", out, "--no-progress")
        df = pd.read_csv(tmp_path / out) if out.endswith(".csv") else pd.read_parquet(tmp_path / out)
        assert list(df.columns) == columns, out
        times = pd.to_datetime(df[time]) if kind == "wide_csv" else df[time]
        assert (times.groupby(df[columns[0]]).diff().dropna() == step).all(), out
    info = json.loads(cli(tmp_path, "generate", "--run", run, "--num", "2", "--out", "g", "--no-progress")
                      and (tmp_path / "g" / "generate.json").read_text())
    assert info["feature_names"] == columns[2:] and info["num_features"] == 2


@pytest.mark.slow  # 15-40 s: a classifier scores every checkpoint
def test_the_progress_bar_ends_on_the_selection_that_selection_json_holds(tmp_path):
    args = ["train", "--config", os.path.join(REPO, "configs", "sines.yaml"), "--set", "run_dir=runs"]
    for item in ["data.num_sequences=40", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
                 "model.discriminator.hidden_size=8", "train.steps=6", "train.checkpoint_every=2",
                 "train.sample_every=1000", "train.select=discriminative", "train.select_num=8"]:
        args += ["--set", item]
    p = cli(tmp_path, *args)
    last = [part for part in p.stderr.replace("\r", "\n").splitlines() if "best=" in part][-1]
    saved = json.loads((tmp_path / "runs" / "sines" / "selection.json").read_text())
    score = dict((s, v) for s, v in saved["history"])[saved["best"]]
    assert f"best={saved['best']} ({score:.3f})" in last and f"sel={saved['history'][-1][1]:.3f}" in last
    assert "6/6" in last
