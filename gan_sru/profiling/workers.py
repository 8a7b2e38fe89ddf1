"""Every strategy in a worker process of its own, taking turns step by step; the savings of the detached step."""
import functools
import time

import numpy as np

from gan_sru import GanSruError
from gan_sru.registry import import_network_modules, network_modules

from .measure import (
    DEFAULT_STEPS,
    DEFAULT_STRATEGIES,
    DEFAULT_WARMUP,
    ExtensionContext,
    StrategyRun,
    check_counts,
    load_training_data,
    parse_strategies,
)


class WorkerRun:
    """A `StrategyRun` in a fresh process of its own (multiprocessing "spawn"), driven over a pipe with
    the same methods. The process loads the data itself (same config and seed, so the same data)."""

    def __init__(self, cfg, strategy, context=ExtensionContext(), functions=False):
        import multiprocessing

        self.strategy = strategy
        mp = multiprocessing.get_context("spawn")
        self.conn, child = mp.Pipe()
        self.process = mp.Process(target=_worker, args=(child, cfg, strategy, context, functions, network_modules()),
                                  daemon=True, name=f"gan-sru profile {strategy}")
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


def _worker(conn, cfg, strategy, context, functions, networks):
    """The worker process's loop: run the commands of `WorkerRun` on a `StrategyRun`."""
    import traceback

    import_network_modules(networks)  # a spawned process has not imported models

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
            context=ExtensionContext(), progress=True, isolate=True, functions=True, comm=None):
    """Profile each strategy; returns the report dict.

    isolate=True (the CLI): each strategy in a fresh worker process; on a CPU context the workers take
    turns step by step (step i of every strategy, then step i+1), so a change in machine load hits all
    strategies alike, and each worker's RSS is its own; on CUDA they run one after the other, so the
    device-wide memory reading sees one worker at a time. isolate=False: one after the other in this
    process (the RSS high-water mark is reset before each; nnabla's array cache is emptied).
    Workers are started with multiprocessing's "spawn": a script calling this needs the usual
    `if __name__ == "__main__":` guard.
    comm: a data-parallel communicator of several ranks (`mpirun -n N gan-sru profile`): every rank profiles
    in its own process (isolate is off), each strategy's result adds "communication" (all-reduce time,
    share of the step, bytes per step), and only rank 0 shows progress.
    Report keys: config, context, strategies, steps, warmup, isolated, interleaved, results (strategy ->
    `StrategyRun.finish` dict), savings, function_breakdown (GraphProfiler on the detached graph, or the
    last strategy's), nnabla_version, created.
    """
    import nnabla as nn
    from tqdm import tqdm

    if not isinstance(strategies, str):
        strategies = ",".join(strategies)
    strategies = parse_strategies(strategies)
    check_counts(steps, warmup)
    distributed = comm is not None and comm.size > 1
    if distributed:
        isolate, progress = False, progress and comm.is_root
    breakdown_of = ("detached" if "detached" in strategies else strategies[-1]) if functions else None
    interleave = isolate and not context.is_cuda
    data = (None, None) if isolate else load_training_data(cfg)
    groups = [list(strategies)] if interleave else [[s] for s in strategies]
    bar = tqdm(total=len(strategies) * (warmup + steps), desc="profile", unit="step", disable=not progress,
               dynamic_ncols=True)
    make = WorkerRun if isolate else functools.partial(StrategyRun, comm=comm if distributed else None)
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
        "config": cfg.name,
        "context": context._asdict(),
        "nnabla_version": nn.__version__,
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "strategies": list(strategies),
        "steps": steps,
        "warmup": warmup,
        "isolated": isolate,
        "world_size": comm.size if distributed else 1,
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
