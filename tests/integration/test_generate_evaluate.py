"""`gan-sru generate` and `gan-sru evaluate` on tiny real runs: files, scales, lengths, pictures, errors."""
import argparse
import json
import os
import subprocess
import sys

import imageio.v3 as iio
import numpy as np
import pytest

from gan_sru import CheckpointError, ConfigError
from gan_sru.commands import evaluate
from gan_sru.commands import generate as generate_cmd
from gan_sru.config import load_config
from gan_sru.data import read_sequences, training_data
from gan_sru.metrics.separability import GROUPS
from gan_sru.sampling import TrainedRun
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=96", "data.seq_len=8", "data.min_len=3", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.generator.noise_dim=3", "model.discriminator.hidden_size=8",
        "train.steps=4", "train.checkpoint_every=2", "train.sample_every=1000", "train.log_every=1"]
STEPS = [2, 4]
FAST = {"discriminative": 10, "predictive": 10, "context_fid": 10}  # iterations: the plumbing, not the scores


def make_run(tmp_path_factory, config):
    cfg = load_config(os.path.join(REPO, config), TINY + [f"run_dir={tmp_path_factory.mktemp('runs')}"])
    with open(os.devnull, "w") as devnull:
        return Trainer(cfg, progress=False, out=devnull).train()


@pytest.fixture(scope="module")
def fixed_run(tmp_path_factory):
    return make_run(tmp_path_factory, "configs/sines.yaml")


@pytest.fixture(scope="module")
def varlen_run(tmp_path_factory):
    return make_run(tmp_path_factory, "configs/sines_varlen.yaml")


def gen_args(run, out, **kw):
    args = dict(run=run, checkpoint=None, num=10, length=None, seed=0, out=str(out), no_progress=True,
                context="cpu", device_id="0", type_config="float")
    args.update(kw)
    return argparse.Namespace(**args)


def train_split(run):
    cfg = load_config(os.path.join(run, "config.yaml"))
    data = training_data(cfg)
    return data.train, data.holdout


def image_size(path):
    """(width, height) of a PNG, or of every frame of a GIF, as a list of (width, height)."""
    img = iio.imread(path, index=None) if path.endswith(".gif") else iio.imread(path)
    if path.endswith(".gif"):
        return [(f.shape[1], f.shape[0]) for f in img]
    return img.shape[1], img.shape[0]


# ---------------------------------------------------------------- generate

def test_generate_writes_readable_samples_in_data_units(fixed_run, tmp_path):
    assert generate_cmd.main(gen_args(fixed_run, tmp_path, num=10, seed=1)) == 0
    npy = np.load(tmp_path / "samples.npy")
    assert npy.shape == (10, 8, 5) and npy.dtype == np.float32
    for name in ("samples.npy", "samples.npz", "samples.csv"):
        seqs = read_sequences(str(tmp_path / name))
        assert len(seqs) == 10 and all(s.shape == (8, 5) for s in seqs), name
        np.testing.assert_allclose(np.stack(seqs), npy, rtol=1e-6, atol=1e-7, err_msg=name)

    # exactly the generator's [0, 1] output mapped back through the run's scaler
    run = TrainedRun(fixed_run, 4)
    x, _ = run.sample(10, seed=1)
    np.testing.assert_array_equal(npy, run.scaler.inverse(x))
    lo, hi = run.scaler.min, run.scaler.max
    assert np.all(npy >= lo - 1e-5) and np.all(npy <= hi + 1e-5)

    info = json.loads((tmp_path / "generate.json").read_text())
    assert info["checkpoint_step"] == 4 and info["num"] == 10 and info["seed"] == 1
    assert image_size(str(tmp_path / "samples.png")) == (800, 800)
    assert image_size(str(tmp_path / "real_vs_generated.png")) == (1200, 400)
    assert image_size(str(tmp_path / "training.gif")) == [(600, 600)] * len(STEPS)


