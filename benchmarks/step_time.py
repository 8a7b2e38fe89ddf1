"""A training step's time in two or more checkouts of this repository, or under two or more sets of config
overrides, side by side: what a code change or an option saves.

    .venv/bin/python benchmarks/step_time.py --trees OLD_CHECKOUT,. [--configs wide,sines,PATH.yaml] [--recipe]
        [--steps 40] [--rounds 3] [--set KEY=VALUE ...]
    .venv/bin/python benchmarks/step_time.py --trees . --variant "" --variant data.seq_len=64 \
        --variant data.seq_len=64,train.batch_size=64

Each (tree, variant) pair is one contender, the first the baseline; a variant is comma-separated KEY=VALUE
overrides on top of --set ("" for none).

For each config, each tree trains `--steps` steps of `GanSteps` (solver updates, the batch and noise drawing
included; after 5 warm-up steps) in a process of its own, started with that tree first on PYTHONPATH, so the
process runs that tree's gan_sru (its networks included). The trees take turns, `--rounds` times, so that a load on
the machine falls on each; the figure is the median step over all its rounds. The data is the config's own
(`data.num_sequences` capped at 2000 to keep the start short, without --recipe); --recipe fills what the config
leaves unset with the recipe's choices for the training data, as `gan-sru train` does. Make a checkout of an
older commit with `git worktree add /tmp/old COMMIT`. Writes benchmarks/results/step_time.json and prints the
table with the CPU's name and each tree's commit.
"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the child: times the steps of one config in the tree it was started in
CHILD = r"""
import json, sys, time
import gan_sru  # noqa: F401  (first, before numpy: it picks OpenBLAS's kernels)
import numpy as np
import gan_sru.models  # noqa: F401
from gan_sru.config import load_config
from gan_sru.data import training_data
from gan_sru.train import GanSteps
config, steps, sets, recipe = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4] == "recipe"
cfg = load_config(config, ([] if recipe else ["data.num_sequences=2000"]) + sets)
data = training_data(cfg)
chosen = []
if recipe:  # the config the trainer runs: the recipe's choices from the training data fill what is unset
    from gan_sru.recipe import apply_recipe
    cfg, _, choices = apply_recipe(cfg, data.train.sequences)
    chosen = sorted(choices)
    data = training_data(cfg)
gan = GanSteps(cfg, data.train, data.spec)
for i in range(5):
    gan.step(i)
times = []
for i in range(5, 5 + steps):
    t0 = time.perf_counter()
    gan.step(i)
    times.append(time.perf_counter() - t0)
print("STEP_TIMES " + json.dumps({"module": gan_sru.__file__, "seconds": times, "recipe": chosen}))
"""


def cpu_name():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "?")


def commit_of(tree):
    out = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", tree, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return (out.stdout.strip() or "?") + (" (with uncommitted changes)" if dirty else "")


def time_tree(tree, config, steps, sets, recipe=False):
    """(the step times (seconds) of `steps` steps of `config` trained with `tree`'s code, the keys the recipe set):
    recipe=True applies the recipe's choices for the config's data, as `gan-sru train` makes them."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.run([sys.executable, "-c", CHILD, config, str(steps), json.dumps(sets),
                           "recipe" if recipe else "config"], cwd=tree, env=env, capture_output=True, text=True)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("STEP_TIMES ")), None)
    if proc.returncode != 0 or line is None:
        raise SystemExit(f"{tree}: training {config} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    result = json.loads(line.split(" ", 1)[1])
    expected = os.path.join(os.path.realpath(tree), "gan_sru", "__init__.py")
    if os.path.realpath(result["module"]) != expected:
        raise SystemExit(f"{tree}: the child imported {result['module']}, not {expected}")
    return result["seconds"], result.get("recipe", [])


def main():
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", required=True, help="comma-separated checkouts of this repository (the first "
                                                        "is the baseline)")
    parser.add_argument("--variant", action="append", default=None, metavar="KEY=VALUE[,KEY=VALUE...]",
                        help="a set of overrides to compare (repeat it; \"\" for none); default: one, empty")
    parser.add_argument("--configs", default="wide", help="comma-separated names under each tree's configs/, or "
                                                          "paths of YAML files (the same file for every tree)")
    parser.add_argument("--recipe", action="store_true", help="apply the recipe to each config, as `gan-sru train` "
                                                              "does (the step a user's run trains)")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    args = parser.parse_args()
    trees = [os.path.abspath(t) for t in args.trees.split(",") if t.strip()]
    for tree in trees:
        if not os.path.isfile(os.path.join(tree, "gan_sru", "__init__.py")):
            raise SystemExit(f"--trees: {tree} is not a checkout of this repository (no gan_sru/__init__.py)")
    variants = [[kv.strip() for kv in v.split(",") if kv.strip()] for v in (args.variant or [""])]
    pairs = [(t, tuple(v)) for t in trees for v in variants]
    if len(pairs) < 2:
        raise SystemExit("--trees / --variant: give at least two checkouts or two variants, the baseline first")
    commits = {t: commit_of(t) for t in trees}
    print(f"CPU: {cpu_name()}; {args.steps} steps x {args.rounds} rounds per contender, in turn; medians")
    rows = []
    for name in args.configs.split(","):
        seconds, chosen = {p: [] for p in pairs}, {}
        for r in range(args.rounds):
            for t, v in pairs:
                config = name if name.endswith((".yaml", ".yml")) else os.path.join(t, "configs", f"{name}.yaml")
                times, chosen[t, v] = time_tree(t, config, args.steps, args.set + list(v), args.recipe)
                seconds[t, v] += times
                print(f"  {name} round {r + 1}: {t} {','.join(v)} {1e3 * np.median(seconds[t, v]):.1f} ms",
                      flush=True)
        base = float(np.median(seconds[pairs[0]]))
        for t, v in pairs:
            ms = float(np.median(seconds[t, v]))
            rows.append(dict(config=name, tree=t, commit=commits[t], sets=list(v), median_ms=round(1e3 * ms, 1),
                             p10_ms=round(1e3 * float(np.percentile(seconds[t, v], 10)), 1),
                             p90_ms=round(1e3 * float(np.percentile(seconds[t, v], 90)), 1),
                             speedup=round(base / ms, 3), recipe=chosen[t, v]))
    print(f"{'config':<8} {'commit':<34} {'median ms':>9} {'p10-p90 ms':>13} {'speed-up':>8}  overrides")
    for row in rows:
        print(f"{row['config']:<8} {row['commit']:<34} {row['median_ms']:>9.1f} "
              f"{row['p10_ms']:>6.1f}-{row['p90_ms']:<6.1f} {row['speedup']:>8.2f}  {','.join(row['sets']) or '-'}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "step_time.json"), "w") as f:
        json.dump({"cpu": cpu_name(), "steps": args.steps, "rounds": args.rounds, "sets": args.set,
                   "recipe": args.recipe, "load": [round(v, 2) for v in os.getloadavg()], "rows": rows}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
