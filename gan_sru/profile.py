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
  hooks are off while timing. Expected for n_critic = 1: G forward/backward detached 1/1, recompute 2/1,
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
import collections
import contextlib
import gc
import json
import os
import sys
import time
from typing import NamedTuple

import numpy as np

from . import ConfigError, GanSruError, RunFolderError

DEFAULT_STRATEGIES = ("linked", "recompute", "detached")
DEFAULT_STEPS = 20
DEFAULT_WARMUP = 3
PHASES = ("g_forward", "d_step", "g_step", "g_backward", "other")  # "other": sampling, feeding, losses
PASSES = ("G_forward", "G_backward", "D_forward", "D_backward")


class ExtensionContext(NamedTuple):
    """The nnabla extension context as the command line gives it (`-c/-d/-t`); cli.set_context accepts it."""
    context: str = "cpu"
    device_id: str = "0"
    type_config: str = "float"

    @classmethod
    def from_args(cls, args):
        return cls(getattr(args, "context", "cpu"), str(getattr(args, "device_id", "0")),
                   getattr(args, "type_config", "float"))

    @property
    def is_cuda(self):
        return self.context in ("cuda", "cudnn")


def parse_strategies(text):
    """'linked,recompute,detached' -> a tuple of strategy names; ConfigError for an unknown or repeated name."""
    from .gan import STRATEGIES

    names = [s.strip() for s in str(text).split(",") if s.strip()]
    expected = f"a comma-separated list of {', '.join(STRATEGIES)}"
    if not names:
        raise ConfigError(f"--strategies {text!r}: no strategy given; expected {expected}")
    for name in names:
        if name not in STRATEGIES:
            raise ConfigError(f"--strategies: unknown strategy {name!r}; expected {expected}")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"--strategies {text!r}: {repeated[0]!r} is listed twice; expected {expected}")
    return tuple(names)


def _check_counts(steps, warmup):
    if not isinstance(steps, int) or steps < 1:
        raise ConfigError(f"--steps {steps!r}: expected an integer >= 1 (timed steps per strategy)")
    if not isinstance(warmup, int) or warmup < 1:
        raise ConfigError(f"--warmup {warmup!r}: expected an integer >= 1 (the warm-up steps also count the "
                          "network passes, with hooks that stay off while timing)")


def load_training_data(cfg):
    """The training split and the length buckets, exactly as the trainer builds them."""
    from .data import BucketSpec, load_dataset

    dataset = load_dataset(cfg["data"], cfg["seed"])
    train_set, _ = dataset.split(cfg["data"]["holdout_fraction"], cfg["seed"])
    return train_set, BucketSpec.from_lengths(dataset.lengths, cfg["data"]["num_buckets"])


# ---------------------------------------------------------------- measuring one strategy

class PhaseTimer:
    """Stands in for `GanSteps.phase`: adds each phase's wall time (seconds) to `self.seconds[name]`."""

    def __init__(self, sync):
        self.sync = sync
        self.seconds = collections.defaultdict(float)

    @contextlib.contextmanager
    def __call__(self, name):
        self.sync()
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.sync()
            self.seconds[name] += time.perf_counter() - t0


class CallCounter:
    """Function pre-hooks counting the calls of functions that take a G or a D parameter as an input.

    nnabla Variables compare and hash by the variable they wrap, so set membership identifies parameters.
    """

    def __init__(self, g_params, d_params):
        self.g, self.d = set(g_params.values()), set(d_params.values())
        self.calls = collections.Counter()

    def network_of(self, f):
        inputs = f.inputs
        if any(v in self.g for v in inputs):
            return "G"
        if any(v in self.d for v in inputs):
            return "D"
        return None

    def hook(self, direction):
        def count(f):
            net = self.network_of(f)
            if net is not None:
                self.calls[f"{net}_{direction}"] += 1
        return count

    def functions_per_pass(self, graph):
        """Parameter-taking G and D functions in one pass: G's in `graph.fake`, D's in `graph.g_loss`
        (which holds exactly one D)."""
        found = collections.Counter()
        graph.fake.visit(lambda f: found.update([self.network_of(f)]))
        g_count = found["G"]
        found.clear()
        graph.g_loss.visit(lambda f: found.update([self.network_of(f)]))
        return {"G": g_count, "D": found["D"]}


