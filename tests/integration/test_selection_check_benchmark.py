"""benchmarks/selection_check.py: the selected and the newest checkpoint scored as `gan-sru evaluate` scores them,
evaluate's own measurement reused only where it is the same one, and the table's means over the runs."""
import json
import os
import sys

import nnabla as nn
import pytest

from gan_sru.commands.evaluate import evaluate_run
from gan_sru.config import load_config
from gan_sru.train import Trainer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import selection_check  # noqa: E402

TINY = ["data.num_sequences=96", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
        "model.generator.noise_dim=3", "model.discriminator.hidden_size=8", "train.sample_every=1000",
        "train.log_every=1", "train.select_num=24", "train.select=discriminative", "train.steps=6",
        "train.checkpoint_every=2", "train.keep_checkpoints=3"]


@pytest.fixture(scope="module")
def run_path(tmp_path_factory):
    cfg = load_config("configs/sines.yaml", TINY + [f"run_dir={tmp_path_factory.mktemp('runs')}"])
    nn.clear_parameters()
    with open(os.devnull, "w") as devnull:
        return Trainer(cfg, progress=False, out=devnull).train()


def test_a_fresh_score_is_evaluates_own_and_evaluates_file_is_reused_only_when_it_is_the_same(run_path):
    result = evaluate_run(run_path, step=4, num=20, repeats=2, seed=0, progress=False, protocol="paper")
    fresh = selection_check.fresh_score(run_path, 4, num=20, repeats=2)
    assert fresh["scores"] == pytest.approx(result["generated"]["discriminative"]["scores"], abs=1e-12)
    assert selection_check.cached(run_path, 4, 20, 2) == result["generated"]["discriminative"]
    # another step, other repeats or another number of sequences is another measurement
    assert selection_check.cached(run_path, 6, 20, 2) is None
    assert selection_check.cached(run_path, 4, 20, 3) is None
    assert selection_check.cached(run_path, 4, 19, 2) is None


def test_the_row_holds_both_checkpoints_with_selections_own_scores(run_path):
    with open(os.path.join(run_path, "selection.json")) as f:
        sel = json.load(f)
    row = selection_check.check_run(run_path, num=20, repeats=2)
    assert row["selected"]["step"] == sel["best"] and row["newest"]["step"] == 6
    assert row["data"] == "sines, 8 steps"
    history = dict((s, v) for s, v in sel["history"])
    for key in ("selected", "newest"):
        step = row[key]["step"]
        assert row[key]["selection_score"] == history[step]
        assert row[key]["fresh"] == pytest.approx(selection_check.fresh_score(run_path, step, 20, 2)["mean"],
                                                  abs=1e-4)
    # checked again: an earlier row's measurements of the same checkpoints are kept, not made again
    earlier = dict(row, selected=dict(row["selected"], fresh=0.123456))
    again = selection_check.check_run(run_path, num=20, repeats=2, previous=earlier)
    assert again["selected"]["fresh"] == 0.123456 and again["selected"]["step"] == row["selected"]["step"]
    other = selection_check.check_run(run_path, num=20, repeats=1, previous=earlier)
    assert other["selected"]["fresh"] != 0.123456  # other repeats: another measurement


def test_a_run_without_selection_is_refused_by_name(tmp_path):
    os.makedirs(tmp_path / "plain" / "checkpoints")
    with pytest.raises(SystemExit, match=r"plain: no selection.json \(the run was trained with train.select: none\)"):
        selection_check.check_run(str(tmp_path / "plain"), 20, 2)


def test_the_table_means_cover_the_runs_whose_checkpoints_differ():
    def row(name, sel, new):
        return {"run": name, "selected": {"step": sel[0], "selection_score": sel[1], "fresh": sel[2], "fresh_std": 0.0},
                "newest": {"step": new[0], "selection_score": new[1], "fresh": new[2], "fresh_std": 0.0}}

    text = selection_check.table([row("a", (10, 0.02, 0.10), (20, 0.05, 0.04)),
                                  row("b", (10, 0.04, 0.06), (20, 0.03, 0.08)),
                                  row("c", (20, 0.01, 0.30), (20, 0.01, 0.30))])
    assert "| a | - | 10, 0.020, 0.100 ± 0.000 | 20, 0.050, 0.040 ± 0.000 | newest |" in text
    assert "| b | - | 10, 0.040, 0.060 ± 0.000 | 20, 0.030, 0.080 ± 0.000 | selected |" in text
    assert "| c | - |" in text and "same checkpoint" in text
    assert ("- -: over the 2 of 3 runs whose selected checkpoint is not the newest, fresh discriminative score "
            "0.080 selected, 0.060 newest; the newest is lower in 1 of 2. The selected checkpoints scored "
            "+0.050") in text
    grouped = selection_check.table([dict(row("a", (10, 0.02, 0.10), (20, 0.05, 0.04)), data="factors, 24 steps"),
                                     dict(row("b", (10, 0.04, 0.06), (20, 0.03, 0.08)), data="factors, 64 steps"),
                                     dict(row("c", (20, 0.01, 0.30), (20, 0.01, 0.30)), data="sines, 24 steps")])
    assert "- factors, 24 steps: over the 1 of 1 runs whose selected checkpoint is not the newest, fresh " \
           "discriminative score 0.100 selected, 0.040 newest; the newest is lower in 1 of 1." in grouped
    assert "- factors, 64 steps: over the 1 of 1 runs" in grouped and "0.060 selected, 0.080 newest" in grouped
    assert "- sines, 24 steps: 1 runs, each selected its newest checkpoint." in grouped
