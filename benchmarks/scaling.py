"""Data-parallel scaling on this machine: samples/s at 1 and 2 ranks (one thread each), two model sizes.

    .venv/bin/python benchmarks/scaling.py [--steps 20] [--warmup 3] [--repeats 2] [--quick]

Every measurement is its own `mpirun -n R python benchmarks/scaling.py --worker ...` with
OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS=1 (ranks not bound to cores, see `measure`). A worker
trains the config's GanSteps (detached step, built-in sines, one bucket of length 24) for `warmup` + `steps`
steps and times each step, the all-reduces inside it (split into waiting for the slower rank and the
transfer), and afterwards the bare MPI_Allreduce of the same two packed buffers (200 times each).

  weak scaling:   the same batch per rank (1 rank at b, 2 ranks at 2b):  efficiency = t(1, b) / t(2, 2b)
  strong scaling: the same global batch B (1 rank at B, 2 ranks at B/2 each): efficiency = t(1, B) / (2 t(2, B))

with t the median step time and b = B/2, so "2 ranks at B" serves both. The runs of all configurations take
turns `repeats` times (load changes hit all alike); each figure pools the timed steps of its repeats.
Then an estimate for bigger clusters from the measured per-rank compute time and message size, with the
ring all-reduce cost model (docs/results/2026-11-28-scaling.md). Writes benchmarks/results/scaling.json.
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

CONFIG = os.path.join(REPO, "configs", "sines.yaml")
SIZES = {  # model size -> config overrides
    "small (default config: G 2x48, D bi-SRU 48)": [],
    "large (G 2x256, D bi-SRU 256)": ["model.generator.hidden_size=256", "model.discriminator.hidden_size=256"],
}
PER_RANK_BATCH = 128
# links of the estimate: (name, bytes/s, per-message latency in s; assumed: TCP on 10 GbE, RDMA on 100 Gbit/s)
LINKS = (("10 Gbit/s Ethernet (TCP), 20 us", 10e9 / 8, 20e-6), ("100 Gbit/s (RDMA), 2 us", 100e9 / 8, 2e-6))
RANKS = (8, 64, 512)
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


# ---------------------------------------------------------------- one measurement (a rank under mpirun)

class PhaseClock:
    """Stands in for `GanSteps.phase`: wall and CPU seconds (this process) of each phase, summed by name.
    CPU time is what a rank computes whether or not other work shares its core; the wall time is not."""

    def __init__(self):
        self.wall, self.cpu = {}, {}

    def clear(self):
        self.wall.clear(), self.cpu.clear()

    @contextlib.contextmanager
    def __call__(self, name):
        w, c = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - w
            self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - c


def worker(args):
    import gan_sru  # noqa: F401, I001  (first: it picks OpenBLAS's kernels before numpy loads it)
    import numpy as np

    from gan_sru.config import load_config
    from gan_sru.profiling import load_training_data
    from gan_sru.train import GanSteps, launch

    comm = launch.start()
    cfg = load_config(CONFIG, json.loads(args.overrides) + [f"train.batch_size={args.batch}"])
    train_set, spec = load_training_data(cfg)
    steps = GanSteps(cfg, train_set, spec, comm=comm)
    steps.sync_state()
    clock = PhaseClock()
    steps.phase, comm.measure_wait = clock, True
    for i in range(args.warmup):
        steps.step(i)
    rows = []
    for i in range(args.warmup, args.warmup + args.steps):
        clock.clear()
        waited, sent = comm.wait_s, comm.bytes_reduced
        t0, c0 = time.perf_counter(), time.process_time()
        steps.step(i)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        # [wall, all-reduce wall, of it waiting, bytes, CPU seconds of the step less those in the all-reduces]
        rows.append([wall, clock.wall.get("all_reduce", 0.0), comm.wait_s - waited, comm.bytes_reduced - sent,
                     cpu - clock.cpu.get("all_reduce", 0.0)])
    sizes = [sum(p.size for p in steps.d_params.values()), sum(p.size for p in steps.g_params.values()) + 3]
    bare = {}
    if comm.size > 1:  # the bare all-reduce of each packed buffer, ranks aligned by a barrier before each
        MPI = comm.MPI
        for n in sizes:
            buf, times = np.ones(n, np.float32), []
            for _ in range(200):
                comm.world.Barrier()
                t0 = time.perf_counter()
                comm.world.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
                times.append(time.perf_counter() - t0)
            bare[str(4 * n)] = float(np.median(times))
    everyone = comm.world.gather(rows, root=0) if comm.size > 1 else [rows]
    if comm.is_root:
        with open(args.out, "w") as f:
            json.dump({"ranks": comm.size, "batch": args.batch, "rows": everyone, "bare_all_reduce_s": bare,
                       "buffer_bytes": [4 * n for n in sizes]}, f)


# ---------------------------------------------------------------- the orchestration

def mpirun():
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    return beside if os.access(beside, os.X_OK) else "mpirun"


def measure(size, overrides, ranks, batch, args, out):
    # not bound to cores: on a machine shared with other work, the kernel moves a rank off a busy core
    cmd = [mpirun(), *(["--allow-run-as-root"] if os.geteuid() == 0 else []), "--bind-to", "none",
           *(["--oversubscribe"] if (os.cpu_count() or 1) < ranks else []), "-n", str(ranks),
           sys.executable, os.path.abspath(__file__), "--worker", "--overrides", json.dumps(overrides),
           "--batch", str(batch), "--steps", str(args.steps), "--warmup", str(args.warmup), "--out", out]
    env = dict(os.environ, PYTHONPATH=REPO, **{v: "1" for v in THREADS})
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with open(out) as f:
        return json.load(f)


def summarize(runs):
    """Pooled medians over the repeats of one configuration (rank 0's step time; comm times of all ranks)."""
    import numpy as np

    steps = np.array([r[0] for run in runs for r in run["rows"][0]])
    comm = np.array([r for run in runs for rank in run["rows"] for r in rank])
    return {"ranks": runs[0]["ranks"], "batch": runs[0]["batch"], "step_ms": 1e3 * float(np.median(steps)),
            "step_ms_p10_p90": [1e3 * float(np.percentile(steps, q)) for q in (10, 90)],
            "samples_per_s": runs[0]["batch"] / float(np.median(steps)),
            "all_reduce_ms": 1e3 * float(np.median(comm[:, 1])), "wait_ms": 1e3 * float(np.median(comm[:, 2])),
            "transfer_ms": 1e3 * float(np.median(comm[:, 1] - comm[:, 2])),
            "bytes_per_step": int(np.median(comm[:, 3])), "buffer_bytes": runs[0]["buffer_bytes"],
            "compute_cpu_ms": 1e3 * float(np.median(comm[:, 4])),
            "bare_all_reduce_ms": {k: 1e3 * float(np.median([r["bare_all_reduce_s"][k] for r in runs]))
                                   for k in runs[0]["bare_all_reduce_s"]}}


def ring_all_reduce_s(nbytes, ranks, bandwidth, latency):
    """Ring all-reduce: 2(p-1) steps, each one message of n/p bytes: 2(p-1) latency + 2(p-1)/p n / bandwidth."""
    return 2 * (ranks - 1) * latency + 2 * (ranks - 1) / ranks * nbytes / bandwidth


def estimate(compute_ms, buffer_bytes):
    """Weak-scaling efficiency t_compute / (t_compute + t_all-reduce) per link and rank count (blocking
    all-reduces, as this trainer does them: nothing overlaps them)."""
    out = []
    for link, bandwidth, latency in LINKS:
        for p in RANKS:
            comm_ms = 1e3 * sum(ring_all_reduce_s(n, p, bandwidth, latency) for n in buffer_bytes)
            out.append({"link": link, "ranks": p, "all_reduce_ms": comm_ms,
                        "efficiency_pct": 100 * compute_ms / (compute_ms + comm_ms)})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a smoke test: 3 steps, 1 repeat, *_quick.json")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--overrides", default="[]", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=PER_RANK_BATCH, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if args.quick:
        args.steps, args.warmup, args.repeats = 3, 1, 1
    import tempfile

    b = PER_RANK_BATCH
    plan = [(size, ranks, batch) for size in SIZES for ranks, batch in ((1, b), (1, 2 * b), (2, 2 * b))]
    raw = {key: [] for key in plan}
    t0, load = time.time(), [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for i, (size, ranks, batch) in enumerate(plan):
                print(f"[{time.time() - t0:5.0f} s] repeat {repeat + 1}/{args.repeats}: {size}, {ranks} rank(s), "
                      f"global batch {batch}", flush=True)
                raw[(size, ranks, batch)].append(measure(size, SIZES[size], ranks, batch, args,
                                                         os.path.join(tmp, f"{i}.json")))
                load.append(os.getloadavg()[0])
    results = []
    for size in SIZES:
        one_b, one_2b, two_2b = (summarize(raw[(size, r, n)]) for r, n in ((1, b), (1, 2 * b), (2, 2 * b)))
        # dedicated cores: a rank's step = its compute (CPU time) + the bare all-reduce of its two buffers
        comm_ms = sum(two_2b["bare_all_reduce_ms"].values())
        results.append({"model": size, "runs": [one_b, one_2b, two_2b],
                        "weak_efficiency_pct": 100 * one_b["step_ms"] / two_2b["step_ms"],
                        "strong_efficiency_pct": 100 * one_2b["step_ms"] / (2 * two_2b["step_ms"]),
                        # the least disturbed steps (10th percentiles): nearer what an idle machine gives
                        "weak_efficiency_p10_pct": 100 * one_b["step_ms_p10_p90"][0] / two_2b["step_ms_p10_p90"][0],
                        "strong_efficiency_p10_pct": 100 * one_2b["step_ms_p10_p90"][0]
                        / (2 * two_2b["step_ms_p10_p90"][0]),
                        "weak_efficiency_cpu_pct": 100 * one_b["compute_cpu_ms"] / (two_2b["compute_cpu_ms"] + comm_ms),
                        "strong_efficiency_cpu_pct": 100 * one_2b["compute_cpu_ms"]
                        / (2 * (two_2b["compute_cpu_ms"] + comm_ms)),
                        # compute per step at per-rank batch b: 1 rank at b, which communicates nothing
                        "estimate": estimate(one_b["compute_cpu_ms"], two_2b["buffer_bytes"])})
    report = {"created": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu": _cpu(), "steps": args.steps,
              "warmup": args.warmup, "repeats": args.repeats, "per_rank_batch": b, "results": results,
              "links": [list(link) for link in LINKS], "wall_s": time.time() - t0,
              # the 1-minute load average before and after each measurement (other users of the machine)
              "load_average": [round(x, 2) for x in load]}
    print_tables(report)
    name = "scaling_quick.json" if args.quick else "scaling.json"
    path = os.path.join(REPO, "benchmarks", "results", name)
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"\nwritten: {path} ({report['wall_s']:.0f} s)")
    return 0


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        model = "?"
    return f"{model}, {os.cpu_count()} logical CPUs"


def print_tables(report):
    print(f"\n{report['cpu']}; {report['steps']} timed steps x {report['repeats']} repeats; one thread per rank; "
          f"load average {min(report['load_average']):.1f}–{max(report['load_average']):.1f}\n")
    print("| model | ranks | global batch | step ms (p10–p90) | samples/s | compute CPU ms per rank | all-reduce ms "
          "(wait + transfer) | bytes/step | bare all-reduce ms per buffer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in report["results"]:
        for x in r["runs"]:
            bare = ", ".join(f"{int(k):,} B: {v:.3f}" for k, v in x["bare_all_reduce_ms"].items()) or "-"
            comm = (f"{x['all_reduce_ms']:.2f} ({x['wait_ms']:.2f} + {x['transfer_ms']:.2f})" if x["ranks"] > 1
                    else "-")
            print(f"| {r['model']} | {x['ranks']} | {x['batch']} | {x['step_ms']:.1f} ({x['step_ms_p10_p90'][0]:.1f}"
                  f"–{x['step_ms_p10_p90'][1]:.1f}) | {x['samples_per_s']:.0f} | {x['compute_cpu_ms']:.1f} | {comm} | "
                  f"{x['bytes_per_step'] or '-'} | {bare} |")
    print("\nEfficiency at 2 ranks, weak / strong: from median step times (wall clock, with this machine's other "
          "load), from the 10th percentiles (the least disturbed steps), and for dedicated cores (CPU time + bare "
          "all-reduce)")
    print("| model | medians | 10th percentiles | dedicated cores |\n|---|---|---|---|")
    for r in report["results"]:
        print(f"| {r['model']} | {r['weak_efficiency_pct']:.1f}% / {r['strong_efficiency_pct']:.1f}% | "
              f"{r['weak_efficiency_p10_pct']:.1f}% / {r['strong_efficiency_p10_pct']:.1f}% | "
              f"{r['weak_efficiency_cpu_pct']:.1f}% / {r['strong_efficiency_cpu_pct']:.1f}% |")
    print("\nEstimate (ring all-reduce, blocking; weak scaling at per-rank batch "
          f"{report['per_rank_batch']}, compute = 1 rank's CPU ms per step): efficiency (all-reduce ms per step)")
    head = " | ".join(f"{p} ranks" for p in RANKS)
    print(f"| model | link | {head} |\n|---|---|" + "---|" * len(RANKS))
    for r in report["results"]:
        for link, *_ in LINKS:
            cells = [e for e in r["estimate"] if e["link"] == link]
            print(f"| {r['model']} | {link} | "
                  + " | ".join(f"{e['efficiency_pct']:.1f}% ({e['all_reduce_ms']:.2f})" for e in cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
