"""Fault injection on real `train.py` processes: SIGKILL at random points (also mid checkpoint write),
SIGINT / SIGTERM, two trainers on one run folder, a full disk, an unwritable folder, a checkpoint of
another config, a diverging loss, and bad command lines.

What must hold every time: no finished checkpoint is lost or half-written, the run folder can always be
resumed and then ends with the parameters of an uninterrupted run, bit for bit, and a failure is one
`error: ...` line with exit status 2, never a traceback.
"""
import os
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter

import numpy as np
import pytest
import yaml
from conftest import unwritable

from gan_sru.train.run_folder import TEMPORARY_RE, Checkpoint, RunFolder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(REPO, "train.py")
CONFIG = os.path.join(REPO, "configs", "sines.yaml")
# about 0.1 s a step on 2 shared cores; process start-up (imports, cached numba kernels) about 1.5 s
TINY = {"data.num_sequences": 64, "data.seq_len": 8, "train.batch_size": 8, "model.generator.hidden_size": 8,
        "model.generator.num_layers": 1, "model.discriminator.hidden_size": 8, "train.sample_every": 1000,
        "train.log_every": 1, "train.checkpoint_every": 2}
STEPS = 24  # steps of the runs compared with the uninterrupted reference
KILLS = 24  # SIGKILL trials of the kill-and-resume test
TIMEOUT = 300

slow = pytest.mark.slow


# ---------------------------------------------------------------- helpers

def train_cmd(run_dir, steps, extra=None, resume=False, config=CONFIG):
    sets = dict(TINY, run_dir=str(run_dir), name="run", **{"train.steps": steps})
    sets.update(extra or {})
    cmd = [sys.executable, TRAIN, "--config", str(config), "--no-progress"]
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    return cmd + (["--resume"] if resume else [])


def child_env(extra=None):
    return dict(os.environ, MPLBACKEND="Agg", **(extra or {}))


def slow_writes(cmd, seconds):
    """`cmd` (python SCRIPT ...) with every atomic write's rename delayed by `seconds` (faults/slow_writes.py)."""
    return [cmd[0], os.path.join(REPO, "tests", "faults", "slow_writes.py"), str(seconds)] + cmd[1:]


