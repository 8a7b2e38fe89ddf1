"""Everything importing gan_sru changes in the process, in one place (each change is below, with its reason).

1. Under an MPI launcher, the BLAS, OpenMP and numba thread counts (THREAD_VARIABLES) default to this
   rank's share of the cores, unless the user set them: N ranks x all cores' threads would oversubscribe.
2. `sys.modules` marks `nnabla.nnabla` and `nnabla.nnabla_ext` as absent. nnabla's Cython code runs
   `import nnabla` (every custom function's forward/backward) and looks up `nnabla.nnabla_ext` (every
   `Variable.d` / `.g`) through an implicit relative import that first searches the file system for these
   modules, which do not exist; marked absent, the search fails at once (about 3x faster per call).
3. numba's threading layer is "workqueue" when gan_sru.ops.sru.cpu is imported (unless the user set
   NUMBA_THREADING_LAYER): OpenMP's workers spin after each parallel region and fight OpenBLAS's threads
   for the same cores.

The CLI (gan_sru.commands.main) also sets nnabla's logger to WARNING ($GAN_SRU_NNABLA_LOG to change it).
"""
import os
import sys

# Processes per node, as MPI launchers tell each rank (Open MPI, MPICH/Intel MPI, MVAPICH2).
LOCAL_SIZE_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_SIZE")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
ABSENT_MODULES = ("nnabla.nnabla", "nnabla.nnabla_ext")


def threads_per_rank():
    """1. Under an MPI launcher, give each rank its share of the cores unless the user set a thread count.
    A rank bound to some cores (mpirun binds by default when slots suffice) gets those cores. Has effect only
    before numpy is imported."""
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


def mark_absent_modules():
    """2. Mark nnabla's never-present modules absent, so its implicit relative imports fail at once."""
    for name in ABSENT_MODULES:
        sys.modules.setdefault(name, None)


def use_workqueue_threads(numba):
    """3. numba's workqueue threading layer (no spinning workers), unless NUMBA_THREADING_LAYER is set."""
    if "NUMBA_THREADING_LAYER" not in os.environ:
        numba.config.THREADING_LAYER = "workqueue"


def prepare():
    """The changes importing gan_sru makes (1 and 2; 3 happens when the CPU kernels are imported)."""
    threads_per_rank()
    mark_absent_modules()