def _proc_status_mib(field):
    """A `VmXXX` line of /proc/self/status in MiB, or None where there is no /proc."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _reset_peak_rss():
    """Reset the kernel's RSS high-water mark (VmHWM) to the current RSS; False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _device_used_mib(context):
    """Device memory in use (total - free, all processes on the device) in MiB; None off CUDA or without CuPy."""
    if not context.is_cuda:
        return None
    try:
        import cupy

        with cupy.cuda.Device(int(context.device_id)):
            free, total = cupy.cuda.runtime.memGetInfo()
        return (total - free) / 2 ** 20
    except Exception:  # no CuPy or no driver: the report says "n/a" rather than failing the profile
        return None


def _synchronizer(context):
    if not context.is_cuda:
        return lambda: None
    from nnabla.ext_utils import import_extension_module

    ext = import_extension_module(context.context)
    return lambda: ext.synchronize(device_id=context.device_id)


def _stats(values_s):
    """Seconds -> {median, p10, p90, mean} in milliseconds."""
    a = np.asarray(values_s, np.float64) * 1e3
    p10, median, p90 = np.percentile(a, [10, 50, 90])
    return {"median": float(median), "p10": float(p10), "p90": float(p90), "mean": float(a.mean())}


def _number(x):
    x = float(x)
    return int(x) if x.is_integer() else round(x, 4)


class StrategyRun:
    """One strategy's profile in this process: `start`, then `count_step(i)` for the warm-up steps,
    `timed_step(i)` for the timed ones, then `finish()` -> the JSON-ready result dict.

    `start` sets the nnabla context, runs one throw-away step (so kernel compilation, thread pools and
    the like are outside the memory figures), clears the parameters and nnabla's array cache, resets the
    RSS high-water mark, and builds `GanSteps` from the config's seed. `functions`: `finish` also runs
    GraphProfiler on the last step graph. `isolated` labels the memory figures (a process of its own).
    """

    def __init__(self, cfg, strategy, context=ExtensionContext(), functions=False, isolated=False):
        self.cfg, self.strategy, self.context = cfg, strategy, context
        self.functions, self.isolated = functions, isolated

    def start(self, train_set, spec):
        import nnabla as nn
        from nnabla.ext_utils import import_extension_module

        from .cli import set_context
        from .gan import GanSteps

        set_context(self.context)
        nn.clear_parameters()
        GanSteps(self.cfg, train_set, spec, strategy=self.strategy).step(0)  # the throw-away step
        nn.clear_parameters()
        gc.collect()
        import_extension_module(self.context.context).clear_memory_cache()
        _free_cupy_pool(self.context)
        _return_free_heap()
        self.peak_reset = _reset_peak_rss()
        self.host_start = _proc_status_mib("VmRSS")
        self.device_start = self.device_peak = _device_used_mib(self.context)

        self.sync = _synchronizer(self.context)
        self.gan = GanSteps(self.cfg, train_set, spec, strategy=self.strategy)
        self.timer = PhaseTimer(self.sync)
        self.gan.phase = self.timer
        self.counter = CallCounter(self.gan.g_params, self.gan.d_params)
        self.counted, self.step_s, self.phase_s = [], [], collections.defaultdict(list)
        self.timed_steps, self.last_losses = [], None

    def count_step(self, i):
        """Step i with the function hooks on (untimed); records the calls and the batch lengths."""
        gan, counter = self.gan, self.counter
        gan.forward_hook, gan.backward_hook = counter.hook("forward"), counter.hook("backward")
        counter.calls.clear()
        try:
            gan.step(i)
        finally:
            gan.forward_hook = gan.backward_hook = None
        lengths = [self._length(i, k) for k in range(self.cfg["train"]["n_critic"])]
        self.counted.append({"step": i, "lengths": lengths, "calls": {p: counter.calls[p] for p in PASSES}})

    def timed_step(self, i):
        """Step i timed as a whole and per phase (hooks off)."""
        self.timer.seconds.clear()
        self.sync()
        t0 = time.perf_counter()
        self.last_losses = self.gan.step(i)
        self.sync()
        dt = time.perf_counter() - t0
        sec = self.timer.seconds
        self.step_s.append(dt)
        for name in ("g_forward", "d_step", "g_step", "g_backward"):
            self.phase_s[name].append(sec.get(name, 0.0))
        self.phase_s["other"].append(max(dt - sec["g_forward"] - sec["d_step"] - sec["g_step"], 0.0))
        self.timed_steps.append(i)
        used = _device_used_mib(self.context)
        if used is not None:
            self.device_peak = max(self.device_peak, used)

    def _breakdown(self, graph):
        try:
            return {"graphs": function_breakdown(graph, self.context)}
        except Exception as e:  # an auxiliary table: a failing GraphProfiler must not cost the measurements
            print(f"warning: GraphProfiler failed ({type(e).__name__}: {e}); no per-function table", file=sys.stderr)
            return {"error": f"{type(e).__name__}: {e}"}

    def _length(self, i, k=0):
        return int(self.gan.inputs(i, k)[0].x.shape[0])

    def finish(self):
        """The result dict (see the module docstring); frees the graphs."""
        gan = self.gan
        graph = gan.graph_for(self._length(self.timed_steps[-1]))  # the last step's graph
        per_pass = self.counter.functions_per_pass(graph)
        passes = [{p: c["calls"][p] / per_pass[p[0]] for p in PASSES} for c in self.counted]
        host_peak = _proc_status_mib("VmHWM")
        phases = [n for n in PHASES if n != "g_backward" or self.strategy == "detached"]
        result = {
            "strategy": self.strategy,
            "steps": len(self.step_s),
            "warmup": len(self.counted),
            "n_critic": self.cfg["train"]["n_critic"],
            "step_ms": _stats(self.step_s),
            "step_ms_all": [round(t * 1e3, 4) for t in self.step_s],
            "timed_steps": self.timed_steps,
            "phase_ms": {n: _stats(self.phase_s[n]) for n in phases},
            "functions_per_pass": per_pass,
            "counted_steps": self.counted,
            "passes_per_step": {p: _number(np.mean([s[p] for s in passes])) for p in PASSES},
            "passes_same_every_step": all(s == passes[0] for s in passes),
            "lengths_counted": sorted({n for c in self.counted for n in c["lengths"]}),
            "lengths_timed": sorted({self._length(i) for i in self.timed_steps}),
            "graph_builds": gan.graph_builds,
            "last_losses": {"d_loss": self.last_losses[0], "g_loss": self.last_losses[1]},
            "memory": {
                "isolated": self.isolated,
                "peak_reset": self.peak_reset,
                "host_start_mib": self.host_start,
                "host_peak_mib": host_peak,
                "host_peak_above_start_mib": (host_peak - self.host_start if self.peak_reset and host_peak
                                              and self.host_start else None),
                "device_peak_above_start_mib": (None if self.device_start is None
                                                else self.device_peak - self.device_start),
            },
            "functions": self._breakdown(graph) if self.functions else None,
        }
        self.gan = self.counter = None
        return result

    def close(self):
        """Nothing to stop in this process (`WorkerRun.close` stops its process)."""


