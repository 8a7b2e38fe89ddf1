"""benchmarks/score_noise.py: run names, the spread's shares against hand-computed values, and a run scored
end to end with its table and picture written and read back."""
import json
import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import score_noise  # noqa: E402


def test_names_of_ablation_runs_and_of_others():
    assert score_noise.parse_name("/x/factors_L24_s2_recipe_layer_norm_15m/") == ("factors", 24, 2,
                                                                                  "recipe_layer_norm")
    assert score_noise.parse_name("vowels_L24_s0_recipe_15m") == ("vowels", 24, 0, "recipe")
    assert score_noise.parse_name("runs/my-run") == ("my-run", None, None, "my-run")


def _row(seed, scores, floor=(0.01, 0.03)):
    return {"set": "s", "length": 24, "seed": seed, "variant": "v", "scores": scores, "floor": list(floor)}


def test_shares_split_the_spread_as_computed_by_hand():
    # classifiers within a set vary by var 0.02; the two sets of a run by 0.08 (0.07 beyond the classifiers'
    # 0.02 / 2); the runs' means (0.4, 0.6) by 0.02, less than draws and classifiers explain (0.07/2 + 0.02/4)
    rows = [_row(0, [[0.1, 0.3], [0.5, 0.7]]), _row(1, [[0.3, 0.5], [0.7, 0.9]])]
    s = score_noise.shares(rows)
    assert s["classifier_sd"] == pytest.approx(np.sqrt(0.02))
    assert s["draw_sd"] == pytest.approx(np.sqrt(0.07))
    assert s["seed_sd"] == 0.0 and s["mean"] == pytest.approx(0.5) and s["run_means"] == pytest.approx([0.4, 0.6])
    assert s["se"] == pytest.approx(0.1) and s["floor"] == pytest.approx(0.02) and s["repeats_for_001"] == 200
    # runs far apart: the seeds' share is what the classifiers and the draws leave (var 0.32 - 0.04)
    far = [_row(0, [[0.1, 0.3], [0.5, 0.7]]), _row(1, [[0.9, 1.1], [1.3, 1.5]])]
    assert score_noise.shares(far)["seed_sd"] == pytest.approx(np.sqrt(0.32 - 0.04))
    # one evaluation with 2 classifiers: var 0.02 / 2 + 0.07
    assert score_noise.measurement_sd(s, 2) == pytest.approx(np.sqrt(0.01 + 0.07))
    one = score_noise.shares([_row(0, [[0.2, 0.2]])])  # one run, one set: no draw or seed share to give
    assert one["draw_sd"] is None and one["seed_sd"] is None and one["se"] is None and one["classifier_sd"] == 0


def test_a_run_scored_end_to_end_and_its_files_read_back(tmp_path, monkeypatch):
    import quality

    from gan_sru.config import load_config

    name = "sines_L8_s0_recipe_5s"
    cfg = load_config(os.path.join(REPO, "configs", "sines.yaml"), [
        f"run_dir={tmp_path}", f"name={name}", "data.num_sequences=80", "data.seq_len=8", "train.batch_size=8",
        "model.generator.hidden_size=8", "model.discriminator.hidden_size=8", "train.steps=2",
        "train.checkpoint_every=2", "train.sample_every=1000", "train.select=none", "data.holdout_fraction=0.25"])
    quality.train_steps(cfg, progress=False)
    floors = {}
    row = score_noise.score_run(str(tmp_path / name), repeats=3, draws=2, protocol="fast", floors=floors,
                                iterations=5)
    assert (row["set"], row["length"], row["seed"], row["variant"]) == ("sines", 8, 0, "recipe")
    assert row["step"] == 2 and row["num"] == 20 and row["iterations"] == 5
    assert np.shape(row["scores"]) == (2, 3) and len(row["floor"]) == 3 and len(floors) == 1
    assert all(0 <= x <= 0.5 for d in row["scores"] for x in d)
    assert row["scores"][0] != row["scores"][1]  # two generated sets, two seeds of classifiers
    again = score_noise.score_run(str(tmp_path / name), repeats=3, draws=1, protocol="fast", floors=floors,
                                  iterations=5)
    assert again["scores"][0] == row["scores"][0] and again["floor"] == row["floor"]  # seeded, the floor reused
    monkeypatch.setattr(score_noise, "RESULTS", str(tmp_path))
    doc = {"cpu": "Test CPU", "protocol": "fast", "repeats": 3, "draws": 2, "command": "score_noise.py x",
           "rows": [row]}
    text = score_noise.write(doc, "noise")
    assert json.loads((tmp_path / "noise.json").read_text())["rows"][0]["scores"] == row["scores"]
    assert "| sines | 8 | recipe | 1 |" in text and "Test CPU" in (tmp_path / "noise.md").read_text()
    assert "| sines | 8 | 1 |" in text  # the set's row of one evaluation's sd
    assert os.path.getsize(tmp_path / "noise.png") > 10_000
