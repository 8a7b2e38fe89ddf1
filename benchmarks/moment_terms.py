"""What the fused moment terms save: G's moment terms and a whole training step, fused against plain nnabla ops.

    .venv/bin/python benchmarks/moment_terms.py [--configs wide,long64,long128,long256] [--repeats 5]

For each config (its data shape: 28 features at its length and batch, sizes from the size rules): the
forward and backward time of `sequence_moment_loss` and `moment_loss` with impl "ref" (plain nnabla ops, what
training ran before) and "auto" (gan_sru/ops/moments.py, fused on the host), and the time of one whole training
step's graphs (`StepGraph` with the config's terms: G forward, D loss forward and backward, G loss forward and
backward, G backward; no solver update) built each way. The two ways are timed alternately, one repeat of each
in turn, so that a load on the machine falls on both; medians. Writes benchmarks/results/moment_terms.json and
prints the table with the CPU's name.
"""
import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
IMPLS = ("ref", "auto")


def cpu_name():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "?")


def alternate(runs, repeats):
    """runs {name: fn}: each called once as a warm-up, then `repeats` rounds of one call each; median ms."""
    import numpy as np

    times = {k: [] for k in runs}
    for fn in runs.values():
        fn()
    for _ in range(repeats):
        for k, fn in runs.items():
            t = time.perf_counter()
            fn()
            times[k].append((time.perf_counter() - t) * 1e3)
    return {k: float(np.median(v)) for k, v in times.items()}


def term_runs(fn, L, B, C, rng):
    import nnabla as nn
    import numpy as np

    f = nn.Variable.from_numpy_array(rng.random((L, B, C)).astype(np.float32), need_grad=True)
    r = nn.Variable.from_numpy_array(rng.random((L, B, C)).astype(np.float32))
    m = nn.Variable.from_numpy_array(np.ones((L, B), np.float32))
    runs = {}
    for impl in IMPLS:
        loss = fn(f, r, m, impl=impl)

        def run(loss=loss):
            loss.forward(clear_no_need_grad=True)
            loss.backward(clear_buffer=True)
        runs[impl] = run
    return runs


def references(cfg, x, m):
    """StepGraph's keyword arguments for the terms `cfg` turns on, from real x (N, L, C), mask m (N, L)."""
    t = cfg["train"]
    out = {}
    if t["sequence_whitened_loss"] > 0:
        from gan_sru.ops import whitened

        out["reference"] = whitened.reference(x, m[:, :, None], seed=cfg["seed"])
    if t["window_covariance_loss"] > 0:
        from gan_sru.ops import covariance

        out["windows"] = covariance.reference(x, m, t["window_covariance_lags"],
                                              whitening=t["window_covariance_whitening"])
    if t["predictor_loss"] > 0:
        from gan_sru.ops import predictor

        out["predictor"] = predictor.reference(x, m, t["predictor_lags"])
    if t["step_profile_loss"] > 0:
        from gan_sru.ops import step_profile

        out["profile"] = step_profile.reference(x, m)
    return out


def step_runs(cfg, L, B, C, rng):
    """One step's graphs (detached strategy, as training) for each impl, parameters shared; the references of the
    terms that need real sequences from random ones (the time does not depend on the data)."""
    import nnabla as nn
    import numpy as np

    from gan_sru.train.graphs import StepGraph

    x = rng.random((max(4 * B, 512), L, C))
    refs = references(cfg, x, np.ones(x.shape[:2]))
    runs = {}
    for impl in IMPLS:
        g = StepGraph(cfg, L, B, C, L, "detached", moment_impl=impl, **refs)
        for v in g.noise.values():
            v.d = rng.standard_normal(v.shape)
        g.mask.d = 1.0
        g.real.d = rng.random(g.real.shape)

        runs[impl] = step_of(g)
    nn.clear_parameters()
    return runs


def step_of(g):
    """One training step's graph work on the StepGraph g, detached as in training (no solver update)."""
    def run():
        g.fake.forward()
        g.d_loss.forward(clear_no_need_grad=True)
        g.d_loss.backward(clear_buffer=True)
        g.g_loss.forward(clear_no_need_grad=True)
        g.g_loss.backward(clear_buffer=True)
        g.fake.backward(grad=None)
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="wide,long64,long128,long256")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    args = parser.parse_args()

    import gan_sru  # noqa: F401, I001  (first, before numpy: it picks OpenBLAS's kernels, see gan_sru/__init__.py)
    import numpy as np

    import gan_sru.models  # noqa: F401  (fills the registries)
    from gan_sru.config import load_config
    from gan_sru.sizes import apply_size_rules
    from gan_sru.train.losses import moment_loss, sequence_moment_loss

    rng = np.random.default_rng(0)
    rows = []
    print(f"CPU: {cpu_name()}; medians of {args.repeats}, the two ways alternately")
    print(f"{'config':<8} {'L x B x C':<13} {'what':<22} {'plain ops ms':>12} {'fused ms':>9} {'ratio':>6}")
    for name in args.configs.split(","):
        cfg = load_config(os.path.join(REPO, "configs", f"{name}.yaml"), [])
        L, B, C = cfg["data"]["seq_len"], cfg["train"]["batch_size"], cfg["data"]["num_features"]
        cfg = apply_size_rules(cfg, C, L)
        for what, runs in (("sequence_moment_loss", term_runs(sequence_moment_loss, L, B, C, rng)),
                           ("moment_loss", term_runs(moment_loss, L, B, C, rng)),
                           ("training step", step_runs(cfg, L, B, C, rng))):
            ms = alternate(runs, args.repeats)
            rows.append(dict(config=name, length=L, batch=B, features=C, what=what, ref_ms=round(ms["ref"], 1),
                             fused_ms=round(ms["auto"], 1), ratio=round(ms["ref"] / ms["auto"], 2)))
            print(f"{name:<8} {f'{L} x {B} x {C}':<13} {what:<22} {ms['ref']:>12.1f} {ms['auto']:>9.1f} "
                  f"{ms['ref'] / ms['auto']:>6.2f}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "moment_terms.json"), "w") as f:
        json.dump({"cpu": cpu_name(), "repeats": args.repeats, "load": [round(x, 2) for x in os.getloadavg()],
                   "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