def test_same_seed_same_bytes_other_seed_other_samples(fixed_run, tmp_path):
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        generate_cmd.main(gen_args(fixed_run, tmp_path / name, num=6, seed=seed, checkpoint=2))
    files = sorted(os.listdir(tmp_path / "a"))
    assert "training.gif" in files and "samples.csv" in files
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    for f in ("samples.npy", "samples.csv", "samples.png"):
        assert (tmp_path / "a" / f).read_bytes() != (tmp_path / "c" / f).read_bytes(), f
    assert json.loads((tmp_path / "a" / "generate.json").read_text())["checkpoint_step"] == 2


def test_varlen_lengths_come_from_the_training_lengths(varlen_run, tmp_path):
    generate_cmd.main(gen_args(varlen_run, tmp_path, num=40, seed=5))
    train, _ = train_split(varlen_run)
    expected = generate_cmd.draw_lengths(train.lengths, 40, 5)
    assert not (tmp_path / "samples.npy").exists()  # ragged: one .npy array would need pickle
    for name in ("samples.npz", "samples.csv"):
        lengths = [len(s) for s in read_sequences(str(tmp_path / name))]
        assert lengths == expected.tolist(), name
    assert set(expected) <= set(train.lengths.tolist())
    assert len(set(expected.tolist())) > 1
    assert image_size(str(tmp_path / "training.gif")) == [(600, 600)] * len(STEPS)


def test_length_overrides_the_drawn_lengths(varlen_run, tmp_path):
    generate_cmd.main(gen_args(varlen_run, tmp_path, num=7, length=5))
    npy = np.load(tmp_path / "samples.npy")
    assert npy.shape == (7, 5, 5)
    assert [len(s) for s in read_sequences(str(tmp_path / "samples.csv"))] == [5] * 7


@pytest.mark.parametrize("kw, error, words", [
    (dict(num=0), ConfigError, ["--num 0", "at least 1"]),
    (dict(length=1), ConfigError, ["--length 1", "at least 2"]),
    (dict(checkpoint=3), CheckpointError, ["no checkpoint at step 3", "[2, 4]"]),
])
def test_generate_errors(fixed_run, tmp_path, kw, error, words):
    with pytest.raises(error) as e:
        generate_cmd.main(gen_args(fixed_run, tmp_path / "out", **kw))
    for w in words:
        assert w in str(e.value)
    assert not (tmp_path / "out").exists()


def test_generate_errors_on_missing_or_foreign_folders(tmp_path):
    with pytest.raises(CheckpointError, match="no such run folder"):
        generate_cmd.main(gen_args(str(tmp_path / "nope"), tmp_path / "out"))
    with pytest.raises(CheckpointError, match="not a run folder"):
        generate_cmd.main(gen_args(str(tmp_path), tmp_path / "out"))


def cli(*argv):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "gan_sru", *argv], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)


