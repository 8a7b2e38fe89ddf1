"""train.budget: a wall-time limit instead of train.steps, kept across --resume; the sample picture's real windows."""
import io

import pytest

from gan_sru import ConfigError
from gan_sru.config import load_config
from gan_sru.train.duration import clock_text, parse_duration
from gan_sru.train.steps import GanSteps


def tiny(tmp_path, *extra):
    return load_config(None, overrides=[f"run_dir={tmp_path}", "name=r", "data.num_sequences=32", "data.seq_len=8",
                                        "data.num_features=2", "train.batch_size=8", "train.select=none",
                                        "train.steps=1000000", "train.checkpoint_every=1000000",
                                        "train.sample_every=1000000", *extra])


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("15m", 900), ("1h", 3600), ("1h30m", 5400),
                                           ("2.5m", 150)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "15", "0s", "m", "-5m", "1d"])
def test_bad_durations_name_the_key(text):
    with pytest.raises(ConfigError, match="train.budget"):
        parse_duration(text)


def test_clock():
    assert (clock_text(42), clock_text(185), clock_text(3725)) == ("42s", "3m05s", "1h02m")


def test_schedule_follows_the_spent_budget():
    class S:
        tcfg = type("T", (), {"steps": 100})
        schedule_fraction = None

    s = S()
    assert GanSteps.schedule_step(s, 7) == 7  # no budget: the step itself
    s.schedule_fraction = lambda: 0.5
    assert GanSteps.schedule_step(s, 7) == 50.0  # half the budget spent: half of train.steps


def test_budget_stops_the_run_and_resume_continues_the_same_budget(tmp_path):
    from gan_sru.train import Trainer

    t = Trainer(tiny(tmp_path, "train.budget=2s"), progress=False, out=io.StringIO())
    t.train()
    step, ckpt = t.run.latest_checkpoint()
    spent = ckpt.meta["elapsed_s"]
    assert 2.0 <= spent < 30 and 1 <= step < 1000000  # stopped by the budget, a checkpoint at the last step

    out = io.StringIO()  # the same budget: already spent, so the resumed run is complete
    again = Trainer(tiny(tmp_path, "train.budget=2s"), resume=True, progress=False, out=out)
    again.train()
    assert "train.budget = 2s spent" in out.getvalue() and again.run.list_checkpoints()[-1][0] == step

    larger = int(spent) + 3  # above what the first session spent (a loaded machine overshoots 2 s by a step)
    more = Trainer(tiny(tmp_path, f"train.budget={larger}s"), resume=True, progress=False, out=io.StringIO())
    more.train()  # a larger budget: trains on for the difference, counting the time already spent
    last, ckpt = more.run.latest_checkpoint()
    assert last > step and larger <= ckpt.meta["elapsed_s"] < spent + 30


def test_the_sample_picture_draws_real_windows_from_all_over_the_series():
    from gan_sru.train.loop import picture_indices

    idx = picture_indices(1000, seed=3)
    assert len(idx) == 16 and len(set(idx.tolist())) == 16 and idx.max() - idx.min() > 500  # not 16 neighbours
    assert (picture_indices(1000, seed=3) == idx).all()  # the same sequences in every frame of a run
    assert sorted(picture_indices(5, seed=0).tolist()) == [0, 1, 2, 3, 4]  # fewer than 16: each once


def test_budget_counts_the_time_before_a_resume_and_since_on_its_clock():
    from gan_sru.train.duration import Budget

    now = [100.0]
    b = Budget("1m", clock=lambda: now[0])
    b.before = 20.0  # seconds spent before the resume, from the checkpoint
    assert (b.elapsed(), b.spent(), b.exhausted()) == (0.0, 20.0, False)  # not started: the time before the resume only
    b.start()
    now[0] += 30.0
    assert (b.elapsed(), b.spent(), b.left_text(), b.exhausted()) == (30.0, 50.0, "10s", False)
    now[0] += 15.0
    assert b.exhausted() and b.left_text() == "0s"  # 65 s of 60: spent, never a negative time left
    assert not Budget(None).exhausted()  # no budget: train.steps alone ends the run
    with pytest.raises(ConfigError, match="train.budget '15'"):
        b.allow("15")
