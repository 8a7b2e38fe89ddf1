"""benchmarks/ablation.py: its data sets written as CSV files that train reads, its variants' configs, and its table and
picture."""
import argparse
import json
import os
import signal
import sys
import threading

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import ablation  # noqa: E402


def row(variant, seed, disc):
    g = {"discriminative": disc, "predictive": 0.1, "context_fid": 1.0, "correlational": 0.5}
    f = {"discriminative": 0.05, "predictive": 0.09, "context_fid": 0.2, "correlational": 0.1}
    return {"key": f"k{variant}{seed}", "set": "co2", "length": 24, "seed": seed, "variant": variant,
            "steps": 100 + seed, "generated": g, "floor": f}


def test_table_and_picture(tmp_path):
    doc = {"cpu": "test CPU", "budget": "1m", "protocol": "fast",
           "rows": [row("defaults", 0, 0.2), row("defaults", 1, 0.4), row("moment", 0, 0.1)]}
    cells = ablation.summary(doc["rows"])
    mean, std, n, floor = cells[("co2", 24, "defaults")]["discriminative"]
    assert (mean, std, n, floor) == (pytest.approx(0.3), pytest.approx(0.1), 2, pytest.approx(0.05))
    text = ablation.markdown(doc)
    assert "| co2 | 24 | defaults | 2 | 100 | 0.300 ± 0.100 (0.050) |" in text
    assert text.index("| defaults |") < text.index("| moment |")
    assert "| 0.50 ± 0.00 (0.10) | - |" in text  # no separability in the rows: no step-change column value
    doc["rows"][0]["separability"] = {"generated": {"step changes": 0.3}, "holdout": {"step changes": 0.1}}
    doc["rows"][1]["separability"] = {"generated": {"step changes": 0.1}, "holdout": {"step changes": 0.05}}
    assert "| 0.50 ± 0.00 (0.10) | 0.200 (0.075) |" in ablation.markdown(doc)  # means over the seeds
    ablation.picture(doc, str(tmp_path / "a.png"))
    assert (tmp_path / "a.png").stat().st_size > 1000


@pytest.mark.parametrize("name, package, count, length, width", [
    ("elnino", "statsmodels", 1, 732, 1), ("macro", "statsmodels", 1, 202, 12), ("taylor", "pmdarima", 1, 4032, 1),
    ("motions", "sktime", 80, 100, 6), ("vowels", "sktime", 640, 29, 12), ("weather", "pvlib", 1, 8760, 19)])
def test_real_sets_load_as_training_data(tmp_path, name, package, count, length, width):
    pytest.importorskip(package)
    import argparse

    from gan_sru.data import training_data

    args = argparse.Namespace(run_dir=str(tmp_path / "runs"), data_dir=str(tmp_path), budget="1m")
    cfg = ablation.run_config(name, 24, 0, "moment", args)
    assert cfg.train.terms == [{"name": "moment", "weight": 1.0}] and cfg.train.budget == "1m"
    path, several = ablation.real_csv(name, str(tmp_path))
    data = training_data(cfg)
    assert len(data.dataset.info["lengths_read"]) == count and max(data.dataset.info["lengths_read"]) == length
    assert data.train.num_features == width
    # windows of 24 steps; vowels (at most 29 steps) keeps its own lengths
    lengths = {len(s) for s in data.train.sequences}
    assert lengths == {24} if name != "vowels" else (max(lengths) <= 29 and len(lengths) > 1)
    assert several == (name in ("motions", "vowels"))


def test_comparison_says_when_the_recipe_beats_the_spread():
    rows = [row("defaults", 0, 0.40), row("defaults", 1, 0.44), row("recipe", 0, 0.10), row("recipe", 1, 0.12),
            row("moment", 0, 0.2)]
    text = ablation.comparison({"rows": rows})
    assert "| co2 | 24 | 0.420 ± 0.020 (2) | 0.110 ± 0.010 (2) | 0.050 | yes |" in text
    close = [row("defaults", 0, 0.40), row("defaults", 1, 0.20), row("recipe", 0, 0.30), row("recipe", 1, 0.32)]
    assert "| within |" in ablation.comparison({"rows": close})
    one = [row("defaults", 0, 0.40), row("defaults", 1, 0.44), row("recipe", 0, 0.10)]  # a single seed has no spread
    assert "| one seed |" in ablation.comparison({"rows": one})
    assert ablation.comparison({"rows": [row("moment", 0, 0.2)]}) == ""