def start(cmd, env=None, **kw):
    return subprocess.Popen(cmd, cwd=REPO, env=child_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def run_to_end(cmd, env=None, **kw):
    p = start(cmd, env, **kw)
    out, err = p.communicate(timeout=TIMEOUT)
    return p.returncode, out, err


def assert_ok(result):
    rc, out, err = result
    assert rc == 0, f"exit status {rc}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in err


def assert_clean_error(result, pattern):
    """Exit status 2 and one `error: ...` line matching `pattern`; no traceback, no ignored exception."""
    rc, out, err = result
    assert rc == 2, f"exit status {rc}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in err and "Exception ignored" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, err
    assert re.search(pattern, errors[0]), errors[0]
    return errors[0]


def temporaries(run):
    found = []
    for folder in (run.path, run.checkpoints):
        if os.path.isdir(folder):
            found += [n for n in os.listdir(folder) if TEMPORARY_RE.search(n)]
    return found


def newest_step(run):
    found = run.list_checkpoints()
    return found[-1][0] if found else 0


def assert_all_checkpoints_load(run):
    """Every file named step_*.npz is a complete checkpoint of its step with finite numbers."""
    for step, path in run.list_checkpoints():
        ckpt = Checkpoint.load(path)
        assert ckpt.meta["step"] == step
        for name, v in ckpt.params.items():
            assert np.isfinite(v).all(), f"{path}: parameter {name} is not finite"


def same_state(a, b):
    """Parameters and solver states equal bit for bit."""
    if sorted(a.params) != sorted(b.params) or sorted(a.solvers) != sorted(b.solvers):
        return False
    for k, v in a.params.items():
        if v.dtype != b.params[k].dtype or v.tobytes() != b.params[k].tobytes():
            return False
    for s, states in a.solvers.items():
        for p, st in states.items():
            for k, v in st.items():
                if np.asarray(v).tobytes() != np.asarray(b.solvers[s][p][k]).tobytes():
                    return False
    return True


def wait_for(condition, proc, timeout=TIMEOUT, poll=0.01):
    """Poll until condition() or the process ended; True when the condition came first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        if proc.poll() is not None:
            return condition()
        time.sleep(poll)
    raise AssertionError("timed out")


def resumed_from(out, run):
    m = re.search(rf"^resumed {re.escape(run.path)} from step (\d+)$", out, re.M)
    return int(m.group(1)) if m else None


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The final checkpoint of an uninterrupted run of STEPS steps."""
    root = tmp_path_factory.mktemp("reference")
    assert_ok(run_to_end(train_cmd(root, STEPS)))
    return Checkpoint.load(RunFolder(root / "run").checkpoint_path(STEPS))


# ---------------------------------------------------------------- 1. SIGKILL and resume

def kill_when(proc, run, mode, rng):
    """SIGKILL `proc` at a point chosen by `mode`; True when it was still running and got killed.

    startup: after a random delay (often before training starts); step: a few checkpoints on, plus a
    random part of a step; write: while a checkpoint temporary exists (the process sleeps between
    writing it and renaming it).
    """
    if mode == "startup":
        time.sleep(rng.uniform(0.0, 2.0))
    elif mode == "step":
        target = newest_step(run) + rng.randint(1, 3)
        wait_for(lambda: newest_step(run) >= target, proc)
        time.sleep(rng.uniform(0.0, 0.1))
    else:
        time.sleep(rng.uniform(0.0, 0.3))
        wait_for(lambda: bool(temporaries(run)), proc)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


@slow
def test_sigkill_at_random_points_then_resume_equals_an_uninterrupted_run(tmp_path, reference, capsys):
    rng = random.Random(7)
    stats = Counter()
    results = []
    while stats["kills"] < KILLS:
        assert stats["runs"] < 12, f"too few kills landed: {stats}"
        stats["runs"] += 1
        root = tmp_path / f"run{stats['runs']}"
        run = RunFolder(root / "run")
        kills_left, resume = 6, False
        while True:
            before = newest_step(run)
            mode = rng.choice(["startup", "step", "step", "write", "write"]) if kills_left else "finish"
            cmd = train_cmd(root, STEPS, {"train.checkpoint_every": 1}, resume=resume)
            proc = start(slow_writes(cmd, 0.3) if mode == "write" else cmd)
            killed = mode != "finish" and kill_when(proc, run, mode, rng)
            out, err = proc.communicate(timeout=TIMEOUT)
            step = resumed_from(out, run)
            if step is not None:  # it resumed from the newest complete checkpoint
                assert step == before, out
                stats["resumes"] += 1
            if not killed:
                assert proc.returncode == 0, f"{mode}: exit status {proc.returncode}\n{out}\n{err}"
                assert "Traceback" not in err
                assert before == 0 or step == before, out
                break
            stats["kills"] += 1
            stats[mode] += 1
            kills_left -= 1
            resume = True
            if temporaries(run):
                stats["during_writes"] += 1
            elif mode == "write":
                stats["write_missed"] += 1
            assert_all_checkpoints_load(run)  # nothing half-written under a checkpoint's name
        assert temporaries(run) == [], "the lock holder removes what a killed process left"
        results.append(same_state(Checkpoint.load(run.checkpoint_path(STEPS)), reference))
    with capsys.disabled():
        print(f"\nkill-and-resume: {stats['kills']} SIGKILL trials in {stats['runs']} runs of {STEPS} steps "
              f"(startup {stats['startup']}, mid-step {stats['step']}, aimed at writes {stats['write']}); "
              f"{stats['during_writes']} kills landed during a checkpoint write; {stats['resumes']} resumes, "
              f"each from the newest complete checkpoint; final parameters and solver states equal to the "
              f"uninterrupted run: {sum(results)}/{len(results)}")
    assert stats["during_writes"] >= 5, stats
    assert all(results), results


# ---------------------------------------------------------------- 2. SIGINT and SIGTERM

@slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_sigint_and_sigterm_stop_with_a_checkpoint_and_the_resume_command(tmp_path, reference, sig):
    run = RunFolder(tmp_path / "run")
    series = os.path.join(run.monitors, "d_loss.series.txt")

    def lines():
        return open(series).read().count("\n") if os.path.exists(series) else 0

    proc = start(train_cmd(tmp_path, STEPS, {"train.checkpoint_every": 1000}))
    assert wait_for(lambda: lines() >= 3, proc), "the run ended before it could be stopped"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=TIMEOUT)
    # a stopped run is not a finished one: 128 + the signal (130 / 143), so `train && evaluate` stops too
    assert proc.returncode == 128 + sig, f"exit status {proc.returncode}\n{out}\n{err}"
    assert "Traceback" not in err
    m = re.search(r"^stopped by (\w+) at step (\d+); checkpoint saved in (.+)\. Resume with: (.+)$", out, re.M)
    assert m, out
    step = int(m.group(2))
    assert m.group(1) == sig.name and m.group(3) == run.checkpoints
    assert 3 <= step < STEPS
    assert [s for s, _ in run.list_checkpoints()] == [step]  # the stop wrote it (checkpoint_every is 1000)
    assert Checkpoint.load(run.checkpoint_path(step)).meta["step"] == step

    resume = shlex.split(m.group(4))
    assert resume[:2] == ["python", "train.py"] and resume[-1] == "--resume"
    rc, out, err = result = run_to_end([sys.executable] + resume[1:] + ["--no-progress"])
    assert_ok(result)
    assert resumed_from(out, run) == step
    assert same_state(Checkpoint.load(run.checkpoint_path(STEPS)), reference)


