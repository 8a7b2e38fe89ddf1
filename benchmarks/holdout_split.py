"""Which held-out split gives honest floors for one long series cut into overlapping windows.

    .venv/bin/python benchmarks/holdout_split.py [--rows 20000] [--window 24] [--kinds factors,lorenz96]
        [--blocks 5,20,50] [--num 1000] [--repeats 3] [--protocol paper|fast]

For each kind of built-in signal (28 features): one series of --rows steps, written as a wide CSV and read
back through the file path (`data.window` windows, stride 1, `data.holdout_fraction` 0.1), as a user's file
is. For data.holdout_split random and blocks (each --blocks count), the floors that `gan-sru evaluate`
computes (--protocol, default paper: the discriminative score with --repeats repeats, the predictive MAE) of --num
held-out windows against --num training windows. The reference is what a perfect generator would score:
--num windows of a second, independent series of the same process (another seed; the same scaler). A split
whose floor is far from that reference misleads: below it, the held-out windows share steps with training
(random); above it, the held-out windows are too alike to be a fair sample (a few contiguous blocks).
Prints a table and writes benchmarks/results/holdout_split.json.
"""
import argparse
import json
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def floors(real, other, repeats, protocol, seed=0):
    from gan_sru import metrics

    s = metrics.protocol_settings(protocol, real[0].shape[1])
    d = metrics.discriminative_score(real, other, repeats=repeats, seed=seed, progress=False, **s["discriminative"])
    p = metrics.predictive_score(other, real, seed=seed, progress=False, **s["predictive"])
    return {"discriminative": round(d["mean"], 4), "discriminative_std": round(d["std"], 4),
            "predictive": round(p["mae"], 5)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--window", type=int, default=24)
    parser.add_argument("--kinds", default="factors,lorenz96")
    parser.add_argument("--blocks", default="5,20,50")
    parser.add_argument("--num", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--protocol", choices=("paper", "fast"), default="paper")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    args = parser.parse_args()

    import gan_sru  # noqa: F401, I001  (first, before numpy: it picks OpenBLAS's kernels, see gan_sru/__init__.py)
    import numpy as np
    import pandas as pd

    import gan_sru.models  # noqa: F401  (registers the networks the config names)
    from gan_sru.commands.evaluate import _subset as pick  # evaluate's draw: min(num, size), in order
    from gan_sru.config import load_config
    from gan_sru.data import load_dataset, make_windows
    from gan_sru.data.builtin import make_factors, make_lorenz96

    makers = {"factors": make_factors, "lorenz96": make_lorenz96}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            series = makers[kind](2, args.rows, 28, 0)  # two independent series of one process
            path = os.path.join(tmp, f"{kind}.csv")
            pd.DataFrame(series[0], columns=[f"f{k}" for k in range(28)]).to_csv(path, index=False)
            cfg = load_config(None, ["data.source=file", f"data.path={path}", f"data.window={args.window}"])["data"]
            ds = load_dataset(cfg, 0)  # read and cut once; each split only picks indices
            for how, k in [("random", 0)] + [("blocks", int(b)) for b in args.blocks.split(",")]:
                plan = ds.split_plan(cfg["holdout_fraction"], 0, how, max(k, 1))
                rng = np.random.default_rng(0)
                real = pick([ds.sequences[i] for i in plan.train], args.num, rng)
                held = pick([ds.sequences[i] for i in plan.holdout], args.num, rng)
                row = {"kind": kind, "split": how if how == "random" else f"blocks ({k})", "train": len(plan.train),
                       "held_out": len(plan.holdout), "left_out": plan.left_out,
                       **floors(real, held, args.repeats, args.protocol)}
                if how == "random":  # the reference: an independent series, on the same scale and real windows
                    fresh = [ds.scaler.transform(w).astype(np.float32)
                             for w in make_windows([series[1]], args.window)]
                    ref = {"kind": kind, "split": "independent series (reference)", "train": len(plan.train),
                           "held_out": len(fresh), "left_out": 0,
                           **floors(real, pick(fresh, args.num, rng), args.repeats, args.protocol)}
                    rows.append(ref)
                    print(json.dumps(ref), flush=True)
                rows.append(row)
                print(json.dumps(row), flush=True)
    import platform
    import subprocess

    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((line.split(":", 1)[1].strip() for line in cpu.splitlines() if line.startswith("Model name")),
                 platform.processor())
    print(f"\n{model}; {args.rows} rows, windows of {args.window} (stride 1), held out 0.1; {args.protocol} protocol, "
          f"N = {args.num}, {args.repeats} repeats\n")
    print("| signal | held out | train / held out / left out windows | discriminative floor | predictive floor |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['kind']} | {r['split']} | {r['train']} / {r['held_out']} / {r['left_out']} | "
              f"{r['discriminative']:.4f} ± {r['discriminative_std']:.3f} | {r['predictive']:.5f} |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "holdout_split.json"), "w") as f:
        json.dump({"cpu": model, "args": vars(args), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
