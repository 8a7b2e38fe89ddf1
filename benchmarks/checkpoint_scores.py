"""The paper-protocol discriminative score at every checkpoint of one run: how much it moves along a run, and what
checkpoint selection (train.select) gains.

    .venv/bin/python benchmarks/checkpoint_scores.py NAME CONFIG STEPS [--every K] [--num N] [KEY=VALUE ...]
    .venv/bin/python benchmarks/checkpoint_scores.py --table      # every run so far: table + picture
    e.g. .venv/bin/python benchmarks/checkpoint_scores.py nz28 configs/wide.yaml 3000 model.generator.noise_dim=28

Trains CONFIG with the overrides for STEPS steps (train.py in a subprocess, into RUN_DIR/NAME; selection off, so
the run is the plain one), keeping a checkpoint every K steps (default 250). Then scores each checkpoint from
2K on twice, independently: `first` on N generated sequences (seed 0) against N training ones with 3 classifier
repeats (`gan-sru evaluate --protocol paper`'s settings), `second` on other generated and training sequences
(seed 1) with 2. Selecting by one and reading the other is what selection does to a run without flattering it
(the reported figure is not the one that chose). The second score's sequences are also scored by the
separability groups (`metrics.separability`, seconds instead of minutes), a candidate for a cheaper selection.
Appends one JSON line per run to benchmarks/results/checkpoint_scores.jsonl; `--table` writes
checkpoint_scores.md and .png (each run's scores along its steps). Fixed steps, so rows measured on a loaded
machine compare.
"""
import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_DIR = "/tmp/gan_sru_checkpoint_scores"
RESULTS = os.path.join(REPO, "benchmarks", "results")
JSONL = os.path.join(RESULTS, "checkpoint_scores.jsonl")


def train(name, config, steps, every, sets):
    path = os.path.join(RUN_DIR, name)
    if os.path.exists(os.path.join(path, "checkpoints", f"step_{steps:08d}.npz")):
        return path, None  # trained before: score it again
    args = [sys.executable, os.path.join(REPO, "train.py"), "--config", config, "--no-progress"]
    for s in [f"run_dir={RUN_DIR}", f"name={name}", f"train.steps={steps}", "train.sample_every=1000000",
              f"train.checkpoint_every={every}", "train.keep_checkpoints=100000", "train.select=none", *sets]:
        args += ["--set", s]
    t0 = time.time()
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return path, round(time.time() - t0, 1)


def score_checkpoints(path, every, num, progress=True):
    """[{step, first, first_repeats, second}] for each checkpoint from step 2 x every."""
    sys.path.insert(0, REPO)
    import numpy as np

    import gan_sru.models  # noqa: F401
    from gan_sru import metrics
    from gan_sru.commands.evaluate import _SUBSET_STREAM, _subset
    from gan_sru.sampling import TrainedRun, draw_lengths, generate_cut, training_split

    first_run = TrainedRun(path, "latest")
    train_set, _ = training_split(first_run.cfg)
    settings = metrics.protocol_settings("paper", first_run.num_features)["discriminative"]
    real = [_subset(train_set.sequences, num, np.random.default_rng([s, _SUBSET_STREAM])) for s in (0, 1)]
    rows = []
    for step in first_run.checkpoints:
        if step < 2 * every:
            continue
        run = TrainedRun(path, step)
        scores = []
        for seed, repeats in ((0, 3), (1, 2)):
            fake = generate_cut(run, draw_lengths(train_set.lengths, num, seed), seed)
            scores.append(metrics.discriminative_score(real[seed], fake, repeats=repeats, seed=seed, progress=False,
                                                       **settings))
            if seed == 1:  # the separability groups on the second score's sequences: a cheaper candidate
                t0 = time.perf_counter()
                groups = metrics.separability(real[1], fake, seed=1)
                statistics_seconds = time.perf_counter() - t0
        rows.append({"step": step, "first": round(scores[0]["mean"], 4),
                     "first_repeats": [round(x, 4) for x in scores[0]["scores"]],
                     "second": round(scores[1]["mean"], 4),
                     "statistics": {g: round(v, 4) for g, v in groups.items()},
                     "statistics_seconds": round(statistics_seconds, 1)})
        if progress:
            print(f"step {step}: {rows[-1]['first']:.3f} (repeats {rows[-1]['first_repeats']}), "
                  f"second {rows[-1]['second']:.3f}, statistics max {max(groups.values()):.3f} "
                  f"mean {np.mean(list(groups.values())):.3f} ({statistics_seconds:.1f} s)", flush=True)
    return rows


