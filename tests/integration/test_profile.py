"""gan_sru.profiling: exact network-pass counts per strategy, the report files, the errors, the CLI.

No test asserts a time: timings depend on the machine; the counts and the report's shape do not.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gan_sru import ConfigError
from gan_sru.commands.main import main as cli_main
from gan_sru.config import dump_config, load_config
from gan_sru.profiling import PASSES, parse_strategies, profile, write_report

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["data.num_sequences=64", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
        "model.generator.num_layers=1", "model.discriminator.hidden_size=8"]
# sines_varlen with two buckets (lengths 3..8 -> boundaries 6 and 8); steps 0, 1, 2 use lengths 8, 8, 6
TINY_VARLEN = TINY + ["data.min_len=3", "data.num_buckets=2"]
EXPECTED = {  # passes per step; D: real + fake in the D step, one more in the G step
    "detached": {"G_forward": 1, "G_backward": 1, "D_forward": 3, "D_backward": 3},
    "recompute": {"G_forward": 2, "G_backward": 1, "D_forward": 3, "D_backward": 3},
    "linked": {"G_forward": 2, "G_backward": 2, "D_forward": 3, "D_backward": 3},
}
# one G pass: the layer's matmul, the recurrence (bias) and the output affine; D (sru_bi, 1 layer): the
# matmul, the recurrence, and its two-layer head
FUNCTIONS_PER_PASS = {"G": 3, "D": 4}


def tiny_cfg(path="configs/sines.yaml", *extra):
    return load_config(os.path.join(REPO, path), TINY + list(extra))


@pytest.fixture(scope="module")
def report():
    """One in-process profile of the tiny config, every strategy, with the GraphProfiler breakdown."""
    return profile(tiny_cfg(), steps=2, warmup=2, progress=False, isolate=False, functions=True)


def check_counts(result, strategy):
    assert result["passes_per_step"] == EXPECTED[strategy]
    assert result["passes_same_every_step"]
    assert result["functions_per_pass"] == FUNCTIONS_PER_PASS
    for counted in result["counted_steps"]:  # the raw function calls, every warm-up step
        assert counted["calls"] == {p: EXPECTED[strategy][p] * FUNCTIONS_PER_PASS[p[0]] for p in PASSES}


@pytest.mark.parametrize("strategy", ["linked", "recompute", "detached"])
def test_passes_per_step_are_exact(report, strategy):
    check_counts(report["results"][strategy], strategy)


def test_strategies_see_the_same_data_noise_and_weights(report):
    """Same batches, noise and initial weights: the three strategies reach the same losses."""
    losses = [report["results"][s]["last_losses"] for s in ("linked", "recompute", "detached")]
    for loss in losses[1:]:
        np.testing.assert_allclose([loss["d_loss"], loss["g_loss"]],
                                   [losses[0]["d_loss"], losses[0]["g_loss"]], rtol=1e-5)


def test_varlen_two_buckets_counts_are_exact():
    cfg = load_config(os.path.join(REPO, "configs/sines_varlen.yaml"), TINY_VARLEN)
    rep = profile(cfg, steps=2, warmup=3, progress=False, isolate=False, functions=False)
    for strategy in ("linked", "recompute", "detached"):
        result = rep["results"][strategy]
        assert result["lengths_counted"] == [6, 8]  # both buckets were counted
        assert result["graph_builds"] == 2
        check_counts(result, strategy)


def test_report_files_parse_and_hold_every_strategy(report, tmp_path):
    import matplotlib.image

    paths = write_report(report, str(tmp_path / "out"))
    assert sorted(os.path.basename(p) for p in paths.values()) == ["profile.json", "profile.md", "profile.png"]
    with open(paths["json"]) as f:
        data = json.load(f)
    assert list(data["results"]) == ["linked", "recompute", "detached"]
    for strategy, result in data["results"].items():
        assert result["passes_per_step"] == EXPECTED[strategy]
        assert set(result["phase_ms"]) >= {"g_forward", "d_step", "g_step", "other"}
        assert result["memory"]["host_peak_mib"] > 0
    assert "g_backward" in data["results"]["detached"]["phase_ms"]
    assert set(data["savings"]) >= {"recompute", "linked"}
    for alt in ("recompute", "linked"):
        assert {"saving_ms", "bound_ms", "saving_of_bound_pct", "step_time_ratio"} <= set(data["savings"][alt])
    breakdown = data["function_breakdown"]
    assert breakdown["strategy"] == "detached"
    assert set(breakdown["graphs"]) == {"fake", "d_loss", "g_loss"}
    g_functions = {f["function"] for f in breakdown["graphs"]["fake"]["functions"]}
    assert {"SRURecurrence", "BlasMatmul"} <= g_functions  # the layers' products and the output layer
    with open(paths["md"]) as f:
        md = f.read()
    for strategy in ("linked", "recompute", "detached"):
        assert f"| {strategy} |" in md
    assert os.path.getsize(paths["png"]) > 20_000
    image = matplotlib.image.imread(paths["png"])
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 600
    assert image[..., :3].std() > 0.05  # not a blank canvas


def test_unknown_strategy_is_a_clear_config_error():
    with pytest.raises(ConfigError) as e:
        parse_strategies("linked,sideways")
    message = str(e.value)
    assert "'sideways'" in message and "detached, linked, recompute" in message
    with pytest.raises(ConfigError, match="listed twice"):
        parse_strategies("detached,detached")
    with pytest.raises(ConfigError, match="'sideways'"):
        profile(tiny_cfg(), strategies=("sideways",), progress=False, isolate=False)
    with pytest.raises(ConfigError, match="--warmup"):
        profile(tiny_cfg(), warmup=0, progress=False, isolate=False)


def test_cli_refuses_an_unknown_strategy(capsys):
    rc = cli_main(["profile", "--config", os.path.join(REPO, "configs/sines.yaml"), "--strategies", "fast"])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "'fast'" in err and "detached, linked, recompute" in err


def test_profile_subcommand_in_worker_processes(tmp_path, capsys):
    """`gan-sru profile` runs every strategy in a worker process of its own, on the config with the recipe's
    choices; the counts are the same."""
    out = tmp_path / "prof"
    args = ["profile", "--config", os.path.join(REPO, "configs/sines.yaml"), "--steps", "2", "--warmup", "1",
            "--out", str(out), "--no-progress", "--strategies", "recompute,detached"]
    for o in TINY:
        args += ["--set", o]
    assert cli_main(args) == 0
    printed = capsys.readouterr().out
    assert "| recompute |" in printed and "| detached |" in printed
    with open(out / "profile.json") as f:
        data = json.load(f)
    assert data["isolated"] and data["interleaved"]
    # the step training runs: the recipe fills the keys the config left unset and keeps the ones it set
    assert data["recipe"] == {"model.generator.static_noise_dim": 8, "model.generator.bidirectional": True,
                              "model.discriminator.shift": 0.0}
    assert "`model.generator.bidirectional` = true" in (out / "profile.md").read_text()
    for strategy in ("recompute", "detached"):
        assert data["results"][strategy]["passes_per_step"] == EXPECTED[strategy]
        assert data["results"][strategy]["memory"]["isolated"]


@pytest.mark.slow
def test_train_py_profile_through_the_cli(tmp_path):
    """`python train.py --config CFG --profile` writes the report into run_dir/name/profile."""
    cfg = tiny_cfg("configs/sines.yaml", f"run_dir={tmp_path / 'runs'}", "name=tiny")
    path = tmp_path / "tiny.yaml"
    dump_config(cfg, str(path))
    proc = subprocess.run([sys.executable, os.path.join(REPO, "train.py"), "--config", str(path), "--profile",
                           "--no-progress"], cwd=str(tmp_path), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    folder = tmp_path / "runs" / "tiny" / "profile"
    assert sorted(os.listdir(folder)) == ["profile.json", "profile.md", "profile.png"]
    with open(folder / "profile.json") as f:
        data = json.load(f)
    assert data["steps"] == 20 and data["warmup"] == 3  # the train parser has no --steps: the defaults
    for strategy in ("linked", "recompute", "detached"):
        assert data["results"][strategy]["passes_per_step"] == EXPECTED[strategy]
        assert f"| {strategy} |" in proc.stdout
