"""gan_sru: sequence GANs on nnabla with a fused SRU generator."""

from gan_sru import environment

__version__ = "0.1.0"

# The one place where importing gan_sru changes the process (thread counts under MPI, nnabla's absent
# modules): gan_sru/environment.py lists each change and its reason.
environment.prepare()
THREAD_VARIABLES = environment.THREAD_VARIABLES


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