@slow
def test_a_second_ctrl_c_while_saving_is_absorbed(tmp_path):
    run = RunFolder(tmp_path / "run")
    series = os.path.join(run.monitors, "d_loss.series.txt")
    proc = start(train_cmd(tmp_path, STEPS, {"train.checkpoint_every": 1000}))
    assert wait_for(lambda: os.path.exists(series) and open(series).read().count("\n") >= 3, proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # arrives during the stop's checkpoint write or its report
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err, (out, err)
    m = re.search(r"^stopped by SIGINT at step (\d+); checkpoint saved in .+ Resume with: .+$", out, re.M)
    assert m, out
    assert Checkpoint.load(run.checkpoint_path(int(m.group(1)))).meta["step"] == int(m.group(1))


# ---------------------------------------------------------------- 3. two trainers, one run folder

@slow
def test_second_trainer_is_refused_and_a_killed_holder_frees_the_lock(tmp_path):
    run = RunFolder(tmp_path / "run")
    # the holder sleeps 4 s inside every checkpoint write, with its temporary on disk
    holder = start(slow_writes(train_cmd(tmp_path, 100000), 4))
    try:
        assert wait_for(lambda: temporaries(run), holder)
        writing = temporaries(run)
        refused = run_to_end(train_cmd(tmp_path, 100000, resume=True))
        assert_clean_error(refused, rf"run folder {re.escape(run.path)} is in use by another training process "
                                    rf"\(pid {holder.pid}\)")
        # the refused process left the holder's temporary alone: the holder's write completes
        assert holder.poll() is None
        assert wait_for(lambda: newest_step(run) >= 2, holder), holder.communicate()
        assert holder.poll() is None and writing
        assert_clean_error(run_to_end(train_cmd(tmp_path, 100000)), rf"run folder {re.escape(run.path)} already holds "
                                                              r"checkpoints.*--resume")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate()
    after = newest_step(run)
    rc, out, err = result = run_to_end(train_cmd(tmp_path, after + 2, resume=True))
    assert_ok(result)
    assert resumed_from(out, run) == after
    assert newest_step(run) == after + 2 and temporaries(run) == []


# ---------------------------------------------------------------- 4. full disk, unwritable folder

def _limit_file_size():
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (12000, hard))  # a checkpoint here is about 22 KB


