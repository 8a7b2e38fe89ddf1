"""RunFolder and Checkpoint: round trip, refusals that name the parameter, corrupt files, temporaries,
pruning, the lock, and writes that fail (file size limit, full tmpfs, unwritable folder)."""
import gc
import json
import os
import resource
import signal
import subprocess
import sys
import textwrap

import nnabla as nn
import nnabla.solvers as S
import numpy as np
import pytest
from conftest import unwritable

from gan_sru import CheckpointError, RunFolderError
from gan_sru.files import atomic_write
from gan_sru.train.run_folder import Checkpoint, RunFolder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_model(shapes, seed=0, updates=3):
    """Parameters {name: Variable} of the given shapes and an Adam solver updated `updates` times."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in shapes.items():
        v = nn.Variable(shape, need_grad=True)
        v.d = rng.standard_normal(shape)
        params[name] = v
    solver = S.Adam(0.01)
    solver.set_parameters(params)
    for _ in range(updates):
        for v in params.values():
            v.g = rng.standard_normal(v.shape)
        solver.update()
    return params, solver


SHAPES = {"G/affine/W": (3, 4), "G/affine/b": (4,), "D/sru/bias": (2, 2, 4)}
META = {"step": 7, "scaler": {"min": [0.0], "max": [1.0]}, "config": {"name": "x", "seed": 0}, "format": 1}


def saved_checkpoint(path, shapes=SHAPES, seed=0, step=7):
    params, solver = make_model(shapes, seed)
    ckpt = Checkpoint.capture(params, {"G": solver}, dict(META, step=step))
    ckpt.save(path)
    return ckpt


def assert_same_checkpoint(a, b):
    assert a.meta == b.meta
    assert sorted(a.params) == sorted(b.params)
    for k in a.params:
        assert a.params[k].tobytes() == b.params[k].tobytes(), k
    assert sorted(a.solvers) == sorted(b.solvers)
    for s in a.solvers:
        assert sorted(a.solvers[s]) == sorted(b.solvers[s])
        for p in a.solvers[s]:
            assert sorted(a.solvers[s][p]) == sorted(b.solvers[s][p])
            for k, v in a.solvers[s][p].items():
                assert np.asarray(v).tobytes() == np.asarray(b.solvers[s][p][k]).tobytes(), (s, p, k)


# ---------------------------------------------------------------- round trip and restore

def test_save_load_restore_round_trip(tmp_path):
    params, solver = make_model(SHAPES, seed=0)
    ckpt = Checkpoint.capture(params, {"G": solver}, META)
    path = str(tmp_path / "step_00000007.npz")
    ckpt.save(path)
    loaded = Checkpoint.load(path)
    assert_same_checkpoint(ckpt, loaded)
    assert loaded.solvers["G"]["G/affine/W"]["t"] == 3
    assert set(loaded.solvers["G"]["G/affine/W"]) == {"t", "mean", "var"}

    # restore into a model with other values: parameters and solver states become the saved ones
    nn.clear_parameters()
    params2, solver2 = make_model(SHAPES, seed=1, updates=1)
    loaded.restore(params2, {"G": solver2})
    for k, v in params2.items():
        assert v.d.tobytes() == params[k].d.tobytes()
    states, states2 = solver.get_states(), solver2.get_states()
    for k in states:
        assert states2[k].t == states[k].t == 3
        for n in states[k].pstate:
            assert states2[k].pstate[n].d.tobytes() == states[k].pstate[n].d.tobytes()
    # ... so the next update is the same in both
    for v, v2 in zip(params.values(), params2.values()):
        v.g = v2.g = np.full(v.shape, 0.5)
    solver.update()
    solver2.update()
    for k in params:
        assert params2[k].d.tobytes() == params[k].d.tobytes()


def test_restore_refuses_missing_and_extra_parameters_naming_them(tmp_path):
    path = str(tmp_path / "c.npz")
    saved_checkpoint(path)
    nn.clear_parameters()
    other = {"G/affine/W": (3, 4), "G/affine/b": (4,), "D/conv/W": (4, 4)}
    params, solver = make_model(other)
    with pytest.raises(CheckpointError, match=r"D/conv/W.*D/sru/bias") as e:
        Checkpoint.load(path).restore(params, {"G": solver}, source=f"checkpoint {path}")
    assert path in str(e.value)


def test_restore_refuses_shape_mismatch_naming_parameter_and_shapes(tmp_path):
    path = str(tmp_path / "c.npz")
    saved_checkpoint(path)
    nn.clear_parameters()
    params, solver = make_model(dict(SHAPES, **{"G/affine/W": (3, 8)}))
    before = {k: v.d.copy() for k, v in params.items()}
    with pytest.raises(CheckpointError, match=r"G/affine/W has shape \(3, 4\) in the checkpoint but \(3, 8\)"):
        Checkpoint.load(path).restore(params, {"G": solver})
    for k, v in params.items():  # nothing was half-restored
        assert v.d.tobytes() == before[k].tobytes()


def test_restore_refuses_missing_solver_state(tmp_path):
    path = str(tmp_path / "c.npz")
    ckpt = saved_checkpoint(path)
    del ckpt.solvers["G"]["G/affine/b"]["var"]
    ckpt.save(path)
    nn.clear_parameters()
    params, solver = make_model(SHAPES)
    with pytest.raises(CheckpointError, match=r"G solver state.*G/affine/b"):
        Checkpoint.load(path).restore(params, {"G": solver})
    with pytest.raises(CheckpointError, match=r"no D solver state"):
        Checkpoint.load(path).restore(params, {"D": solver})


def test_first_non_finite_names_the_parameter_or_solver_state(tmp_path):
    params, solver = make_model(SHAPES)
    ckpt = Checkpoint.capture(params, {"G": solver}, META)
    assert ckpt.first_non_finite() is None
    ckpt.solvers["G"]["G/affine/b"]["var"][1] = np.inf
    assert ckpt.first_non_finite() == "G solver state var of G/affine/b"
    ckpt.params["D/sru/bias"][0, 1, 2] = np.nan
    assert ckpt.first_non_finite() == "parameter D/sru/bias"


# ---------------------------------------------------------------- corrupt files

def _garbage(path, good):
    with open(path, "wb") as f:
        f.write(b"this is not a checkpoint\x00\xff" * 10)


def _empty(path, good):
    open(path, "wb").close()


def _truncated(path, good):
    with open(good, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])


def _flipped(path, good):  # a flipped byte inside the stored arrays: the zip CRC catches it
    data = bytearray(open(good, "rb").read())
    data[len(data) // 3] ^= 0xFF
    open(path, "wb").write(bytes(data))


def _single_array(path, good):  # an .npy renamed to .npz
    with open(path, "wb") as f:
        np.save(f, np.zeros(3))


def _no_meta(path, good):
    with open(path, "wb") as f:
        np.savez(f, **{"param/x": np.zeros(3)})


def _bad_meta(path, good):
    with open(path, "wb") as f:
        np.savez(f, meta=np.frombuffer(b"{not json\xff", np.uint8), **{"param/x": np.zeros(3)})


def _meta_not_object(path, good):
    with open(path, "wb") as f:
        np.savez(f, meta=np.frombuffer(json.dumps([1, 2]).encode(), np.uint8))


def _bad_key(path, good):
    with open(path, "wb") as f:
        np.savez(f, meta=np.frombuffer(b"{}", np.uint8), **{"weird_key": np.zeros(3), "solver/G": np.zeros(1)})


def _folder(path, good):
    os.makedirs(path)


CORRUPTIONS = [_garbage, _empty, _truncated, _flipped, _single_array, _no_meta, _bad_meta, _meta_not_object,
               _bad_key, _folder]


@pytest.mark.parametrize("corrupt", CORRUPTIONS, ids=lambda f: f.__name__.strip("_"))
def test_load_of_a_corrupt_file_raises_checkpoint_error_naming_it(tmp_path, corrupt):
    good = str(tmp_path / "good.npz")
    saved_checkpoint(good)
    path = str(tmp_path / "step_00000009.npz")
    corrupt(path, good)
    with pytest.raises(CheckpointError) as e:
        Checkpoint.load(path)
    assert path in str(e.value)


@pytest.mark.parametrize("corrupt", [_garbage, _empty, _truncated, _bad_meta], ids=lambda f: f.__name__.strip("_"))
def test_latest_checkpoint_skips_a_corrupt_newest_file_with_a_warning(tmp_path, corrupt):
    run = RunFolder(tmp_path / "run").create()
    saved_checkpoint(run.checkpoint_path(2), step=2)
    saved_checkpoint(run.checkpoint_path(4), seed=4, step=4)
    corrupt(run.checkpoint_path(6), run.checkpoint_path(4))
    with pytest.warns(UserWarning, match=r"skipping unreadable checkpoint: .*step_00000006\.npz"):
        step, ckpt = run.latest_checkpoint()
    assert step == 4 and ckpt.meta["step"] == 4
    assert_same_checkpoint(ckpt, Checkpoint.load(run.checkpoint_path(4)))


def test_latest_checkpoint_of_an_empty_or_missing_folder_is_none(tmp_path):
    assert RunFolder(tmp_path / "nothing").latest_checkpoint() is None
    run = RunFolder(tmp_path / "run").create()
    assert run.latest_checkpoint() is None
    _garbage(run.checkpoint_path(2), None)
    with pytest.warns(UserWarning):
        assert run.latest_checkpoint() is None


def test_list_checkpoints_sees_complete_files_only(tmp_path):
    run = RunFolder(tmp_path / "run").create()
    for name in ("step_00000002.npz", "step_00000010.npz", ".step_00000012.npz.tmp-999", "step_12.npz",
                 "step_00000004.npz.bak", "notes.txt"):
        open(os.path.join(run.checkpoints, name), "wb").close()
    assert [s for s, _ in run.list_checkpoints()] == [2, 10]


def test_a_resumed_monitor_keeps_the_lines_up_to_the_resumed_step(tmp_path):
    from nnabla.monitor import Monitor, MonitorSeries

    run = RunFolder(tmp_path / "run").create()
    path = os.path.join(run.monitors, "d_loss.series.txt")
    with open(path, "w") as f:
        f.write("".join(f"{s} {s / 100:.6f}\n" for s in (10, 20, 30, 40, 50)))
    m = run.monitor(MonitorSeries, "d_loss", Monitor(run.monitors), 10, "series", start_step=30)
    assert m.flush_at == 30
    assert [int(line.split()[0]) for line in open(path)] == [10, 20, 30]  # 40, 50 are redone
    fresh = run.monitor(MonitorSeries, "d_loss", Monitor(run.monitors), 10, "series", start_step=0)
    assert fresh.flush_at == 0 and open(path).read() == ""


# ---------------------------------------------------------------- temporaries, prune

def test_stray_temporaries_are_removed_by_the_lock_holder_only(tmp_path):
    run = RunFolder(tmp_path / "run").create()
    strays = [os.path.join(run.checkpoints, ".step_00000004.npz.tmp-4242"),
              os.path.join(run.path, "config.yaml.4242.tmp")]
    kept = [os.path.join(run.checkpoints, "step_00000002.npz"), os.path.join(run.path, "notes.tmp.txt")]
    for p in strays + kept:
        open(p, "wb").close()
    RunFolder(run.path).create()  # no lock, no removal: the temporaries may belong to a live writer
    assert all(os.path.exists(p) for p in strays)
    run.lock()
    try:
        assert not any(os.path.exists(p) for p in strays)
        assert all(os.path.exists(p) for p in kept)
    finally:
        run.unlock()


def test_a_refused_second_process_does_not_touch_the_holders_temporaries(tmp_path):
    holder = RunFolder(tmp_path / "run").create().lock()
    try:
        tmp = os.path.join(holder.checkpoints, f".step_00000002.npz.tmp-{os.getpid()}")
        open(tmp, "wb").close()
        with pytest.raises(RunFolderError, match="in use by another training process"):
            RunFolder(holder.path).create().lock()
        assert os.path.exists(tmp)
    finally:
        holder.unlock()


def test_prune_keeps_the_newest_k(tmp_path):
    run = RunFolder(tmp_path / "run").create()
    for step in (2, 4, 6, 8, 10, 12):
        open(run.checkpoint_path(step), "wb").close()
    run.prune(3)
    assert [s for s, _ in run.list_checkpoints()] == [8, 10, 12]
    run.prune(1)
    assert [s for s, _ in run.list_checkpoints()] == [12]
    run.prune(5)
    assert [s for s, _ in run.list_checkpoints()] == [12]


# ---------------------------------------------------------------- the lock

def test_second_lock_is_refused_naming_the_folder_and_holder(tmp_path):
    run = RunFolder(tmp_path / "run").create().lock()
    try:
        with pytest.raises(RunFolderError) as e:
            RunFolder(tmp_path / "run").create().lock()
        msg = str(e.value)
        assert run.path in msg and f"pid {os.getpid()}" in msg and "--set name=" in msg
    finally:
        run.unlock()
    RunFolder(tmp_path / "run").create().lock().unlock()  # free again


def test_lock_of_a_sigkilled_holder_is_released(tmp_path):
    path = str(tmp_path / "run")
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {REPO!r})
        from gan_sru.train.run_folder import RunFolder
        RunFolder({path!r}).create().lock()
        print("locked", flush=True)
        time.sleep(60)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "locked"
        with pytest.raises(RunFolderError, match=f"pid {p.pid}"):
            RunFolder(path).create().lock()
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stdout.close()
    run = RunFolder(path).create().lock()
    with open(os.path.join(path, "run.lock")) as f:
        assert f.read() == str(os.getpid())
    run.unlock()


# ---------------------------------------------------------------- failing writes

def test_atomic_write_that_fails_midway_leaves_the_old_file(tmp_path):
    path = str(tmp_path / "f.bin")
    atomic_write(path, lambda f: f.write(b"old"))

    def half_then_fail(f):
        f.write(b"new but half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        atomic_write(path, half_then_fail)
    assert open(path, "rb").read() == b"old"
    assert os.listdir(tmp_path) == ["f.bin"]


def assert_failed_save_keeps_previous(folder, expected_reason):
    """Checkpoint.save into `folder` fails with a CheckpointError; step 2 stays intact; no temporary."""
    previous = os.path.join(folder, "step_00000002.npz")
    before = open(previous, "rb").read()
    nn.clear_parameters()
    big = {"G/w": (64, 64), "D/w": (64, 64)}  # ~100 KB with Adam states
    params, solver = make_model(big, updates=1)
    path = os.path.join(folder, "step_00000004.npz")
    unraisable, hook = [], sys.unraisablehook
    sys.unraisablehook = unraisable.append
    try:
        with pytest.raises(CheckpointError, match=expected_reason) as e:
            Checkpoint.capture(params, {"G": solver}, dict(META, step=4)).save(path)
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert not unraisable, "a half-written zip was left to the garbage collector (which prints its error)"
    assert path in str(e.value) and "previous checkpoints" in str(e.value)
    assert not os.path.exists(path)
    assert open(previous, "rb").read() == before
    Checkpoint.load(previous)
    assert sorted(os.listdir(folder)) == ["step_00000002.npz"]


def test_save_beyond_the_file_size_limit_is_a_checkpoint_error(tmp_path):
    saved_checkpoint(str(tmp_path / "step_00000002.npz"), step=2)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    # Python ignores SIGXFSZ, so a write beyond the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (16384, hard))
    try:
        assert_failed_save_keeps_previous(str(tmp_path), "File too large")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def test_save_into_a_full_disk_is_a_checkpoint_error(tmpfs):
    disk = str(tmpfs("64k"))
    saved_checkpoint(os.path.join(disk, "step_00000002.npz"), step=2)
    assert_failed_save_keeps_previous(disk, "No space left on device")


def test_save_into_an_unwritable_folder_is_a_checkpoint_error(tmp_path):
    folder = str(tmp_path / "ro")
    os.makedirs(folder)
    saved_checkpoint(os.path.join(folder, "step_00000002.npz"), step=2)
    with unwritable(folder):
        assert_failed_save_keeps_previous(folder, "Permission denied|Operation not permitted")


def test_create_where_a_folder_cannot_be_made_is_a_run_folder_error(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for where in (str(afile / "run"), "/proc/gan_sru_cannot_be_here/run"):
        with pytest.raises(RunFolderError, match="cannot create run folder"):
            RunFolder(where).create()
