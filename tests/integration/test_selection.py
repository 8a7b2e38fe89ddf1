"""Checkpoint selection (train.select, gan_sru/train/selection.py): every checkpoint scored, the best kept and read
by default, a resumed run scored as an uninterrupted one, the score itself telling real from unlike data."""
import json
import os
import sys

import nnabla as nn
import numpy as np
import pytest

from gan_sru import CheckpointError, ConfigError
from gan_sru.commands.main import main as cli
from gan_sru.config import load_config
from gan_sru.data import training_data
from gan_sru.sampling import TrainedRun
from gan_sru.train import Trainer
from gan_sru.train.run_folder import Checkpoint, RunFolder
from gan_sru.train.selection import Selection, score_checkpoint, selection_score

TINY = ["data.num_sequences=96", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
        "model.generator.noise_dim=3", "model.discriminator.hidden_size=8", "train.sample_every=1000",
        "train.log_every=1", "train.select_num=24"]


def tiny_cfg(tmp_path, *extra):
    return load_config("configs/sines.yaml", TINY + [f"run_dir={tmp_path}"] + list(extra))


def run_trainer(cfg, **kw):
    nn.clear_parameters()
    with open(os.devnull, "w") as devnull:
        return Trainer(cfg, progress=False, out=devnull, **kw).train()


def test_selection_keeps_the_lowest_score_and_the_earliest_of_ties():
    s = Selection()
    assert s.best is None
    for step, score in [(2, 0.3), (4, 0.1), (6, 0.2), (8, 0.1)]:
        s.add(step, score)
    assert s.best == 4
    s.add(4, 0.5)  # a step scored again replaces its score
    assert s.best == 8 and len(s.history) == 4
    meta = {"selection": s.to_dict("discriminative")}
    assert Selection.from_meta(meta, up_to=6).history == [(2, 0.3), (6, 0.2), (4, 0.5)]
    assert Selection.from_meta({}, up_to=6).history == []


def test_remeasured_steps_keep_both_measurements_through_the_metadata():
    s = Selection()
    assert s.would_lead(0.4)
    s.add(2, 0.3, measurements=(0.2, 0.4))
    s.add(4, 0.35)
    assert s.would_lead(0.29) and not s.would_lead(0.3)  # ties go to the earlier step
    s.add(6, 0.25, measurements=(0.1, 0.4))
    assert s.best == 6 and s.remeasured == {2: (0.2, 0.4), 6: (0.1, 0.4)}
    meta = {"selection": s.to_dict("discriminative")}
    assert meta["selection"]["remeasured"] == [[2, 0.2, 0.4], [6, 0.1, 0.4]]
    cut = Selection.from_meta(meta, up_to=4)
    assert cut.history == [(2, 0.3), (4, 0.35)] and cut.remeasured == {2: (0.2, 0.4)}
    cut.add(2, 0.5)  # scored again without remeasuring: the old pair goes
    assert cut.remeasured == {}


def test_a_checkpoint_that_would_lead_is_measured_twice_and_keeps_the_mean(tmp_path):
    cfg = tiny_cfg(tmp_path, "train.select_num=96")
    train = training_data(cfg).train
    pool = np.stack(training_data(load_config("configs/sines.yaml", TINY + ["seed=7"])).train.sequences)

    def like(num, lengths, attrs, seed):
        return pool[np.random.default_rng(seed).choice(len(pool), num, replace=False)]

    def flat(num, lengths, attrs, seed):
        return np.full((num, int(max(lengths)), train.num_features), 0.5, np.float32)

    s = Selection()
    score_checkpoint(flat, train, cfg, 2, s)  # the first checkpoint leads
    first, second = (selection_score(flat, train, cfg, 2, draw=d) for d in (0, 1))
    assert s.remeasured == {2: (first, second)} and s.history == [(2, (first + second) / 2)]
    score_checkpoint(like, train, cfg, 4, s)  # a better one leads: measured again, on other sequences
    a, b = s.remeasured[4]
    assert (a, b) == tuple(selection_score(like, train, cfg, 4, draw=d) for d in (0, 1)) and a != b
    assert dict(s.history)[4] == (a + b) / 2 and s.best == 4
    score_checkpoint(flat, train, cfg, 6, s)  # a worse one is measured once
    assert dict(s.history)[6] == selection_score(flat, train, cfg, 6) and 6 not in s.remeasured
    off = Selection()
    score_checkpoint(like, train, tiny_cfg(tmp_path, "train.select_num=96", "train.select_remeasure=false"), 4, off)
    assert off.history == [(4, a)] and off.remeasured == {}


