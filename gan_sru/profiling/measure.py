"""Measuring one step strategy: pass counts by function hooks, phase timers, peak memory, a function breakdown."""
import collections
import contextlib
import gc
import os
import sys
import time
from typing import NamedTuple

import numpy as np

from gan_sru import ConfigError
from gan_sru.registry import STRATEGIES
from gan_sru.train.steps import StepObserver

from .memory import device_used_mib, free_cupy_pool, proc_status_mib, reset_peak_rss, return_free_heap

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


def check_counts(steps, warmup):
    if not isinstance(steps, int) or steps < 1:
        raise ConfigError(f"--steps {steps!r}: expected an integer >= 1 (timed steps per strategy)")
    if not isinstance(warmup, int) or warmup < 1:
        raise ConfigError(f"--warmup {warmup!r}: expected an integer >= 1 (the warm-up steps also count the "
                          "network passes, with hooks that stay off while timing)")


def load_training_data(cfg):
    """The training split and the length buckets, exactly as the trainer builds them."""
    from gan_sru.data import training_data

    data = training_data(cfg)
    return data.train, data.spec


# ---------------------------------------------------------------- measuring one strategy

class ProfileObserver(StepObserver):
    """What `GanSteps` reports to while profiling: each phase's wall time (seconds) added to
    `self.seconds[name]`, and, between `count_on(counter)` and `count_off()`, every function call
    passed to the CallCounter's hooks."""

    def __init__(self, sync):
        self.sync = sync
        self.seconds = collections.defaultdict(float)

    @contextlib.contextmanager
    def phase(self, name):
        self.sync()
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.sync()
            self.seconds[name] += time.perf_counter() - t0

    def count_on(self, counter):
        self.forward_hook, self.backward_hook = counter.hook("forward"), counter.hook("backward")

    def count_off(self):
        self.forward_hook = self.backward_hook = None


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
    `comm`: a data-parallel communicator (`gan-sru profile` under mpirun); every rank runs the same calls, and
    the result adds the all-reduce's time and bytes per step ("communication").
    """

    def __init__(self, cfg, strategy, context=ExtensionContext(), functions=False, isolated=False, comm=None):
        self.cfg, self.strategy, self.context = cfg, strategy, context
        self.functions, self.isolated, self.comm = functions, isolated, comm

    def start(self, train_set, spec):
        import nnabla as nn
        from nnabla.ext_utils import import_extension_module

        from gan_sru.context import set_context
        from gan_sru.train import GanSteps

        set_context(self.context)
        nn.clear_parameters()
        GanSteps(self.cfg, train_set, spec, strategy=self.strategy, comm=self.comm).step(0)  # the throw-away step
        nn.clear_parameters()
        gc.collect()
        import_extension_module(self.context.context).clear_memory_cache()
        free_cupy_pool(self.context)
        return_free_heap()
        self.peak_reset = reset_peak_rss()
        self.host_start = proc_status_mib("VmRSS")
        self.device_start = self.device_peak = device_used_mib(self.context)

        self.sync = _synchronizer(self.context)
        self.timer = ProfileObserver(self.sync)
        self.gan = GanSteps(self.cfg, train_set, spec, strategy=self.strategy, observer=self.timer, comm=self.comm)
        self.gan.sync_state()
        self.counter = CallCounter(self.gan.g_params, self.gan.d_params)
        self.counted, self.step_s, self.phase_s = [], [], collections.defaultdict(list)
        self.timed_steps, self.last_losses = [], None
        self.comm_s, self.comm_bytes, self.comm_calls, self.comm_wait_s = [], [], [], []
        self.gan.comm.measure_wait = True  # splits waiting for the slowest rank from the transfer

    def count_step(self, i):
        """Step i with the function hooks on (untimed); records the calls and the batch length."""
        gan, counter = self.gan, self.counter
        self.timer.count_on(counter)
        counter.calls.clear()
        try:
            gan.step(i)
        finally:
            self.timer.count_off()
        self.counted.append({"step": i, "length": self._length(i), "calls": {p: counter.calls[p] for p in PASSES}})

    def timed_step(self, i):
        """Step i timed as a whole and per phase (hooks off)."""
        self.timer.seconds.clear()
        comm = self.gan.comm
        sent, calls, waited = comm.bytes_reduced, comm.reductions, comm.wait_s
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
        self.comm_s.append(sec.get("all_reduce", 0.0))  # inside d_step and g_step
        self.comm_bytes.append(comm.bytes_reduced - sent)
        self.comm_calls.append(comm.reductions - calls)
        self.comm_wait_s.append(comm.wait_s - waited)
        self.timed_steps.append(i)
        used = device_used_mib(self.context)
        if used is not None:
            self.device_peak = max(self.device_peak, used)

    def _breakdown(self, graph):
        try:
            return {"graphs": function_breakdown(graph, self.context)}
        except Exception as e:  # an auxiliary table: a failing GraphProfiler must not cost the measurements
            print(f"warning: GraphProfiler failed ({type(e).__name__}: {e}); no per-function table", file=sys.stderr)
            return {"error": f"{type(e).__name__}: {e}"}

    def _length(self, i):
        return int(self.gan.inputs(i)[0].x.shape[0])

    def finish(self):
        """The result dict (see the module docstring); frees the graphs."""
        gan = self.gan
        graph = gan.graph_for(self._length(self.timed_steps[-1]))  # the last step's graph
        per_pass = self.counter.functions_per_pass(graph)
        passes = [{p: c["calls"][p] / per_pass[p[0]] for p in PASSES} for c in self.counted]
        host_peak = proc_status_mib("VmHWM")
        phases = [n for n in PHASES if n != "g_backward" or self.strategy == "detached"]
        result = {
            "strategy": self.strategy,
            "steps": len(self.step_s),
            "warmup": len(self.counted),
            "step_ms": _stats(self.step_s),
            "step_ms_all": [round(t * 1e3, 4) for t in self.step_s],
            "timed_steps": self.timed_steps,
            "phase_ms": {n: _stats(self.phase_s[n]) for n in phases},
            "functions_per_pass": per_pass,
            "counted_steps": self.counted,
            "passes_per_step": {p: _number(np.mean([s[p] for s in passes])) for p in PASSES},
            "passes_same_every_step": all(s == passes[0] for s in passes),
            "lengths_counted": sorted({c["length"] for c in self.counted}),
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
            "communication": self._communication(),
        }
        self.gan = self.counter = None
        return result

    def _communication(self):
        """All-reduce time per step and its share of the step (median of the per-step ratios), bytes and calls
        per step; None in a single process."""
        comm = self.gan.comm
        if comm.size == 1:
            return None
        step_s = np.maximum(np.asarray(self.step_s), 1e-12)
        share = 100.0 * np.asarray(self.comm_s) / step_s
        transfer = np.asarray(self.comm_s) - np.asarray(self.comm_wait_s)
        return {"world_size": comm.size, "backend": comm.backend, "all_reduce_ms": _stats(self.comm_s),
                "wait_ms": _stats(self.comm_wait_s), "transfer_ms": _stats(transfer),
                "transfer_share_of_step_pct": float(np.median(100.0 * transfer / step_s)),
                "share_of_step_pct": float(np.median(share)), "bytes_per_step": _number(np.median(self.comm_bytes)),
                "all_reduce_calls_per_step": _number(np.median(self.comm_calls)),
                "global_batch": self.cfg.train.batch_size, "batch_per_rank": self.gan.local_batch}

    def close(self):
        """Nothing to stop in this process (`WorkerRun.close` stops its process)."""


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