@slow
def test_checkpoint_beyond_the_file_size_limit_is_a_clean_error(tmp_path):
    run = RunFolder(tmp_path / "run")
    assert_ok(run_to_end(train_cmd(tmp_path, 4)))
    before = open(run.checkpoint_path(4), "rb").read()
    # Python ignores SIGXFSZ, so a write beyond RLIMIT_FSIZE fails with EFBIG
    failed = run_to_end(train_cmd(tmp_path, 8, resume=True), preexec_fn=_limit_file_size)
    assert_clean_error(failed, rf"could not write checkpoint {re.escape(run.checkpoint_path(6))}: File too large; "
                               r"the previous checkpoints in that folder are untouched")
    assert [s for s, _ in run.list_checkpoints()] == [2, 4] and temporaries(run) == []
    assert open(run.checkpoint_path(4), "rb").read() == before
    assert_all_checkpoints_load(run)
    rc, out, err = result = run_to_end(train_cmd(tmp_path, 8, resume=True))
    assert_ok(result)
    assert resumed_from(out, run) == 4


@slow
def test_full_disk_while_saving_is_a_clean_error_and_the_run_resumes(tmp_path, tmpfs):
    disk = tmpfs("160k")  # room for the config, sampling.json (48 KB), pictures and two 31 KB checkpoints, not all
    run = RunFolder(disk / "run")
    failed = run_to_end(train_cmd(disk, 12, {"train.keep_checkpoints": 10, "train.log_every": 1000}))
    line = assert_clean_error(failed, rf"could not write checkpoint {re.escape(run.checkpoints)}/step_\d+\.npz: "
                                      r"No space left on device")
    kept = run.list_checkpoints()
    assert kept and kept[-1][1] not in line
    assert_all_checkpoints_load(run)
    subprocess.run(["mount", "-o", "remount,size=1m", str(disk)], check=True)  # the user frees space
    rc, out, err = result = run_to_end(train_cmd(disk, 12, {"train.log_every": 1000}, resume=True))
    assert_ok(result)
    assert resumed_from(out, run) == kept[-1][0]
    assert temporaries(run) == []


@slow
def test_disk_full_at_any_point_is_a_clean_error(tmp_path, tmpfs):
    """The disk is full from the start (the lock), fills up at the monitors or at a checkpoint, depending on
    how much is already on it; every time: one clean error, only complete checkpoints, no temporaries."""
    where = Counter()
    for ballast_kb in (40, 52, 60, 64):
        disk = tmpfs("64k")
        with open(disk / "ballast", "wb") as f:
            f.write(b"\0" * ballast_kb * 1024)
        run = RunFolder(disk / "run")
        line = assert_clean_error(run_to_end(train_cmd(disk, 6)), r"No space left on device")
        where[re.search(r"(run\.lock|checkpoint|run folder)", line).group(1)] += 1
        assert_all_checkpoints_load(run)
        assert temporaries(run) == []
    assert len(where) >= 2, where


@slow
def test_unwritable_checkpoint_folder_is_a_clean_error_and_the_run_resumes(tmp_path):
    run = RunFolder(tmp_path / "run")
    assert_ok(run_to_end(train_cmd(tmp_path, 4)))
    with unwritable(run.checkpoints):
        failed = run_to_end(train_cmd(tmp_path, 8, resume=True))
    assert_clean_error(failed, rf"could not write checkpoint {re.escape(run.checkpoint_path(6))}: "
                               r"(Permission denied|Operation not permitted)")
    assert [s for s, _ in run.list_checkpoints()] == [2, 4]
    assert_all_checkpoints_load(run)
    with unwritable(run.path):
        assert_clean_error(run_to_end(train_cmd(tmp_path, 8, resume=True)), rf"run folder {re.escape(run.path)}")
    rc, out, err = result = run_to_end(train_cmd(tmp_path, 8, resume=True))
    assert_ok(result)
    assert resumed_from(out, run) == 4


# ---------------------------------------------------------------- 5. a checkpoint of another config