def test_prune_keeps_the_protected_step(tmp_path):
    folder = RunFolder(tmp_path / "run").create()
    for step in (2, 4, 6, 8):
        open(folder.checkpoint_path(step), "wb").close()
    folder.prune(1, protect=(4,))
    assert [s for s, _ in folder.list_checkpoints()] == [4, 8]


def test_score_tells_training_like_sequences_from_unlike_ones(tmp_path):
    cfg = tiny_cfg(tmp_path, "train.select_num=96")
    train = training_data(cfg).train
    pool = np.stack(training_data(load_config("configs/sines.yaml", TINY + ["seed=7"])).train.sequences)

    def like(num, lengths, attrs, seed):  # other sines of the same law
        return pool[np.random.default_rng(seed).choice(len(pool), num, replace=False)]

    def flat(num, lengths, attrs, seed):
        return np.full((num, int(max(lengths)), train.num_features), 0.5, np.float32)

    assert selection_score(like, train, cfg, step=2) < 0.2
    assert selection_score(flat, train, cfg, step=2) > 0.4
    assert selection_score(like, train, cfg, step=2) == selection_score(like, train, cfg, step=2)


def test_every_checkpoint_is_scored_the_best_is_kept_and_read_by_default(tmp_path, capsys):
    cfg = tiny_cfg(tmp_path, "train.steps=8", "train.checkpoint_every=2", "train.keep_checkpoints=1",
                   "train.select=discriminative")
    path = run_trainer(cfg)
    saved = json.load(open(os.path.join(path, "selection.json")))
    assert saved["method"] == "discriminative" and [s for s, _ in saved["history"]] == [2, 4, 6, 8]
    assert saved["seconds"] > 0  # the time spent scoring, for the run's cost
    firsts = {s: a for s, a, _ in saved["remeasured"]}  # a remeasured step's first measurement
    leads, low = [], 1.0  # remeasured: exactly the checkpoints whose first measurement would have led
    for step, score in saved["history"]:
        if firsts.get(step, score) < low:
            leads.append(step)
        low = min(low, score)
    assert [r[0] for r in saved["remeasured"]] == leads and leads[0] == 2
    assert all(dict(saved["history"])[s] == pytest.approx((a + b) / 2) for s, a, b in saved["remeasured"])
    best = saved["best"]
    assert best == min(saved["history"], key=lambda sv: (sv[1], sv[0]))[0]
    assert os.path.getsize(os.path.join(path, "selection.png")) > 0
    kept = [s for s, _ in RunFolder(path).list_checkpoints()]
    assert kept == sorted({best, 8})
    assert TrainedRun(path).step == best and TrainedRun(path, "best").step == best
    assert TrainedRun(path, "latest").step == 8
    newest = Checkpoint.load(RunFolder(path).checkpoint_path(8))
    assert newest.meta["selection"]["best"] == best
    assert cli(["generate", "--run", path, "--num", "3", "--no-progress"]) == 0
    assert f"checkpoint step {best}" in capsys.readouterr().out


def test_a_step_saved_twice_is_scored_once(tmp_path):
    # a benchmark's time mark may fall on a regular checkpoint's step: its score is known, not paid for again
    cfg = tiny_cfg(tmp_path, "train.steps=4", "train.checkpoint_every=2", "train.select=discriminative")
    nn.clear_parameters()
    with open(os.devnull, "w") as devnull:
        trainer = Trainer(cfg, progress=False, out=devnull)
        trainer.train()
    history, seconds = list(trainer.selection.history), trainer.selection.seconds
    trainer.save(4, scored=True)
    assert trainer.selection.history == history and trainer.selection.seconds == seconds
    assert json.load(open(os.path.join(trainer.run.path, "selection.json")))["seconds"] == round(seconds, 1)


