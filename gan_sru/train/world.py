"""The data-parallel world a launcher started, read from its environment variables (no MPI import), and
the line that records the world's size in a run folder's config.yaml."""
import os
from typing import NamedTuple, Optional

# (launcher, size variable, rank variable); the first whose size (or, for PMIx, rank) variable is set wins.
# Slurm: SLURM_STEP_NUM_TASKS is set by srun only (an sbatch script's own shell has SLURM_NTASKS).
LAUNCHERS = (
    ("Open MPI (mpirun)", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),
    ("MPICH / Intel MPI (Hydra)", "PMI_SIZE", "PMI_RANK"),
    ("MVAPICH2", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"),
    ("Slurm (srun)", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID"),
    ("PMIx", None, "PMIX_RANK"),
)


class Launch(NamedTuple):
    """What the environment says about the launcher: its name, the variable that showed it, this process's
    rank, and the number of processes (None where the launcher does not say: PMIx alone)."""
    launcher: str
    variable: str
    rank: int
    size: Optional[int]


def _int(env, name):
    try:
        return int(env[name]) if name and name in env else None
    except ValueError:
        return None


def detect_launch(env=None):
    """The launcher that started this process, from its environment variables; None without one."""
    env = os.environ if env is None else env
    for launcher, size_var, rank_var in LAUNCHERS:
        var = size_var or rank_var
        if var in env:
            return Launch(launcher, f"{var}={env[var]}", _int(env, rank_var) or 0, _int(env, size_var))
    return None


def world_size_comment(comm):
    """The first line of a run folder's config.yaml: a YAML comment, so it is a record and not a setting."""
    return (f"world_size: {comm.size}  (processes of the session that wrote this file; set by the launcher, not "
            "a setting: train.batch_size is the global batch, and a run resumes at any world size)")
