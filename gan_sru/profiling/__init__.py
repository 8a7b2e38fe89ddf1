"""`gan-sru profile`: what forward-pass reuse saves: the linked, recompute and detached steps side by side.

    gan-sru profile --config configs/sines.yaml [--steps 20] [--warmup 3] [--strategies linked,recompute,detached]
                    [--context cpu] [--out DIR]          (or: python train.py --config CFG --profile)

For each strategy the same config, data, noise and initial weights (`nn.clear_parameters()`, then
`GanSteps(cfg, train_set, spec, strategy=s)`) run `warmup` steps and then `steps` timed steps. The CLI
runs every strategy in a worker process of its own; on a CPU context the workers take turns step by
step (step i of each strategy, then step i+1), so a change in machine load hits all strategies alike.

* Network passes per step, counted during the warm-up steps with function hooks (`GanSteps.forward_hook`
  / `backward_hook`): a function call belongs to G (or D) when one of its inputs is a G (or D) parameter,
  and passes = such calls / such functions in one pass (G: the fake's graph, D: the G loss's D). The
  hooks are off while timing. Expected: G forward/backward detached 1/1, recompute 2/1,
  linked 2/2; D 3/3 (real and fake in the D step, the fake again in the G step).
* Step and phase times (median, p10, p90) of the timed steps; phases as `GanSteps.step` names them:
  g_forward, d_step, g_step, and g_backward (the `fake.backward` inside the detached g_step); on a CUDA
  context the device is synchronised around every timing.
* Peak memory. Before building its graphs a run makes one throw-away step (kernels compiled, thread
  pools up), then clears the parameters, nnabla's array cache and glibc's free heap (malloc_trim), and
  resets the kernel's RSS high-water mark (`5 > /proc/self/clear_refs`). Reported: VmHWM at the end
  (the worker's own process) and VmHWM above the RSS at the reset, i.e. what the graphs, solvers and
  steps took at their peak. On CUDA (workers one after the other, so one at a time on the device):
  device memory in use (cudaMemGetInfo via CuPy, device-wide) above its level at the reset, max over
  the timed steps; nnabla and CuPy keep freed blocks in their pools, so this is the pools' peak.
* The saving of detached over each alternative (median of the paired per-step differences: step i has
  the same batch in every strategy) next to its bound: one G forward (the detached median g_forward)
  for recompute, one G forward plus one G backward (the detached median g_backward) for linked.
* A per-function breakdown of one detached step graph (G's fake, the D loss, the G loss) with
  `nnabla.utils.profiler.GraphProfiler`.

Writes profile.json, profile.md and profile.png into the output folder (default run_dir/name/profile).
"""

from .measure import (
                      DEFAULT_STEPS,
                      DEFAULT_STRATEGIES,
                      DEFAULT_WARMUP,
                      PASSES,
                      PHASES,
                      CallCounter,
                      ExtensionContext,
                      load_training_data,
                      parse_strategies,
)
from .report import format_table, markdown, write_report
from .workers import profile, savings

__all__ = ["DEFAULT_STEPS", "DEFAULT_STRATEGIES", "DEFAULT_WARMUP", "PASSES", "PHASES", "CallCounter",
           "ExtensionContext", "format_table", "load_training_data", "markdown", "parse_strategies", "profile",
           "savings", "write_report"]