def test_a_time_mark_counts_only_the_scoring_inside_the_training_time(tmp_path):
    # benchmarks/quality.py divides the steps by the training time less the scoring in it; the mark's own save
    # (scored) is outside the budget, so the mark records the scoring before it
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
    from scores_over_time import TimeMarks

    cfg = tiny_cfg(tmp_path, "train.steps=50", "train.checkpoint_every=1000", "train.select=discriminative")
    marks = TimeMarks([0.0], progress=False)
    nn.clear_parameters()
    with open(os.devnull, "w") as devnull:
        Trainer(cfg, progress=False, out=devnull, step_fn=marks.on_step, abort_fn=marks.done).train()
    saved = json.load(open(os.path.join(tmp_path, "sines", "selection.json")))
    assert [s for s, _ in saved["history"]] == [1] and saved["seconds"] > 0
    assert marks.marks[0]["step"] == 1 and marks.marks[0]["select_seconds"] == 0.0


def test_scoring_checkpoints_leaves_the_training_as_it_is(tmp_path):
    # selection draws its own numbers and puts G's weights back: a run trains the same with or without it, so a
    # run without selection reaches what a run with it had at each step (benchmarks compare the two that way)
    extra = ("train.steps=6", "train.checkpoint_every=2", "train.keep_checkpoints=3", "train.g_ema=0.9")
    paths = [run_trainer(tiny_cfg(tmp_path, f"name={m}", f"train.select={m}", *extra))
             for m in ("none", "discriminative")]
    assert os.path.exists(os.path.join(paths[1], "selection.json"))
    plain, scored = (Checkpoint.load(RunFolder(p).checkpoint_path(6)) for p in paths)
    assert sorted(plain.params) == sorted(scored.params) and any(k.startswith("EMA/") for k in plain.params)
    for name, value in plain.params.items():
        np.testing.assert_array_equal(value, scored.params[name], err_msg=name)
    losses = [np.loadtxt(os.path.join(p, "monitors", "g_loss.series.txt")) for p in paths]
    np.testing.assert_array_equal(*losses)


def test_runs_without_selection_read_the_newest_and_refuse_best(tmp_path, capsys):
    path = run_trainer(tiny_cfg(tmp_path, "train.steps=4", "train.checkpoint_every=2"))
    assert not os.path.exists(os.path.join(path, "selection.json"))
    assert TrainedRun(path).step == 4
    with pytest.raises(CheckpointError, match=r"no selected checkpoint \(train.select was off\); available: \[2, 4\]"):
        TrainedRun(path, "best")
    with pytest.raises(SystemExit):
        cli(["generate", "--run", path, "--checkpoint", "newest"])
    assert "'newest': expected a step number, 'latest' or 'best'" in capsys.readouterr().err


def test_a_resumed_run_scores_and_selects_as_an_uninterrupted_one(tmp_path):
    extra = ("train.steps=6", "train.checkpoint_every=2", "train.select=discriminative")
    straight = run_trainer(tiny_cfg(tmp_path, "name=straight", *extra))
    done = []
    run_trainer(tiny_cfg(tmp_path, "name=resumed", *extra), abort_fn=lambda: done.append(1) or len(done) >= 3)
    first = json.load(open(os.path.join(tmp_path, "resumed", "selection.json")))
    assert [s for s, _ in first["history"]] == [2]  # the stop's checkpoint at step 3 is not scored
    resumed = run_trainer(tiny_cfg(tmp_path, "name=resumed", *extra), resume=True)
    a, b = (json.load(open(os.path.join(p, "selection.json"))) for p in (straight, resumed))
    assert [s for s, _ in a["history"]] == [2, 4, 6] and a["seconds"] > 0 and b["seconds"] > 0
    assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}


def test_selection_on_a_training_split_of_one_sequence_is_refused_before_the_run_folder_exists(tmp_path):
    cfg = tiny_cfg(tmp_path, "data.num_sequences=2", "data.holdout_fraction=0.5", "train.select=discriminative")
    with pytest.raises(ConfigError, match=r"train.select: 'discriminative' .* at least 2 training sequences; "
                                          r"the training split holds 1 \(set train.select: none"):
        run_trainer(cfg)
    assert not os.path.exists(os.path.join(tmp_path, "sines"))
