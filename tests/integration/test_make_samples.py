"""scripts/make_samples.py with --run: a finished run of another built-in set gives its two README pictures,
named after the config, where --out-dir says; a folder without checkpoints is refused by name."""
import importlib.util
import os

import imageio.v3 as iio

from gan_sru.commands import evaluate
from gan_sru.config import load_config
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=64", "data.seq_len=8", "data.num_features=6", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.generator.noise_dim=3", "model.generator.static_noise_dim=2",
        "model.discriminator.hidden_size=8", "train.steps=2", "train.checkpoint_every=2", "train.select=none",
        "train.sample_every=1000", "train.log_every=1"]
FAST = {"discriminative": 10, "predictive": 10, "context_fid": 10}


def load_script():
    spec = importlib.util.spec_from_file_location("make_samples", os.path.join(REPO, "scripts", "make_samples.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_finished_wide_run_gives_its_pictures(tmp_path, capsys):
    config = os.path.join(REPO, "configs", "wide.yaml")
    cfg = load_config(config, TINY + [f"run_dir={tmp_path / 'runs'}"])
    with open(os.devnull, "w") as devnull:
        run = Trainer(cfg, progress=False, out=devnull).train()
    evaluate.evaluate_run(run, num=16, repeats=1, seed=0, progress=False, iterations=FAST)  # kept, not redone
    report = os.path.join(run, "evaluation", "report.md")
    before = os.path.getmtime(report)
    out = tmp_path / "pictures"
    assert load_script().main(["--config", config, "--run", run, "--out-dir", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["wide_correlation.png", "wide_real_vs_generated.png"]
    for name in os.listdir(out):
        assert iio.imread(out / name).ndim == 3
    assert os.path.getmtime(report) == before


def test_a_run_folder_without_checkpoints_is_refused(tmp_path, capsys):
    empty = tmp_path / "empty_run"
    empty.mkdir()
    config = os.path.join(REPO, "configs", "wide.yaml")
    assert load_script().main(["--config", config, "--run", str(empty), "--out-dir", str(tmp_path / "p")]) == 2
    assert f"--run {empty}: no checkpoints there" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()