def _return_free_heap():
    """glibc's malloc_trim(0): hand freed heap pages back to the kernel, so RSS counts live memory only."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _free_cupy_pool(context):
    if context.is_cuda:
        try:
            import cupy

            cupy.get_default_memory_pool().free_all_blocks()
        except ImportError:
            pass


def function_breakdown(graph, context, n_run=10, max_seconds=0.05):
    """Per-function forward/backward times (ms) of one step graph with nnabla's GraphProfiler.

    Profiles three roots: "fake" (G), "d_loss" and "g_loss" (in the detached graph these hold only D).
    GraphProfiler zeroes the intermediate buffers and accumulates parameter gradients: run it last.
    """
    import nnabla as nn
    from nnabla.utils.profiler import GraphProfiler

    scope_of = {v: os.path.dirname(k) for k, v in nn.get_parameters(grad_only=False).items()}
    out = {}
    for name in ("fake", "d_loss", "g_loss"):
        root = getattr(graph, name)
        prof = GraphProfiler(root, device_id=context.device_id, ext_name=context.context, n_run=n_run,
                             max_measure_execution_time=max_seconds)
        prof.run()
        res = prof.get_result()
        rows = [{"function": fn, "scope": scope, "inputs": [list(s) for s in fwd.inputs_shape],
                 "forward_ms": float(fwd.mean_time), "backward_ms": float(bwd.mean_time)}
                for (fn, scope), fwd, bwd in zip(_describe(root, scope_of), res["forward"], res["backward"])]
        out[name] = {"forward_all_ms": float(res["forward_all"]), "backward_all_ms": float(res["backward_all"]),
                     "functions": rows}
    return out


def _describe(root, scope_of):
    """(function type, parameter scope) of each function in `root.visit` order, GraphProfiler's order.
    GraphProfiler names Python functions "Callback"; info.type_name holds their class name."""
    described = []
    root.visit(lambda f: described.append(
        (f.info.type_name, next((scope_of[v] for v in f.inputs if v in scope_of), ""))))
    return described


# ---------------------------------------------------------------- one strategy per process

class WorkerRun:
    """A `StrategyRun` in a fresh process of its own (multiprocessing "spawn"), driven over a pipe with
    the same methods. The process loads the data itself (same config and seed, so the same data)."""

    def __init__(self, cfg, strategy, context=ExtensionContext(), functions=False):
        import multiprocessing

        self.strategy = strategy
        mp = multiprocessing.get_context("spawn")
        self.conn, child = mp.Pipe()
        self.process = mp.Process(target=_worker, args=(child, cfg, strategy, context, functions), daemon=True,
                                  name=f"gan-sru profile {strategy}")
        self.process.start()
        child.close()

    def _call(self, *message):
        try:
            self.conn.send(message)
            status, value = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self.process.join(5)
            raise GanSruError(f"profile: the worker process of strategy {self.strategy!r} died "
                              f"(exit code {self.process.exitcode})") from None
        if status == "gan_sru_error":
            raise GanSruError(value)
        if status == "error":
            raise RuntimeError(f"profile: the worker process of strategy {self.strategy!r} failed:\n{value}")
        return value

    def start(self, train_set=None, spec=None):
        return self._call("start")

    def count_step(self, i):
        return self._call("count_step", i)

    def timed_step(self, i):
        return self._call("timed_step", i)

    def finish(self):
        return self._call("finish")

    def close(self):
        """Stop the worker process (politely first)."""
        if self.process.is_alive():
            try:
                self.conn.send(("close",))
            except (OSError, BrokenPipeError):
                pass
            self.process.join(10)
            if self.process.is_alive():
                self.process.terminate()
                self.process.join(5)
        self.conn.close()


def _worker(conn, cfg, strategy, context, functions):
    """The worker process's loop: run the commands of `WorkerRun` on a `StrategyRun`."""
    import traceback

    run = StrategyRun(cfg, strategy, context, functions=functions, isolated=True)
    data = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, KeyboardInterrupt):  # the parent is gone, or Ctrl-C reached the whole group
            return
        command, args = message[0], message[1:]
        if command == "close":
            return
        try:
            if command == "start":
                data = data or load_training_data(cfg)
                value = run.start(*data)
            else:
                value = getattr(run, command)(*args)
            conn.send(("ok", value))
        except GanSruError as e:
            conn.send(("gan_sru_error", str(e)))
        except KeyboardInterrupt:
            return
        except Exception:
            conn.send(("error", traceback.format_exc()))


