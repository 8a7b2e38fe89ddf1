"""gan_sru: sequence GANs on nnabla with a fused SRU generator."""

import os
import sys

__version__ = "0.1.0"


def _pick_openblas_core():
    """OpenBLAS 0.3.23 (in numpy 1.26's wheels) does not recognise newer Intel cores (Sapphire/Emerald
    Rapids) and falls back to a generic kernel: a (2048x256)(256x768) float32 product, the SRU's matmul,
    took 28 ms instead of 5.4 ms on this project's 2-core machine. On AVX-512 CPUs choose its SkylakeX
    kernels, unless the user set a core type. Only possible before numpy is imported (OpenBLAS reads the
    variable when it loads): `python train.py`, `gan-sru` and the benchmarks import gan_sru first."""
    if "OPENBLAS_CORETYPE" in os.environ or "numpy" in sys.modules:
        return
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split() for line in f if line.startswith("flags")), [])
    except OSError:
        return
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"


_pick_openblas_core()

# Processes per node, as MPI launchers tell each rank (Open MPI, MPICH/Intel MPI, MVAPICH2).
LOCAL_SIZE_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_SIZE")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def _threads_per_rank():
    """Under an MPI launcher, give each rank its share of the cores (BLAS, OpenMP and numba threads) unless
    the user set a thread count: N ranks x all cores' threads each would oversubscribe the node. A rank bound
    to some cores (mpirun binds by default when slots suffice) gets those cores. Before numpy is imported."""
    local = next((os.environ[v] for v in LOCAL_SIZE_VARIABLES if v in os.environ), None)
    if local is None or not local.isdigit() or "numpy" in sys.modules:
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    if cores == (os.cpu_count() or cores):  # not bound: the local ranks share every core
        cores = max(1, cores // max(1, int(local)))
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, str(cores))


_threads_per_rank()

# nnabla's Cython callbacks (every PythonFunction forward/backward) run `import nnabla` with Cython's
# implicit relative import, which first searches the file system for a module `nnabla.nnabla` that
# does not exist. Marking it absent makes that attempt fail at once: 2.8 ms -> 1.1 ms per tiny custom
# function forward+backward, measured here. Nothing is hidden: the module does not exist.
sys.modules.setdefault("nnabla.nnabla", None)
# The same for `nnabla.nnabla_ext`, looked up on every `Variable.d` / `.g` access: 135 -> 48 us per access,
# measured here (the data-parallel all-reduce reads and writes every gradient this way).
sys.modules.setdefault("nnabla.nnabla_ext", None)


class GanSruError(Exception):
    """Base class of every error this project raises on purpose (bad input, bad state)."""


class ConfigError(GanSruError, ValueError):
    """A config file or a --set override is invalid; the message names file, key, value, expectation."""


class DataError(GanSruError, ValueError):
    """A data file is unusable; the message names the file and the first offending place."""


class CheckpointError(GanSruError):
    """A checkpoint cannot be written or does not fit the current config."""


class RunFolderError(GanSruError):
    """A run folder is locked by another process, unwritable, or inconsistent."""


class TrainingDiverged(GanSruError):
    """A loss became NaN or inf."""
