"""benchmarks/peers.py: the VAR baseline on tiny sines, from the split files through `gan-sru score` to the JSON and
Markdown it writes; the table's formatting of a row with every score."""
import json
import os
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import peers  # noqa: E402

pytest.importorskip("statsmodels")


def test_var_baseline_end_to_end(tmp_path):
    results = tmp_path / "results"
    peers.main(["--sets", "sines", "--generators", "var,train", "--override", "data.num_sequences=60",
                "--num", "60", "--repeats", "1", "--only", "privacy,memorisation", "--budget", "10s",
                "--work", str(tmp_path / "work"), "--results", str(results), "--stem", "p"])
    split = tmp_path / "work" / "sines"
    train = np.loadtxt(split / "train.csv", delimiter=",", skiprows=1)
    held = np.loadtxt(split / "holdout.csv", delimiter=",", skiprows=1)
    assert (split / "train.csv").read_text().startswith("id,time,f0,f1,f2,f3,f4\n")
    assert len(np.unique(train[:, 0])) == 54 and len(np.unique(held[:, 0])) == 6  # 10% held out
    assert train.shape[0] == 54 * 24
    fake = np.loadtxt(split / "var" / "samples.csv", delimiter=",", skiprows=1)
    assert fake.shape == (60 * 24, 7) and np.isfinite(fake).all()

    doc = json.loads((results / "p.json").read_text())
    rows = {r["generator"]: r for r in doc["rows"]}
    assert set(rows) == {"var", "train"} and doc["budget"] == "10s" and doc["protocol"] == "fast"
    var, copier = rows["var"], rows["train"]
    assert var["lag_order"] >= 1 and var["fit_cpu_seconds"] >= 0 and var["num_train"] == 54
    assert var["metrics"]["num_generated"] == 60 and set(var["metrics"]["sections"]) == {"privacy", "memorisation"}
    assert var["score_command"].startswith("gan-sru score --real ") and "--only privacy,memorisation" in \
        var["score_command"]
    assert var["scores"]["discriminative"] is None  # fidelity was not asked for
    assert 0 <= var["scores"]["mia_auc"] <= 1
    # --num covers the training set, so the copier's samples are every training window: the attack sees it
    assert copier["scores"]["mia_auc"] > 0.9
    assert copier["scores"]["memorisation_ratio"] < 1e-3 < var["scores"]["memorisation_ratio"]

    text = (results / "p.md").read_text()
    assert text.startswith("`benchmarks/peers.py` (each row's commands in p.json). CPU: ")
    assert rows["var"]["benchmark_command"].startswith("benchmarks/peers.py --sets sines --generators var,train")
    assert "| sines | train | - | - | - (-) |" in text
    assert "| sines | var | " in text and f"| {var['scores']['mia_auc']:.3f} (" in text
    assert text.index("| sines | var |") < text.index("| sines | train |")  # GENERATORS' order
    assert (results / "p.png").stat().st_size > 1000


def test_table_of_full_scores():
    metrics = {"generated": {"discriminative": {"mean": 0.1234, "std": 0.01}, "predictive": {"mae": 0.05},
                             "context_fid": 0.5, "correlational": {"mean": 0.2}},
               "holdout": {"discriminative": {"mean": 0.02, "std": 0.0}, "predictive": {"mae": 0.049},
                           "context_fid": 0.01, "correlational": {"mean": 0.1}},
               "privacy": {"membership_inference": {"auc": 0.51, "interval": [-0.01, 0.03],
                                                    "tpr_at_low_fpr": 0.02},
                           "adversarial_accuracy": {"aa_train_synthetic": 0.6, "aa_holdout_synthetic": 0.61,
                                                    "privacy_loss": 0.01}},
               "memorisation": {"median_ratio": 0.987}}
    h = peers.headline(metrics)
    assert h["discriminative"] == 0.1234 and h["floor_predictive"] == 0.049 and h["privacy_loss"] == 0.01
    doc = {"cpu": "test CPU", "budget": "3m", "protocol": "fast", "repeats": 3,
           "rows": [{"set": "motions", "generator": "par", "fit_cpu_seconds": 170.0, "sample_cpu_seconds": 9.6,
                     "scores": h}]}
    assert ("| motions | par | 180 | 0.123 ± 0.010 (0.020) | 0.0500 (0.0490) | 0.500 (0.010) | 0.200 (0.100) | "
            "0.510 (2.0%) | 0.600 / 0.610 | +0.010 | 0.99 |") in peers.markdown(doc)