# ---------------------------------------------------------------- all strategies

def profile(cfg, strategies=DEFAULT_STRATEGIES, steps=DEFAULT_STEPS, warmup=DEFAULT_WARMUP,
            context=ExtensionContext(), progress=True, isolate=True, functions=True):
    """Profile each strategy; returns the report dict.

    isolate=True (the CLI): each strategy in a fresh worker process; on a CPU context the workers take
    turns step by step (step i of every strategy, then step i+1), so a change in machine load hits all
    strategies alike, and each worker's RSS is its own; on CUDA they run one after the other, so the
    device-wide memory reading sees one worker at a time. isolate=False: one after the other in this
    process (the RSS high-water mark is reset before each; nnabla's array cache is emptied).
    Workers are started with multiprocessing's "spawn": a script calling this needs the usual
    `if __name__ == "__main__":` guard.
    Report keys: config, context, strategies, steps, warmup, isolated, interleaved, results (strategy ->
    `StrategyRun.finish` dict), savings, function_breakdown (GraphProfiler on the detached graph, or the
    last strategy's), nnabla_version, created.
    """
    import nnabla as nn
    from tqdm import tqdm

    if not isinstance(strategies, str):
        strategies = ",".join(strategies)
    strategies = parse_strategies(strategies)
    _check_counts(steps, warmup)
    breakdown_of = ("detached" if "detached" in strategies else strategies[-1]) if functions else None
    interleave = isolate and not context.is_cuda
    data = (None, None) if isolate else load_training_data(cfg)
    groups = [list(strategies)] if interleave else [[s] for s in strategies]
    bar = tqdm(total=len(strategies) * (warmup + steps), desc="profile", unit="step", disable=not progress,
               dynamic_ncols=True)
    make = WorkerRun if isolate else StrategyRun
    results, runs = {}, []
    try:
        for group in groups:
            group_runs = [make(cfg, s, context, functions=s == breakdown_of) for s in group]
            runs += group_runs
            for run in group_runs:
                bar.set_description(f"profile: starting {run.strategy}")
                run.start(*data)
            for i in range(warmup + steps):
                for run in group_runs:
                    bar.set_description(f"profile: {run.strategy} ({'warm-up' if i < warmup else 'timed'})")
                    (run.count_step if i < warmup else run.timed_step)(i)
                    bar.update(1)
            for run in group_runs:
                results[run.strategy] = run.finish()
                run.close()  # a worker leaves the device before the next group starts
    finally:
        bar.close()
        for run in runs:
            run.close()
    results = {s: results[s] for s in strategies}
    breakdown = results[breakdown_of].pop("functions") if breakdown_of else None
    for r in results.values():
        r.pop("functions", None)
    return {
        "config": cfg["name"],
        "context": context._asdict(),
        "nnabla_version": nn.__version__,
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "strategies": list(strategies),
        "steps": steps,
        "warmup": warmup,
        "isolated": isolate,
        "interleaved": interleave,
        "results": results,
        "savings": savings(results),
        "function_breakdown": {"strategy": breakdown_of, **breakdown} if breakdown else None,
    }