def summary(rows):
    """The run's figures: the first score's mean past the first third, its range, and selection's pick (by the
    second score) read on the first."""
    late = [r["first"] for r in rows[len(rows) // 3:]] or [r["first"] for r in rows]
    pick = min(rows, key=lambda r: (r["second"], r["step"])) if all(r["second"] is not None for r in rows) else None
    out = {"mean": round(sum(late) / len(late), 4), "min": min(r["first"] for r in rows),
           "max": max(r["first"] for r in rows), "selected_step": pick and pick["step"],
           "selected": pick and pick["first"], "last": rows[-1]["first"]}
    if all(r.get("statistics") for r in rows):  # selection by the separability groups (max, mean), read on first
        for name, agg in (("max", max), ("mean", lambda v: sum(v) / len(v))):
            by = min(rows, key=lambda r: (agg(list(r["statistics"].values())), r["step"]))
            out[f"statistics_{name}_step"], out[f"statistics_{name}"] = by["step"], by["first"]
    return out


def table(runs):
    lines = ["| run | config | overrides | steps | checkpoints | first score: range (mean of the last two thirds) | "
             "last checkpoint | selected by the second score: step, first score | selected by the separability "
             "groups' largest (on the second score's sequences): step, first score |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        s = summary(r["rows"])
        lines.append(f"| {r['name']} | {r['config']} | {' '.join(r['sets']) or '(config)'} | {r['steps']} | "
                     f"{len(r['rows'])} | {s['min']:.3f}-{s['max']:.3f} ({s['mean']:.3f}) | {s['last']:.3f} | "
                     + (f"{s['selected_step']}, {s['selected']:.3f} |" if s["selected"] is not None else "- |")
                     + (f" {s['statistics_max_step']}, {s['statistics_max']:.3f} |" if "statistics_max" in s
                        else " - |"))
    return "\n".join(lines) + "\n"


def write_table():
    sys.path.insert(0, REPO)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from gan_sru.files import atomic_write, atomic_write_text

    with open(JSONL) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    text = table(runs)
    print(text, end="")
    atomic_write_text(os.path.join(RESULTS, "checkpoint_scores.md"),
                      "Paper-protocol discriminative score at every checkpoint (`benchmarks/checkpoint_scores.py`); "
                      "first: N generated vs N training sequences, 3 repeats; second: other sequences, 2 repeats.\n\n"
                      + text)
    configs = sorted({r["config"] for r in runs})
    fig = Figure(figsize=(6 * len(configs), 4.5), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(configs), squeeze=False)[0]
    for ax, config in zip(axes, configs):
        for r in runs:
            if r["config"] == config:
                ax.plot([x["step"] for x in r["rows"]], [x["first"] for x in r["rows"]], marker="o", markersize=3,
                        label=r["name"])
        ax.set_title(config, fontsize=10)
        ax.set_xlabel("step")
        ax.set_ylabel("discriminative score (paper protocol)")
        ax.set_ylim(0, 0.52)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    atomic_write(os.path.join(RESULTS, "checkpoint_scores.png"), lambda f: fig.savefig(f, format="png"))


def main():
    if sys.argv[1:] == ["--table"]:
        return write_table()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("config")
    parser.add_argument("steps", type=int)
    parser.add_argument("sets", nargs="*", metavar="KEY=VALUE")
    parser.add_argument("--every", type=int, default=250, help="steps between checkpoints (default 250)")
    parser.add_argument("--num", type=int, default=1000, help="sequences of each set per score (default 1000)")
    args = parser.parse_intermixed_args()
    path, train_s = train(args.name, args.config, args.steps, args.every, args.sets)
    rows = score_checkpoints(path, args.every, args.num)
    entry = {"name": args.name, "config": args.config, "sets": args.sets, "steps": args.steps, "every": args.every,
             "num": args.num, "train_seconds": train_s, "rows": rows, **summary(rows)}
    with open(JSONL, "a") as f:
        f.write(json.dumps(entry) + "\n")
    print(json.dumps({k: v for k, v in entry.items() if k != "rows"}))


if __name__ == "__main__":
    main()
