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

# nnabla's Cython callbacks (every PythonFunction forward/backward) run `import nnabla` with Cython's
# implicit relative import, which first searches the file system for a module `nnabla.nnabla` that
# does not exist. Marking it absent makes that attempt fail at once: 2.8 ms -> 1.1 ms per tiny custom
# function forward+backward, measured here. Nothing is hidden: the module does not exist.
sys.modules.setdefault("nnabla.nnabla", None)


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


def __getattr__(name):
    """`from gan_sru import SequenceGAN` imports the Python API (and nnabla) only when asked for."""
    if name == "SequenceGAN":
        from gan_sru.api import SequenceGAN

        return SequenceGAN
    raise AttributeError(f"module 'gan_sru' has no attribute {name!r}")