def savings(results):
    """Detached's saving over recompute and linked, each next to its bound (ms and % of the bound).

    The saving is the median over the timed steps of the paired difference t_alt[i] - t_detached[i]
    (step i has the same batch and noise in every strategy); the bounds are the detached medians of one
    G forward (g_forward) and of one G backward (g_backward).
    """
    det = results.get("detached")
    if det is None:
        return {}
    g_fwd = det["phase_ms"]["g_forward"]["median"]
    g_bwd = det["phase_ms"]["g_backward"]["median"]
    bounds = {"recompute": ("one G forward", g_fwd), "linked": ("one G forward + one G backward", g_fwd + g_bwd)}
    out = {"g_forward_ms": g_fwd, "g_backward_ms": g_bwd}
    for alt, (what, bound) in bounds.items():
        if alt not in results:
            continue
        diff = np.asarray(results[alt]["step_ms_all"]) - np.asarray(det["step_ms_all"])
        p10, saving, p90 = (float(v) for v in np.percentile(diff, [10, 50, 90]))
        of_medians = results[alt]["step_ms"]["median"] - det["step_ms"]["median"]
        out[alt] = {"saving_ms": saving, "saving_ms_p10": p10, "saving_ms_p90": p90,
                    "difference_of_medians_ms": of_medians, "bound": what,
                    "bound_ms": bound, "saving_of_bound_pct": 100.0 * saving / bound if bound > 0 else None,
                    "step_time_ratio": results[alt]["step_ms"]["median"] / det["step_ms"]["median"]}
    return out


# ---------------------------------------------------------------- the report

def _fmt(x, digits=2):
    return "n/a" if x is None else f"{x:.{digits}f}"