@pytest.mark.parametrize("variant", sorted(ablation.VARIANTS))
def test_every_variant_is_a_valid_config(variant, tmp_path):
    """Each variant's --set overrides load on a built-in set and land on the keys they name."""
    from gan_sru.config import value_at

    args = argparse.Namespace(budget="15m", run_dir=str(tmp_path))  # what run_config reads of the CLI
    cfg = ablation.run_config("factors", 24, 0, variant, args)
    assert cfg.data.seq_len == 24 and cfg.train.budget == "15m"
    last = dict(override.split("=", 1) for override in ablation.VARIANTS[variant])  # a later --set wins
    for key, value in last.items():
        if key != "train.terms" and value != "null":
            assert str(value_at(cfg, key)).lower() == value.lower(), (key, value)


def test_floor_file_follows_what_the_floor_depends_on(tmp_path):
    from gan_sru.config import load_config
    from gan_sru.data import training_data
    from gan_sru.files import atomic_write_text

    cfg = load_config(os.path.join(REPO, "configs", "sines.yaml"), ["data.num_sequences=40", "data.seq_len=8"])
    data = training_data(cfg)
    reps = {"discriminative": 10, "predictive": 3}
    path = ablation.floor_file(str(tmp_path), data, 0, "paper", reps)
    assert os.path.dirname(path) == str(tmp_path / "floors")
    assert ablation.floor_file(str(tmp_path), training_data(cfg), 0, "paper", dict(reps)) == path  # data reloaded
    others = {ablation.floor_file(str(tmp_path), data, 1, "paper", reps),
              ablation.floor_file(str(tmp_path), data, 0, "fast", reps),
              ablation.floor_file(str(tmp_path), data, 0, "paper", {"discriminative": 5, "predictive": 3})}
    data.holdout.sequences[0] = data.holdout.sequences[0] + 1e-6  # one held-out value moved
    others.add(ablation.floor_file(str(tmp_path), data, 0, "paper", reps))
    assert path not in others and len(others) == 4
    assert ablation.read_floor(path) is None
    floor = {"discriminative": {"mean": 0.05, "std": 0.01, "scores": [0.04, 0.06]}, "context_fid": 0.2}
    atomic_write_text(path, json.dumps(floor), make_dirs=True)
    assert ablation.read_floor(path) == floor


def test_a_floor_is_scored_by_one_process_and_waited_for_by_the_others(tmp_path, capsys):
    """claim_floor: the first process claims a floor (its pid in the lock) and scores it; a process that finds
    the lock held by a live process waits and reads that floor; a lock whose process is gone, or left empty
    for a minute, is taken over; release_floor drops the claim."""
    import subprocess
    import time

    from gan_sru.files import atomic_write_text

    path = str(tmp_path / "floors" / "f.json")
    lock = path + ".lock"
    assert ablation.claim_floor(path) is None  # nobody scored it: this process does
    assert open(lock).read() == str(os.getpid())
    ablation.release_floor(path)
    assert not os.path.exists(lock)

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with open(lock, "w") as f:
            f.write(str(other.pid))  # another live process scores the floor
        floor = {"discriminative": {"mean": 0.3}}
        writer = threading.Timer(0.5, lambda: atomic_write_text(path, json.dumps(floor)))
        writer.start()
        t0 = time.monotonic()
        assert ablation.claim_floor(path, poll=0.05) == floor
        assert time.monotonic() - t0 >= 0.4  # it waited for the floor rather than claiming it
        writer.join()
        assert f"waiting for the held-out floor that process {other.pid} scores ({path})" in capsys.readouterr().err
        assert open(lock).read() == str(other.pid)  # the holder's claim is left to the holder
    finally:
        other.kill()
        other.wait()
    os.remove(path)
    assert ablation.claim_floor(path, poll=0.05) is None  # its process is gone: the claim is taken over
    assert open(lock).read() == str(os.getpid())

    with open(lock, "w"):
        pass  # a lock whose pid was never written
    assert ablation._lock_holder(lock) == "?"  # being written: waited for
    old = time.time() - 120
    os.utime(lock, (old, old))
    assert ablation.claim_floor(path, poll=0.05) is None  # empty for two minutes: taken over
    assert open(lock).read() == str(os.getpid())
    atomic_write_text(path, json.dumps(floor))
    ablation.release_floor(path)
    assert ablation.claim_floor(path) == floor and not os.path.exists(lock)  # a floor on disk: no claim


