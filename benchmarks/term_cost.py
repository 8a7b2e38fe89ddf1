"""What a G term costs: one whole training step's graphs with the config as committed and with overrides.

    .venv/bin/python benchmarks/term_cost.py [--configs wide,long64,long128,long256] [--repeats 7]
        [--set KEY=VALUE ...]

For each config (its data shape: 28 features at its length and batch, sizes from the size rules), one
training step's graphs (`StepGraph`, detached strategy as in training: G forward, D loss forward and backward,
G loss forward and backward, G backward; no solver update) built as the config stands and with the overrides
(default: `train.predictor_loss=1`), the real windows' references made from the
built-in data. The two are timed alternately, one repeat of each in turn, so that a load on the machine falls
on both; medians. Writes benchmarks/results/term_cost.json and prints the table with the CPU's name.
"""
import argparse
import json
import os
import sys

from moment_terms import REPO, alternate, cpu_name, references, step_of

sys.path.insert(0, REPO)
DEFAULT_SETS = ["train.predictor_loss=1"]


def step_run(cfg, x, m, rng):
    """One step's graphs of `cfg` for the real batch shape of x, as a callable."""
    from gan_sru.train.graphs import StepGraph

    N, L, C = x.shape
    B = cfg["train"]["batch_size"]
    g = StepGraph(cfg, L, B, C, L, "detached", **references(cfg, x, m))
    for v in g.noise.values():
        v.d = rng.standard_normal(v.shape)
    g.mask.d = 1.0
    g.real.d = x[:B].transpose(1, 0, 2)
    if g.d_perturb is not None:
        g.d_perturb.d = rng.standard_normal(g.d_perturb.shape)
    return step_of(g)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="wide,long64,long128,long256")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--set", action="append", default=None, metavar="KEY=VALUE")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    args = parser.parse_args()
    sets = args.set or DEFAULT_SETS

    import gan_sru  # noqa: F401, I001  (first, before numpy: it picks OpenBLAS's kernels, see gan_sru/__init__.py)
    import nnabla as nn
    import numpy as np

    import gan_sru.models  # noqa: F401  (fills the registries)
    from gan_sru.config import load_config
    from gan_sru.data import training_data
    from gan_sru.sizes import apply_size_rules

    rng = np.random.default_rng(0)
    rows = []
    print(f"CPU: {cpu_name()}; medians of {args.repeats}, the two alternately; with: {' '.join(sets)}")
    print(f"{'config':<8} {'L x B x C':<13} {'as committed ms':>15} {'with ms':>8} {'ratio':>6}")
    for name in args.configs.split(","):
        path = os.path.join(REPO, "configs", f"{name}.yaml")
        base = load_config(path, ["data.num_sequences=1000"])
        data = training_data(base)
        x = np.stack(data.train.sequences).astype(np.float64)
        N, L, C = x.shape
        m = np.ones((N, L))
        runs = {}
        for key, extra in (("base", []), ("with", sets)):
            cfg = apply_size_rules(load_config(path, ["data.num_sequences=1000"] + list(extra)), C, L)
            with nn.parameter_scope(key):
                runs[key] = step_run(cfg, x, m, rng)
        ms = alternate(runs, args.repeats)
        nn.clear_parameters()
        B = base["train"]["batch_size"]
        rows.append(dict(config=name, length=L, batch=B, features=C, base_ms=round(ms["base"], 1),
                         with_ms=round(ms["with"], 1), ratio=round(ms["with"] / ms["base"], 3)))
        print(f"{name:<8} {f'{L} x {B} x {C}':<13} {ms['base']:>15.1f} {ms['with']:>8.1f} "
              f"{ms['with'] / ms['base']:>6.2f}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "term_cost.json"), "w") as f:
        json.dump({"cpu": cpu_name(), "repeats": args.repeats, "sets": sets,
                   "load": [round(v, 2) for v in os.getloadavg()], "rows": rows}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
