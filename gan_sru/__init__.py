"""gan_sru: sequence GANs on nnabla with a fused SRU generator."""

__version__ = "0.1.0"


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