def format_table(report):
    """The per-strategy summary as a Markdown table, then the savings (the terminal shows the same text)."""
    head = ["strategy", "step ms median", "p10–p90", "G forward", "D step", "G step (G backward)", "other",
            "G passes fwd/bwd", "D passes fwd/bwd", "peak RSS MiB (above start)", "device MiB"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for s in report["strategies"]:
        r = report["results"][s]
        ph, p, mem = r["phase_ms"], r["passes_per_step"], r["memory"]
        g_step = _fmt(ph["g_step"]["median"])
        if "g_backward" in ph:
            g_step += f" ({_fmt(ph['g_backward']['median'])})"
        cells = [s, _fmt(r["step_ms"]["median"]), f"{_fmt(r['step_ms']['p10'])}–{_fmt(r['step_ms']['p90'])}",
                 _fmt(ph["g_forward"]["median"]) if s != "linked" else "in D step", _fmt(ph["d_step"]["median"]),
                 g_step, _fmt(ph["other"]["median"]),
                 f"{p['G_forward']} / {p['G_backward']}", f"{p['D_forward']} / {p['D_backward']}",
                 f"{_fmt(mem['host_peak_mib'], 1)} ({_fmt(mem['host_peak_above_start_mib'], 1)})",
                 _fmt(mem["device_peak_above_start_mib"], 1)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.extend(savings_lines(report))
    return "\n".join(lines)


def savings_lines(report):
    sv = report["savings"]
    if not sv:
        return ["(savings need the detached strategy in --strategies)"]
    out = []
    for alt in ("recompute", "linked"):
        if alt in sv:
            x = sv[alt]
            out.append(f"- detached saves {_fmt(x['saving_ms'])} ms per step over {alt} (paired median; p10–p90 "
                       f"{_fmt(x['saving_ms_p10'])}–{_fmt(x['saving_ms_p90'])}) = "
                       f"{_fmt(x['saving_of_bound_pct'], 1)}% of its bound, {x['bound']} "
                       f"({_fmt(x['bound_ms'])} ms); {alt}/detached median step time: "
                       f"{_fmt(x['step_time_ratio'], 3)}")
    return out


def markdown(report):
    """profile.md: the summary table, how it was measured, last losses, and the per-function breakdown."""
    ctx = report["context"]
    lines = [f"# Profile of `{report['config']}`: forward-pass reuse", "",
             f"{report['steps']} timed steps after {report['warmup']} warm-up steps per strategy; context "
             f"{ctx['context']} (device {ctx['device_id']}, {ctx['type_config']}); nnabla "
             f"{report['nnabla_version']}; {report['created']}.", "",
             "Times in ms: medians over the timed steps (p10–p90 of the step time)"
             + ("; the strategies' worker processes took turns step by step" if report["interleaved"] else "")
             + ". The saving is the median of the paired per-step differences (step i has the same batch and "
             "noise in every strategy). Passes per step: counted with function hooks during the warm-up steps "
             "(hooks off while timing). Peak RSS: VmHWM of " + ("a worker process per strategy" if report["isolated"]
                                                                else "this process")
             + ", reset after a throw-away step (kernels compiled, parameters and nnabla's array cache cleared); "
             "in brackets the peak above the RSS at that moment. Device: memory in use on the device (all "
             "processes) above that moment's level, CUDA only.", "",
             format_table(report), "", "## Last step's losses (identical data, noise and initial weights)", "",
             "| strategy | d_loss | g_loss |", "|---|---|---|"]
    for s in report["strategies"]:
        loss = report["results"][s]["last_losses"]
        lines.append(f"| {s} | {loss['d_loss']:.6f} | {loss['g_loss']:.6f} |")
    fb = report.get("function_breakdown")
    if fb and "error" in fb:
        lines += ["", f"GraphProfiler failed on the {fb['strategy']} graph: {fb['error']}"]
    elif fb:
        lines += ["", f"## Functions of one {fb['strategy']} step graph (GraphProfiler, ms)", "",
                  "| graph | whole forward | whole backward |", "|---|---|---|"]
        for name, g in fb["graphs"].items():
            lines.append(f"| {name} | {_fmt(g['forward_all_ms'], 3)} | {_fmt(g['backward_all_ms'], 3)} |")
        rows = [(name, f) for name, g in fb["graphs"].items() for f in g["functions"]]
        rows.sort(key=lambda r: -(r[1]["forward_ms"] + r[1]["backward_ms"]))
        lines += ["", "Slowest functions (forward + backward):", "",
                  "| graph | function | scope | inputs | forward | backward |", "|---|---|---|---|---|---|"]
        for name, f in rows[:20]:
            shapes = ", ".join("x".join(str(d) for d in s) or "()" for s in f["inputs"])
            lines.append(f"| {name} | {f['function']} | {f['scope'] or '-'} | {shapes} | "
                         f"{_fmt(f['forward_ms'], 3)} | {_fmt(f['backward_ms'], 3)} |")
    return "\n".join(lines) + "\n"


def plot(report, path):
    """profile.png: stacked median phase times per strategy (p10–p90 of the step as an error bar), and
    the network passes per step."""
    from matplotlib.figure import Figure

    names = report["strategies"]
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    ax_t, ax_p = fig.subplots(1, 2)
    x = np.arange(len(names))
    bottom = np.zeros(len(names))
    colors = {"g_forward": "#4c72b0", "d_step": "#dd8452", "g_step": "#55a868", "other": "#8c8c8c"}
    labels = {"g_forward": "G forward", "d_step": "D step (linked: + G forward, G backward)",
              "g_step": "G step", "other": "other"}
    for ph in ("g_forward", "d_step", "g_step", "other"):
        vals = np.array([report["results"][s]["phase_ms"][ph]["median"] for s in names])
        ax_t.bar(x, vals, 0.6, bottom=bottom, color=colors[ph], label=labels[ph])
        bottom += vals
    steps = [report["results"][s]["step_ms"] for s in names]
    med = np.array([m["median"] for m in steps])
    err = np.array([[m["median"] - m["p10"] for m in steps], [m["p90"] - m["median"] for m in steps]])
    ax_t.errorbar(x + 0.22, med, yerr=np.clip(err, 0, None), fmt="k_", capsize=4, label="step median, p10–p90")
    ax_t.set_xticks(x, names)
    ax_t.set_ylabel("ms per step (medians)")
    ax_t.set_title(f"{report['config']}: time per step ({report['context']['context']})")
    ax_t.set_ylim(0, 1.45 * max(bottom.max(), (med + err[1]).max()))
    ax_t.legend(fontsize=8, loc="upper left", ncol=2)
    width = 0.2
    for j, p in enumerate(PASSES):
        vals = [report["results"][s]["passes_per_step"][p] for s in names]
        bars = ax_p.bar(x + (j - 1.5) * width, vals, width, label=p.replace("_", " "))
        ax_p.bar_label(bars, fmt="%g", fontsize=8)
    ax_p.set_xticks(x, names)
    ax_p.set_ylabel("network passes per step")
    ax_p.set_title("forward / backward passes")
    ax_p.set_ylim(0, 1.3 * max(max(r["passes_per_step"].values()) for r in report["results"].values()))
    ax_p.legend(fontsize=8, loc="upper center", ncol=4)
    fig.savefig(path, dpi=110)


def write_report(report, out_dir, stem="profile"):
    """Write STEM.json, STEM.md and STEM.png into `out_dir`; returns their paths by extension."""
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise RunFolderError(f"cannot create the profile folder {out_dir}: {e.strerror}") from e
    paths = {k: os.path.join(out_dir, f"{stem}.{k}") for k in ("json", "md", "png")}
    with open(paths["json"], "w") as f:
        json.dump(report, f, indent=1)
    with open(paths["md"], "w") as f:
        f.write(markdown(report))
    plot(report, paths["png"])
    return paths


# ---------------------------------------------------------------- command line

def run_profile(cfg, args, out=None):
    """`gan-sru profile` / `train.py --profile` on a loaded config; args as cli parses them (the train
    parser has no --steps/--warmup/--strategies/--out: the defaults apply)."""
    strategies = parse_strategies(getattr(args, "strategies", None) or ",".join(DEFAULT_STRATEGIES))
    steps, warmup = getattr(args, "steps", DEFAULT_STEPS), getattr(args, "warmup", DEFAULT_WARMUP)
    _check_counts(steps, warmup)
    out_dir = getattr(args, "out", None) or os.path.join(cfg["run_dir"], cfg["name"], "profile")
    report = profile(cfg, strategies, steps=steps, warmup=warmup, context=ExtensionContext.from_args(args),
                     progress=not getattr(args, "no_progress", False))
    paths = write_report(report, out_dir)
    out = out or sys.stdout
    print(format_table(report), file=out)
    print(f"\nreport: {paths['md']}\n        {paths['json']}\n        {paths['png']}", file=out, flush=True)
    return 0


def main(args):
    from .cli import set_context
    from .config import load_config

    cfg = load_config(args.config, args.overrides)
    parse_strategies(args.strategies)  # refuse a bad list before loading anything heavy
    set_context(args)
    return run_profile(cfg, args)