@pytest.mark.slow  # two short trainings and three fast evaluations
def test_resume_scores_a_spent_run_without_training_it_again(tmp_path, capsys):
    """--resume: a run folder whose budget was spent is scored from its checkpoint, which stays as it was;
    without --resume the run starts from nothing. Training and scoring show their bars on stderr, and
    --no-progress turns them off."""
    pytest.importorskip("statsmodels")
    args = argparse.Namespace(run_dir=str(tmp_path / "runs"), data_dir=str(tmp_path), budget="2s", protocol="fast",
                              classifiers=1, repeats=1, resume=False, progress=True)
    first = ablation.run_one("k", "elnino", 8, 0, "recipe", args)
    bars = capsys.readouterr().err
    assert "left=" in bars and "discriminative score" in bars  # the budget's CPU time left; a metric's bar
    args.progress = False
    ckpts = sorted((tmp_path / "runs").glob("elnino_L8_s0_recipe_2s/checkpoints/step_*.npz"))
    assert len(ckpts) == 1 and first["steps"] > 0 and "resumed" not in first
    stamp = ckpts[0].stat().st_mtime_ns
    args.resume = True
    again = ablation.run_one("k", "elnino", 8, 0, "recipe", args)
    assert again["resumed"] is True and again["steps"] == first["steps"]
    assert sorted((tmp_path / "runs").glob("elnino_L8_s0_recipe_2s/checkpoints/step_*.npz")) == ckpts
    assert ckpts[0].stat().st_mtime_ns == stamp  # not trained, not rewritten
    assert again["floor"] == first["floor"]  # the held-out floor read back from its floor file
    floors = os.listdir(os.path.join(args.run_dir, "floors"))
    assert len(floors) == 1 and floors[0].endswith(".json")  # scored once, its claim released
    assert capsys.readouterr().err == ""
    args.resume = False
    fresh = ablation.run_one("k", "elnino", 8, 0, "recipe", args)
    assert "resumed" not in fresh
    assert not ckpts[0].exists() or ckpts[0].stat().st_mtime_ns != stamp  # trained again from nothing


@pytest.mark.slow  # a short training stopped by SIGINT, then resumed and scored
def test_a_run_stopped_by_a_signal_is_not_scored_and_resume_finishes_it(tmp_path):
    """Ctrl-C during a run's training: the trainer saves a checkpoint and returns; the benchmark scores no row
    for a run short of its budget but stops the grid, and --resume continues the same run to its budget."""
    pytest.importorskip("statsmodels")
    from gan_sru.train.run_folder import RunFolder

    args = argparse.Namespace(run_dir=str(tmp_path / "runs"), data_dir=str(tmp_path), budget="4s", protocol="fast",
                              classifiers=1, repeats=1, resume=False, progress=False)

    done = threading.Event()

    def interrupt():  # once the trainer's handler is in place (its loop is running), as a Ctrl-C would
        while not done.wait(0.01):
            if getattr(signal.getsignal(signal.SIGINT), "__name__", "") == "_on_signal":
                if not done.wait(1.0):  # some steps first; none once the run is over
                    os.kill(os.getpid(), signal.SIGINT)
                return

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    try:
        with pytest.raises(SystemExit, match=r"elnino_k: stopped by SIGINT at step \d+, before its budget of 4s "
                                             r"was spent; not scored\. The grid continues with --resume"):
            ablation.run_one("elnino_k", "elnino", 8, 0, "recipe", args)
    finally:  # never a signal into a later test
        done.set()
        thread.join()
    folder = RunFolder(str(tmp_path / "runs" / "elnino_L8_s0_recipe_4s"))
    stopped_at = folder.list_checkpoints()[-1][0]  # the checkpoint the signal saved
    assert stopped_at > 0
    args.resume = True
    row = ablation.run_one("elnino_k", "elnino", 8, 0, "recipe", args)
    assert row["resumed"] is True and row["steps"] > stopped_at  # trained on from there, then scored
    assert row["generated"]["discriminative"] is not None