@slow
def test_checkpoint_of_other_sizes_is_refused_naming_the_parameter(tmp_path):
    run = RunFolder(tmp_path / "run")
    assert_ok(run_to_end(train_cmd(tmp_path, 2)))
    # the run's own config edited by hand: the printed resume command now builds a wider generator
    with open(run.config_path) as f:
        cfg = yaml.safe_load(f)
    cfg["model"]["generator"]["hidden_size"] = 16
    with open(run.config_path, "w") as f:
        yaml.safe_dump(cfg, f)
    refused = run_to_end([sys.executable, TRAIN, "--config", run.config_path, "--resume", "--no-progress"])
    assert_clean_error(refused, rf"checkpoint {re.escape(run.checkpoint_path(2))} does not fit this config: "
                                r"parameter G/\S+ has shape \(\d+(, \d+)*\) in the checkpoint but \(\d+(, \d+)*\) "
                                r"in the model")
    assert_all_checkpoints_load(run)

    # checkpoints copied into another run's folder: refused, and that folder still takes the right config
    other = RunFolder(tmp_path / "copy" / "run")
    os.makedirs(other.checkpoints)
    shutil.copy(run.checkpoint_path(2), other.checkpoint_path(2))
    wide = {"model.generator.hidden_size": 16, "model.discriminator.hidden_size": 16}
    assert_clean_error(run_to_end(train_cmd(tmp_path / "copy", 4, wide, resume=True)),
                       r"does not fit this config: parameter \S+ has shape")
    rc, out, err = result = run_to_end(train_cmd(tmp_path / "copy", 4, resume=True))
    assert_ok(result)
    assert resumed_from(out, other) == 2


# ---------------------------------------------------------------- 6. divergence

@slow
def test_diverging_loss_stops_with_the_last_good_checkpoint_kept(tmp_path, reference):
    run = RunFolder(tmp_path / "run")
    assert_ok(run_to_end(train_cmd(tmp_path, 4)))
    diverged = run_to_end(train_cmd(tmp_path, STEPS, {"train.lr": 1e30}, resume=True))
    assert_clean_error(diverged, rf"training diverged at step 4: .*nan.*the last good checkpoint is "
                                 rf"{re.escape(run.checkpoint_path(4))} \(step 4\)\. Try a lower learning rate")
    assert [s for s, _ in run.list_checkpoints()] == [2, 4]
    assert_all_checkpoints_load(run)
    # the failed attempt changed nothing: resumed with the old rate, the run ends as if never stopped
    rc, out, err = result = run_to_end(train_cmd(tmp_path, STEPS, resume=True))
    assert_ok(result)
    assert resumed_from(out, run) == 4
    assert same_state(Checkpoint.load(run.checkpoint_path(STEPS)), reference)


@slow
def test_parameters_that_overflow_are_never_checkpointed(tmp_path):
    """A learning rate beyond float32 turns G's parameters into inf in the update after a finite loss."""
    run = RunFolder(tmp_path / "run")
    diverged = run_to_end(train_cmd(tmp_path, 6, {"train.lr": 1e39, "train.checkpoint_every": 1}))
    assert_clean_error(diverged, r"training diverged at step \d+: .*(nan|inf|not finite).*"
                                 r"(no checkpoint was written yet|the last good checkpoint is)")
    assert_all_checkpoints_load(run)


# ---------------------------------------------------------------- bad command lines

def test_missing_config_file_is_a_one_line_error(tmp_path):
    assert_clean_error(run_to_end([sys.executable, TRAIN, "--config", "configs/does_not_exist.yaml"]),
                       r"configs/does_not_exist\.yaml: config file not found")


def test_config_key_typo_is_a_one_line_error(tmp_path):
    bad = tmp_path / "typo.yaml"
    text = open(CONFIG).read()
    assert "  generator:\n" in text
    bad.write_text(text.replace("  generator:\n", "  generator:\n    hiden_size: 48\n", 1))
    assert_clean_error(run_to_end([sys.executable, TRAIN, "--config", str(bad)]),
                       rf"{re.escape(str(bad))}.*hiden_size")
    assert_clean_error(run_to_end([sys.executable, TRAIN, "--config", CONFIG, "--set", "train.stepz=3"]),
                       r"train\.stepz")


def test_missing_data_file_is_a_one_line_error(tmp_path):
    missing = tmp_path / "nowhere.npy"
    line = assert_clean_error(run_to_end(train_cmd(tmp_path, 2, {"data.source": "file", "data.path": str(missing)})),
                              re.escape(str(missing)))
    assert not os.path.exists(tmp_path / "run" / "checkpoints") or not os.listdir(tmp_path / "run" / "checkpoints")
    assert "not found" in line or "No such file" in line or "does not exist" in line
