"""Data-parallel pieces that need no second process: the packed gradient buffer, the shards of a global
batch and of its noise, the launcher detection, the null backend, state digests. The multi-process
behaviour (mpirun -n 2) is tested in tests/integration/test_distributed.py."""
import nnabla as nn
import numpy as np
import pytest

from gan_sru import ConfigError
from gan_sru.config import dump_config, load_config
from gan_sru.data import BucketSpec, load_dataset, sample_batch
from gan_sru.networks import noise_shapes, sample_noise
from gan_sru.train import GanSteps, distributed, launch, replicas

TINY = ["data.num_sequences=64", "data.seq_len=8", "train.batch_size=8", "model.generator.hidden_size=8",
        "model.generator.num_layers=1", "model.discriminator.hidden_size=8"]


def tiny(*extra, config="configs/sines.yaml"):
    return load_config(config, TINY + list(extra))


def data_of(cfg):
    ds = load_dataset(cfg["data"], cfg["seed"])
    train, _ = ds.split(cfg["data"]["holdout_fraction"], cfg["seed"])
    return train, BucketSpec.from_lengths(ds.lengths, cfg["data"]["num_buckets"])


# ---------------------------------------------------------------- the packed buffer

def test_pack_then_unpack_gives_back_every_array_and_the_extras():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (5,), (2, 1, 3), ()]]
    extras = [1.5, -2.0, 0.0]
    buf = np.empty(sum(a.size for a in arrays) + len(extras), np.float32)
    distributed.pack(arrays, extras, buf)
    # one flat buffer, in order: the arrays' elements, then the extras
    np.testing.assert_array_equal(buf, np.concatenate([a.reshape(-1) for a in arrays] + [np.float32(extras)]))
    views, back = distributed.unpack(buf, [a.shape for a in arrays])
    assert back == extras
    for a, v in zip(arrays, views):
        assert v.shape == a.shape and np.shares_memory(v, buf)  # views: unpacking copies nothing
        np.testing.assert_array_equal(v, a)


def test_pack_refuses_a_buffer_of_another_size():
    with pytest.raises(ValueError, match="6 array elements \\+ 1 extras do not fill a buffer of 8"):
        distributed.pack([np.zeros((2, 3))], [1.0], np.empty(8, np.float32))


# ---------------------------------------------------------------- shards