def test_cli_generate_success_and_error(fixed_run, tmp_path):
    out = tmp_path / "gen"
    p = cli("generate", "--run", fixed_run, "--num", "3", "--seed", "2", "--out", str(out), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert str(out / "samples.npy") in p.stdout and str(out / "training.gif") in p.stdout
    assert np.load(out / "samples.npy").shape == (3, 8, 5)

    p = cli("generate", "--run", fixed_run, "--checkpoint", "99", "--out", str(tmp_path / "bad"), "--no-progress")
    assert p.returncode == 2
    assert "error: " in p.stderr and "no checkpoint at step 99" in p.stderr
    assert "Traceback" not in p.stderr


# ---------------------------------------------------------------- evaluate

def check_scores(scores, repeats):
    assert set(scores) == {"discriminative", "predictive", "context_fid", "correlational", "mmd2"}
    d = scores["discriminative"]
    assert len(d["scores"]) == repeats and 0 <= d["mean"] <= 0.5 and d["std"] >= 0
    p = scores["predictive"]
    assert len(p["scores"]) == repeats and np.isclose(p["mae"], np.mean(p["scores"])) and np.isfinite(scores["mmd2"])
    assert np.isfinite(scores["context_fid"]) and len(scores["correlational"]["scores"]) == 5


def test_evaluate_writes_metrics_report_and_pictures(fixed_run, tmp_path):
    result = evaluate.evaluate_run(fixed_run, num=16, repeats=2, seed=0, progress=False, out=str(tmp_path),
                                   iterations=FAST)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["checkpoint_step"] == 4 and metrics["num_generated"] == 16 and metrics["repeats"] == 2
    assert metrics["num_real"] == 16 and 2 <= metrics["num_holdout"] <= 16
    assert metrics["iterations"] == FAST and "[0, 1]" in metrics["scale"]
    check_scores(metrics["generated"], 2)
    check_scores(metrics["holdout"], 2)
    assert metrics["targets"] == {"discriminative": 0.05, "predictive": 0.10}
    assert result["generated"] == metrics["generated"]

    report = (tmp_path / "report.md").read_text()
    assert "step 4" in report and "16 generated" in report
    assert "repeats of the discriminative and predictive scores" in report
    sizes = {"pca": (600, 600), "autocorrelation": (800, 500), "real_vs_generated": (1200, 400),
             "correlation": (1500, 540), "scores": (900, 400), "separability": (800, 420),
             "memorisation": (800, 420)}
    assert set(metrics["pictures"]) == set(sizes)
    mem = metrics["memorisation"]
    assert mem["references"] >= 16 and mem["shared_steps"] is False and "distances" not in mem
    assert 0 <= mem["generated"]["q05"] <= mem["generated"]["median"] and mem["holdout"]["median"] > 0
    assert np.isclose(mem["median_ratio"], mem["generated"]["median"] / mem["holdout"]["median"])
    assert "## Does it copy its training data?" in report and f"**{mem['median_ratio']:.3f}**" in report
    sep = metrics["separability"]
    assert set(sep["generated"]) == set(sep["holdout"]) == set(GROUPS)
    assert all(0 <= v <= 0.5 for part in sep.values() for v in part.values())
    assert "## What tells generated from real" in report and "| feature correlations | " in report
    for key, name in metrics["pictures"].items():
        assert f"]({name})" in report, name
        assert image_size(str(tmp_path / name)) == sizes[key], name


def test_evaluate_of_three_sequences_leaves_out_what_tells_them_apart(fixed_run, tmp_path):
    result = evaluate.evaluate_run(fixed_run, num=3, repeats=1, seed=0, progress=False, out=str(tmp_path),
                                   iterations=FAST)  # two folds need 4 sequences of each set
    assert result["separability"] is None and "separability" not in result["pictures"]
    assert not (tmp_path / "separability.png").exists()
    assert "What tells generated from real" not in (tmp_path / "report.md").read_text()


def test_evaluate_varlen_default_folder_and_reused_floor(varlen_run):
    first = evaluate.evaluate_run(varlen_run, step=2, num=12, repeats=1, seed=1, progress=False, iterations=FAST)
    folder = os.path.join(varlen_run, "evaluation")
    assert first["out"] == folder
    assert json.loads(open(os.path.join(folder, "metrics.json")).read())["checkpoint_step"] == 2
    check_scores(first["generated"], 1)
    again = evaluate.evaluate_run(varlen_run, num=12, repeats=1, seed=1, progress=False, iterations=FAST,
                                  floor=first["holdout"])
    assert again["checkpoint_step"] == 4 and again["holdout"] == first["holdout"]


@pytest.mark.parametrize("kw, words", [
    (dict(num=1), ["--num 1", "at least 2"]),
    (dict(repeats=0), ["--repeats 0", "at least 1"]),
])
def test_evaluate_errors(fixed_run, kw, words):
    args = dict(run=fixed_run, checkpoint=None, num=10, repeats=1, seed=0, no_progress=True, context="cpu",
                device_id="0", type_config="float")
    args.update(kw)
    with pytest.raises(ConfigError) as e:
        evaluate.main(argparse.Namespace(**args))
    for w in words:
        assert w in str(e.value)


def test_evaluate_refuses_a_missing_checkpoint(fixed_run):
    with pytest.raises(CheckpointError, match="no checkpoint at step 7"):
        evaluate.evaluate_run(fixed_run, step=7, num=4, repeats=1, progress=False, iterations=FAST)
