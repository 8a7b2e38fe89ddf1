"""Does `gan-sru tune` beat the default recipe at the same total budget?

For each built-in set: one run of the set's config trained for --total wall time (the default recipe), and
a study of --trials trials of --total / --trials each (gan_sru.tuning, one worker; the trials' time is the
whole search budget, scoring included in neither). Both results are scored the same way: TimeGAN's
discriminative score under the paper protocol of the run's selected (else newest) checkpoint against the
config's held-out split, which the search never saw (it chose on its validation split).

    python benchmarks/tune_vs_default.py --sets sines,lorenz96 --total 3m --trials 3 \
        --out benchmarks/results/tune_vs_default.json

Writes the JSON (per set: the default's score, the search's best trial, its validation and held-out scores,
every trial's state and value, seconds) and prints a table.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIGS = {"sines": "configs/sines.yaml", "lorenz96": "configs/lorenz96.yaml", "wide": "configs/wide.yaml",
           "sines_varlen": "configs/sines_varlen.yaml"}


def heldout_score(run_path, repeats, seed=0):
    """Paper-protocol discriminative score of the run's selected checkpoint against its config's held-out split."""
    from gan_sru import metrics
    from gan_sru.data import training_data
    from gan_sru.sampling import TrainedRun, draw_lengths, generate_cut

    run = TrainedRun(run_path, None)
    real = list(training_data(run.cfg).holdout.sequences)
    fake = generate_cut(run, draw_lengths(np.array([len(s) for s in real]), len(real), seed), seed, None)
    settings = metrics.protocol_settings("paper", run.num_features)["discriminative"]
    out = metrics.discriminative_score(real, fake, repeats=repeats, seed=seed, progress=False, **settings)
    return {"mean": float(out["mean"]), "std": float(out["std"]), "num_holdout": len(real), "step": run.step}


def train_default(config, overrides, seconds, run_dir):
    import io

    import nnabla as nn

    from gan_sru.config import load_config
    from gan_sru.train import Trainer

    cfg = load_config(config, overrides=[*overrides, f"run_dir={run_dir}", "name=default", "train.steps=1000000"])
    nn.clear_parameters()
    t0 = time.perf_counter()
    trainer = Trainer(cfg, progress=False, abort_fn=lambda: time.perf_counter() - t0 > seconds, out=io.StringIO())
    trainer.train()
    return os.path.join(run_dir, "default"), trainer.run.list_checkpoints()[-1][0]


def main(argv=None):
    from gan_sru.tuning import Study, parse_duration

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default="sines,lorenz96")
    p.add_argument("--total", default="3m", help="wall time of the default run and of the whole search")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3, help="repeats of the held-out classifier")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--out", default="benchmarks/results/tune_vs_default.json")
    args = p.parse_args(argv)
    total = parse_duration(args.total)
    results = {"total_s": total, "trials": args.trials, "overrides": args.overrides, "sets": {}}
    with tempfile.TemporaryDirectory(prefix="tune_vs_default_") as tmp:
        for name in args.sets.split(","):
            config = CONFIGS[name]
            folder = os.path.join(tmp, name)
            t0 = time.perf_counter()
            default_run, default_steps = train_default(config, args.overrides, total, folder)
            default = {**heldout_score(default_run, args.repeats), "steps": default_steps}
            study = Study(config, [*args.overrides, f"run_dir={folder}"], study=f"bench-{name}",
                          storage=os.path.join(folder, "study.journal"), budget_s=total / args.trials,
                          trials=args.trials, pruner="none", seed=0)
            result = study.work(log=lambda *a: None)
            best = result.best_trial
            searched = {**heldout_score(best.user_attrs["run"], args.repeats), "steps": best.user_attrs["steps"],
                        "trial": best.number, "validation": best.value, "params": best.params}
            results["sets"][name] = {
                "default": default, "search": searched,
                "trials": [{"number": t.number, "state": t.state.name, "value": t.value,
                            "steps": t.user_attrs.get("steps")} for t in result.trials],
                "seconds": round(time.perf_counter() - t0, 1)}
            print(f"{name}: default {default['mean']:.3f} ({default['steps']} steps), search {searched['mean']:.3f} "
                  f"(trial {best.number}, {searched['steps']} steps, validation {best.value:.3f})", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
