"""Where the predictive score's gap sits: TimeGAN's regressor trained on generated and on held-out sequences,
its error on real data at each predicted step, over several seeds of the regressor.

    .venv/bin/python benchmarks/predictive_steps.py RUN [RUN ...] [--checkpoint STEP] [--num N] [--seeds 3]

For each run folder (its selected checkpoint, else the newest): N generated sequences (seed 0), N training
sequences (`real`) and up to N held-out ones, in the [0, 1] training scale, as `gan-sru evaluate` draws them.
The paper protocol's predictive regressor (a GRU reads every feature but the last up to step t and predicts
the last at t + 1) is trained on the generated and on the held-out sequences with --seeds seeds each and
tested on `real`: the MAE of each predicted step, averaged over the seeds, and the generated one above the
held-out one (%), per step and overall, with the seeds' spread (how much of a gap the regressor's own seed
makes). The profile describes; it does not locate a cause: samples wrong in their first steps alone train a
regressor that is worse at every step (tests/unit/test_predictive_steps_benchmark.py). Prints a table and writes
benchmarks/results/predictive_steps.json (one entry per run and step, replaced when measured again).
"""
import os

import numpy as np
import trained_runs

OUT = os.path.join(trained_runs.REPO, "benchmarks", "results", "predictive_steps.json")


def per_step(train, real, seeds, iterations=None):
    """(seeds, L-1) per-step MAEs and (seeds,) overall MAEs of the paper regressor trained on `train` (its
    iterations, unless given)."""
    from gan_sru import metrics

    settings = metrics.protocol_settings("paper", real[0].shape[1])["predictive"]
    settings["iterations"] = iterations or settings["iterations"]
    out = [metrics.predictive_score(train, real, seed=s, progress=False, per_step=True, **settings)
           for s in range(seeds)]
    return np.array([o["mae_per_step"] for o in out]), np.array([o["mae"] for o in out])


def measure(real, holdout, fake, seeds, iterations=None):
    """The per-step table and the overall gap of generated against held-out training sets, tested on real."""
    steps_f, all_f = per_step(fake, real, seeds, iterations)
    steps_h, all_h = per_step(holdout, real, seeds, iterations)
    gap = 100.0 * (all_f / all_h - 1.0)  # seed by seed: the same regressor seed on both sets
    return {"generated MAE per step": steps_f.mean(0).tolist(), "held-out MAE per step": steps_h.mean(0).tolist(),
            "generated above held-out per step (%)": (100.0 * (steps_f.mean(0) / steps_h.mean(0) - 1.0)).tolist(),
            "generated MAE": float(all_f.mean()), "held-out MAE": float(all_h.mean()),
            "generated above held-out (%)": float(gap.mean()), "gap spread over seeds (%)": float(gap.std()),
            "gap per seed (%)": gap.tolist(), "seeds": seeds}


def main():
    args = trained_runs.parse_args(__doc__, lambda p: p.add_argument("--seeds", type=int, default=3,
                                                                     help="seeds of the regressor"))
    from gan_sru.commands.evaluate import _subset  # evaluate's draw: min(num, size), in order

    results = trained_runs.load_results(OUT)
    for name, run, train, holdout in trained_runs.each_run(args):
        rng = np.random.default_rng(0)
        real, held = (_subset(s, args.num, rng) for s in (train.sequences, holdout.sequences))
        fake = list(trained_runs.generated(run, args.num, int(train.lengths.max())).astype(np.float32))
        r = measure(real, held, fake, args.seeds)
        key = f"{name}, step {run.step}"
        results[key] = r
        print(f"\n{key}: generated {r['generated MAE']:.5f}, held-out {r['held-out MAE']:.5f}: "
              f"{r['generated above held-out (%)']:+.2f}% (seeds: "
              + ", ".join(f"{g:+.2f}" for g in r["gap per seed (%)"]) + ")")
        print("| predicted step | generated MAE | held-out MAE | generated above (%) |")
        print("|---|---|---|---|")
        for t, (f, h, g) in enumerate(zip(r["generated MAE per step"], r["held-out MAE per step"],
                                          r["generated above held-out per step (%)"])):
            print(f"| {t + 1} | {f:.5f} | {h:.5f} | {g:+.1f} |")
    trained_runs.save_results(OUT, results)


if __name__ == "__main__":
    main()
