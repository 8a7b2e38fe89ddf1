"""benchmarks/step_time.py: each tree's steps timed in a process running that tree's code, and its checks."""
import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import step_time  # noqa: E402


def test_two_trees_are_timed_with_their_own_code_and_written(tmp_path, monkeypatch, capsys):
    # a second tree: a copy of this one's code (the child must import the copy's gan_sru, not this one's)
    other = tmp_path / "other"
    for part in ("gan_sru", "configs"):
        shutil.copytree(os.path.join(REPO, part), other / part, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    out = tmp_path / "results"
    monkeypatch.setattr(sys, "argv", ["step_time.py", "--trees", f"{REPO},{other}", "--configs", "sines",
                                      "--steps", "2", "--rounds", "1", "--out", str(out)])
    step_time.main()
    doc = json.loads((out / "step_time.json").read_text())
    assert [r["tree"] for r in doc["rows"]] == [REPO, str(other)]
    assert all(r["config"] == "sines" and r["median_ms"] > 0 for r in doc["rows"])
    assert doc["rows"][0]["speedup"] == 1.0 and doc["steps"] == 2
    assert "speed-up" in capsys.readouterr().out


def test_a_folder_that_is_not_a_checkout_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["step_time.py", "--trees", f"{REPO},{tmp_path}"])
    with pytest.raises(SystemExit, match=rf"{tmp_path} is not a checkout of this repository"):
        step_time.main()
    monkeypatch.setattr(sys, "argv", ["step_time.py", "--trees", REPO])
    with pytest.raises(SystemExit, match="at least two checkouts or two variants"):
        step_time.main()


def test_variants_of_one_tree_are_timed_with_their_overrides(tmp_path, monkeypatch, capsys):
    """--variant: one tree under two sets of overrides; a bad override is the child's error, named."""
    out = tmp_path / "results"
    monkeypatch.setattr(sys, "argv", ["step_time.py", "--trees", REPO, "--configs", "sines", "--steps", "2",
                                      "--rounds", "1", "--out", str(out), "--variant", "",
                                      "--variant", "train.lr=0.002,train.beta2=0.99"])
    step_time.main()
    doc = json.loads((out / "step_time.json").read_text())
    assert [r["sets"] for r in doc["rows"]] == [[], ["train.lr=0.002", "train.beta2=0.99"]]
    assert capsys.readouterr().out.rstrip().endswith("train.lr=0.002,train.beta2=0.99")
    monkeypatch.setattr(sys, "argv", ["step_time.py", "--trees", REPO, "--configs", "sines", "--steps", "2",
                                      "--rounds", "1", "--out", str(out), "--variant", "", "--variant",
                                      "train.lr=0"])
    with pytest.raises(SystemExit, match="train.lr"):
        step_time.main()


def test_the_recipe_fills_a_config_file_for_every_tree_and_keeps_what_is_set(tmp_path, monkeypatch):
    """--recipe with a YAML path: the child trains the config the recipe completes from its data; the keys the
    recipe set are recorded, and a key given with --set is not among them (at 48 steps the recipe sets the rate)."""
    config = tmp_path / "sines.yaml"
    config.write_text("data:\n  source: sines\n  num_sequences: 64\n  seq_len: 48\n  num_features: 2\n")
    out = tmp_path / "results"
    monkeypatch.setattr(sys, "argv", ["step_time.py", "--trees", REPO, "--configs", str(config), "--recipe",
                                      "--steps", "2", "--rounds", "1", "--out", str(out), "--set", "train.lr=0.003",
                                      "--variant", "", "--variant", "model.discriminator.shift=0.25"])
    step_time.main()
    doc = json.loads((out / "step_time.json").read_text())
    assert doc["recipe"] is True and [r["config"] for r in doc["rows"]] == [str(config)] * 2
    first, second = (set(r["recipe"]) for r in doc["rows"])
    assert {"train.terms", "train.batch_size", "model.generator.hidden_size"} <= first
    assert "train.lr" not in first and "model.discriminator.shift" in first - second