@pytest.mark.parametrize("config", ["configs/sines.yaml", "configs/sines_varlen.yaml"])
@pytest.mark.parametrize("size", [2, 4])
def test_the_ranks_shards_are_disjoint_and_make_up_the_global_batch(config, size):
    cfg = tiny("data.min_len=3", config=config)
    train, spec = data_of(cfg)
    for step in range(4):
        whole = sample_batch(train, spec, 8, cfg["seed"], step)
        shards = [sample_batch(train, spec, 8, cfg["seed"], step, shard=(r, size)) for r in range(size)]
        assert {s.bucket for s in shards} == {whole.bucket}  # the same bucket on every rank
        assert all(s.x.shape[1] == 8 // size for s in shards)
        np.testing.assert_array_equal(np.concatenate([s.x for s in shards], axis=1), whole.x)
        np.testing.assert_array_equal(np.concatenate([s.mask for s in shards], axis=1), whole.mask)
        np.testing.assert_array_equal(np.concatenate([s.lengths for s in shards]), whole.lengths)


@pytest.mark.parametrize("length", [8, 24])  # 8: as long as the batch, so the batch axis is not found by size
def test_noise_shards_make_up_the_global_noise_along_each_inputs_batch_axis(length):
    gcfg = tiny("model.generator.static_noise_dim=8")["model"]["generator"]  # a size the model holds once built
    whole = sample_noise(gcfg, length, 8, np.random.default_rng(3))
    local = noise_shapes(gcfg, length, 4)
    halves = [distributed.shard_arrays(whole, local, r) for r in (0, 1)]
    np.testing.assert_array_equal(np.concatenate([h["step"] for h in halves], axis=1), whole["step"])  # (L, B, Z)
    np.testing.assert_array_equal(np.concatenate([h["static"] for h in halves], axis=0), whole["static"])  # (B, S)
    assert halves[0]["step"].shape == local["step"] and halves[0]["step"].flags.c_contiguous


def test_a_batch_the_ranks_cannot_share_evenly_is_refused():
    with pytest.raises(ConfigError, match=r"train\.batch_size 7 is not divisible by the world size 2: .* use a "
                                          r"multiple of 2 \(e\.g\. 8\)"):
        distributed.shard_slice(7, 0, 2)
    assert [distributed.shard_slice(12, r, 3) for r in range(3)] == [slice(0, 4), slice(4, 8), slice(8, 12)]
    assert distributed.NullCommunicator().local_batch(7) == 7


def test_one_process_draws_the_same_batches_and_noise_as_before():
    """GanSteps without a communicator: its inputs are the global batch and noise, unsharded."""
    cfg = tiny()
    train, spec = data_of(cfg)
    steps = GanSteps(cfg, train, spec)
    batch, noise = steps.inputs(5)
    np.testing.assert_array_equal(batch.x, sample_batch(train, spec, 8, cfg["seed"], 5).x)
    assert noise["step"].shape == (batch.x.shape[0], 8, cfg["model"]["generator"]["noise_dim"])
    assert steps.local_batch == steps.batch_size == 8


class _RankView(distributed.NullCommunicator):
    """Rank `rank` of a world of 2, for drawing a rank's inputs in one process (nothing is exchanged)."""

    def __init__(self, rank):
        super().__init__()
        self.rank, self.size = rank, 2


def test_each_ranks_noise_is_its_block_of_the_one_process_draw():
    """GanSteps.inputs on each of 2 ranks: every noise input is the rank's block of the one-process draw."""
    cfg = tiny()
    train, spec = data_of(cfg)
    _, whole = GanSteps(cfg, train, spec).inputs(3)
    halves = []
    for rank in (0, 1):
        nn.clear_parameters()
        halves.append(GanSteps(cfg, train, spec, comm=_RankView(rank)).inputs(3)[1])
    assert set(halves[0]) == set(whole)
    for key in whole:
        axis = 1 if whole[key].ndim == 3 else 0  # (L, B, D) per step, (B, D) per sequence
        np.testing.assert_array_equal(np.concatenate([h[key] for h in halves], axis=axis), whole[key])
    nn.clear_parameters()


# ---------------------------------------------------------------- launchers

@pytest.mark.parametrize("env, expected", [
    ({"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "2", "PMIX_RANK": "2"},
     ("Open MPI (mpirun)", "OMPI_COMM_WORLD_SIZE=4", 2, 4)),
    ({"PMI_SIZE": "2", "PMI_RANK": "1"}, ("MPICH / Intel MPI (Hydra)", "PMI_SIZE=2", 1, 2)),
    ({"SLURM_STEP_NUM_TASKS": "8", "SLURM_PROCID": "5", "SLURM_NTASKS": "8"},
     ("Slurm (srun)", "SLURM_STEP_NUM_TASKS=8", 5, 8)),
    ({"PMIX_RANK": "3"}, ("PMIx", "PMIX_RANK=3", 3, None)),  # the size comes from MPI itself
    ({"SLURM_NTASKS": "8", "SLURM_PROCID": "0", "SLURM_JOB_ID": "1"}, None),  # an sbatch script's own shell
    ({"PATH": "/usr/bin"}, None),
])
def test_the_launcher_is_detected_from_its_environment(env, expected):
    assert distributed.detect_launch(env) == (distributed.Launch(*expected) if expected else None)


def test_without_a_launcher_or_with_a_world_of_one_the_backend_is_the_null_one():
    for env in ({}, {"OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_RANK": "0"}):
        comm = launch.start(env=env)
        assert type(comm) is distributed.NullCommunicator and (comm.rank, comm.size, comm.is_root) == (0, 1, True)


def test_the_null_backends_collectives_are_identities():
    comm = distributed.NullCommunicator()
    p = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32), need_grad=True)
    p.g = np.full((2, 3), 0.25, np.float32)
    assert comm.all_reduce_mean([p], (1.0, 2.0)) == [1.0, 2.0]
    np.testing.assert_array_equal(p.g, np.full((2, 3), 0.25, np.float32))
    assert comm.collective(lambda: 42, root_only=True) == 42 and comm.broadcast_object("x") == "x"
    with pytest.raises(ConfigError, match="raised as is"):
        with distributed.guard(comm):
            comm.collective(lambda: (_ for _ in ()).throw(ConfigError("raised as is")))


# ---------------------------------------------------------------- state

def test_the_state_digest_sees_every_parameter_and_adams_step_count():
    cfg = tiny()
    train, spec = data_of(cfg)
    steps = GanSteps(cfg, train, spec)
    solvers = {"G": steps.solver_g, "D": steps.solver_d}
    before = replicas.state_digest(steps.checkpoint_params(), solvers)
    assert replicas.state_digest(steps.checkpoint_params(), solvers) == before
    ema = next(iter(steps.ema.values()))
    ema.d = np.nextafter(ema.d, np.float32(np.inf))  # one ulp in the moving average
    assert replicas.state_digest(steps.checkpoint_params(), solvers) != before
    ema.d = np.nextafter(ema.d, np.float32(-np.inf))
    assert replicas.state_digest(steps.checkpoint_params(), solvers) == before
    steps.step(0)  # Adam's t and moments change
    assert replicas.state_digest(steps.checkpoint_params(), solvers) != before


def test_differences_name_the_keys():
    a = {"train": {"lr": 0.001, "steps": 5}, "seed": 0}
    b = {"train": {"lr": 0.002, "steps": 5}, "seed": 1}
    assert distributed.differences(a, b) == ["seed: 0 vs 1", "train.lr: 0.001 vs 0.002"]


def test_the_world_size_is_a_comment_in_the_run_config_not_a_setting(tmp_path):
    cfg = tiny()
    path = tmp_path / "config.yaml"
    dump_config(cfg, path, comment=distributed.world_size_comment(distributed.NullCommunicator()))
    assert path.read_text().startswith("# world_size: 1  (")
    assert load_config(str(path)) == cfg
