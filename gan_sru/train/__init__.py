"""Training: losses, the per-bucket step graphs and their three strategies, the step, the loop, run folders."""
from gan_sru.registry import STRATEGIES

from .graphs import StepGraph, all_params, discriminator_params, generator_params
from .loop import Trainer
from .losses import d_loss_fn, g_loss_fn
from .run_folder import Checkpoint, RunFolder
from .steps import GanSteps, clip_global_norm

__all__ = ["STRATEGIES", "Checkpoint", "GanSteps", "RunFolder", "StepGraph", "Trainer", "all_params",
           "clip_global_norm", "d_loss_fn", "discriminator_params", "g_loss_fn", "generator_params"]
