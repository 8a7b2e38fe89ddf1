"""Sample quality against training time: train the default config on CPU, score checkpoints at time marks.

    .venv/bin/python benchmarks/scores_over_time.py [--minutes 5,10,15] [--num 1000] [--repeats 5]
    .venv/bin/python benchmarks/scores_over_time.py --quick          # smoke test: 0.5 and 1 minute, small sets

Trains configs/sines.yaml (--config, --set) in this process with the project's Trainer on the CPU context
into RUN_DIR/NAME (default runs/scores_over_time; --quick: runs/scores_over_time_quick). Training time is
the wall-clock time since the first step began, less the time spent writing the extra checkpoints and
pictures at the marks; when it crosses each mark a checkpoint of that step is saved (the Trainer's own
periodic checkpoints and pictures are switched off), and training stops at the last mark. The marks'
steps are kept in RUN/marks.json, so `--evaluate-only` can score an existing benchmark run again.

Each mark's checkpoint is then scored by gan_sru.commands.evaluate.evaluate_run (into RUN/evaluation/minute_M/,
with report.md and pictures); the held-out-real floor does not depend on the checkpoint and is computed
once. Prints a table next to the floor and the targets (discriminative <= 0.05, predictive <= 0.10), and
writes benchmarks/results/scores_over_time.json and .png (--quick: scores_over_time_quick.*).
"""
import argparse
import json
import os
import platform
import shutil
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

TARGETS = {"discriminative": 0.05, "predictive": 0.10}
QUICK = {"minutes": "0.5,1", "num": 200, "repeats": 2, "name": "scores_over_time_quick",
         "stem": "scores_over_time_quick"}


class TimeMarks:
    """Observes a Trainer through its callbacks: at the first step whose training time reaches each mark it
    saves a checkpoint and a sample picture; after the last mark it asks the trainer to stop. Training time
    counts from the start of `train()` (the set-up's few seconds included) and leaves out the time spent
    here writing. `marks` collects dicts(minutes, step, train_seconds, select_seconds: checkpoint selection's scoring
    inside train_seconds)."""

    def __init__(self, marks_s, progress):
        from tqdm import tqdm

        self.marks_s, self.marks, self._paused = marks_s, [], 0.0
        self._t0 = time.perf_counter()
        self._bar = tqdm(total=round(marks_s[-1]), unit="s", desc="training time", disable=not progress,
                         dynamic_ncols=True)

    def on_step(self, trainer, step, d_loss, g_loss):
        elapsed = time.perf_counter() - self._t0 - self._paused
        self._bar.update(min(round(elapsed), self._bar.total) - self._bar.n)
        self._bar.set_postfix(step=step, refresh=False)
        while len(self.marks) < len(self.marks_s) and elapsed >= self.marks_s[len(self.marks)]:
            t = time.perf_counter()
            scoring = trainer.selection.seconds  # checkpoint selection's scoring so far, all inside elapsed
            trainer.save(step, scored=True)  # the parameters after `step` steps (with train.select, scored)
            trainer.write_samples(step)
            self.marks.append({"minutes": self.marks_s[len(self.marks)] / 60, "step": step,
                               "train_seconds": round(elapsed, 2), "select_seconds": round(scoring, 1)})
            self._paused += time.perf_counter() - t

    def done(self):
        if len(self.marks) == len(self.marks_s):
            self._bar.close()
            return True
        return False


def train(cfg, minutes, progress):
    """Train until the last mark; returns the marks (minutes, step, train_seconds)."""
    from gan_sru.train import Trainer

    marks = TimeMarks([m * 60 for m in minutes], progress)
    trainer = Trainer(cfg, progress=False, step_fn=marks.on_step, abort_fn=marks.done)
    trainer.train()
    if not trainer.aborted:
        raise RuntimeError(f"training ended at train.steps={cfg['train']['steps']} before the last time mark")
    return marks.marks


def parse_minutes(text):
    try:
        minutes = [float(m) for m in text.split(",") if m.strip()]
    except ValueError:
        raise SystemExit(f"--minutes {text!r}: expected comma-separated numbers, e.g. 5,10,15") from None
    if not minutes or any(m <= 0 for m in minutes) or minutes != sorted(set(minutes)):
        raise SystemExit(f"--minutes {text!r}: expected increasing positive numbers, e.g. 5,10,15")
    return minutes


def format_table(rows, floor):
    """Plain-text table: one row per mark, then the floor and the targets."""
    from gan_sru.commands.evaluate_report import format_score

    head = f"{'training time, step':<24} {'discriminative':<18} {'predictive MAE (TimeGAN scale)':<34} {'MMD²':<10}"
    lines = [head, "-" * len(head)]

    def cells(scores):
        return (f"{format_score('discriminative', scores['discriminative']):<18} "
                f"{format_score('predictive', scores['predictive']):<34} "
                f"{format_score('mmd2', scores['mmd2']):<10}")

    for r in rows:
        label = f"{r['minutes']:g} min, step {r['step']}"
        lines.append(f"{label:<24} {cells(r['scores'])}")
    if floor is not None:
        lines.append(f"{'floor (held-out real)':<24} {cells(floor)}")
    lines.append(f"{'target':<24} {'<= %.2f' % TARGETS['discriminative']:<18} "
                 f"{'(TimeGAN scale) <= %.2f' % TARGETS['predictive']:<34} {'-':<10}")
    return "\n".join(lines)


def _predictive(scores):
    """The MAE that the target compares with: in TimeGAN's scale for sines (see gan_sru/evaluate.py)."""
    if not scores:
        return float("nan")
    return scores.get("mae_timegan_scale", scores["mae"])


def write_plot(rows, floor, path, title):
    """Score against training minutes, one panel per score, with the floor (dashed) and target (dotted)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from gan_sru.files import atomic_write

    fig = Figure(figsize=(13, 4), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 3)
    minutes = [r["minutes"] for r in rows]
    series = {
        "discriminative": ([r["scores"]["discriminative"]["mean"] for r in rows],
                           [r["scores"]["discriminative"]["std"] for r in rows],
                           floor and floor["discriminative"]["mean"]),
        "predictive": ([_predictive(r["scores"]["predictive"]) for r in rows], None,
                       floor and floor["predictive"] and _predictive(floor["predictive"])),
        "mmd2": ([r["scores"]["mmd2"] for r in rows], None, floor and floor["mmd2"]),
    }
    scale = " (TimeGAN scale)" if rows and "mae_timegan_scale" in (rows[0]["scores"]["predictive"] or {}) else ""
    labels = {"discriminative": "discriminative score (mean ± std)",
              "predictive": f"predictive score (TSTR MAE){scale}", "mmd2": "MMD² (RBF)"}
    for ax, (name, (values, errors, floor_value)) in zip(axes, series.items()):
        ax.errorbar(minutes, values, yerr=errors, marker="o", capsize=4, color="tab:orange", label="generated")
        if floor_value is not None:
            ax.axhline(floor_value, color="tab:blue", linestyle="--", label="floor (held-out real)")
        if name in TARGETS:
            ax.axhline(TARGETS[name], color="tab:green", linestyle=":", label=f"target ≤ {TARGETS[name]:.2f}")
        ax.set_title(labels[name])
        ax.set_xlabel("training minutes (CPU)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    return atomic_write(path, lambda f: fig.savefig(f, format="png"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=os.path.join(REPO, "configs", "sines.yaml"))
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="config override, e.g. --set train.batch_size=64 (repeatable)")
    parser.add_argument("--minutes", default=None, help="training-time marks in minutes (default: 5,10,15)")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke test: --minutes {QUICK['minutes']}, --num {QUICK['num']}, "
                             f"--repeats {QUICK['repeats']}, run {QUICK['name']}, results {QUICK['stem']}.*")
    parser.add_argument("--num", type=int, default=None, help="sequences per evaluation (default: 1000)")
    parser.add_argument("--repeats", type=int, default=None, help="discriminative-score repeats (default: 5)")
    parser.add_argument("--seed", type=int, default=0, help="evaluation seed (default: 0)")
    parser.add_argument("--run-dir", default=os.path.join(REPO, "runs"), help="parent of the benchmark run folder")
    parser.add_argument("--name", default=None, help="benchmark run name (default: scores_over_time)")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--overwrite", action="store_true", help="delete an existing benchmark run folder first")
    parser.add_argument("--evaluate-only", action="store_true",
                        help="score the checkpoints of an existing benchmark run (its marks.json) again")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()

    from gan_sru import GanSruError
    from gan_sru.commands.evaluate import evaluate_run
    from gan_sru.config import load_config
    from gan_sru.context import set_context

    quick = QUICK if args.quick else {}
    minutes = parse_minutes(args.minutes or quick.get("minutes", "5,10,15"))
    num = args.num or quick.get("num", 1000)
    repeats = args.repeats or quick.get("repeats", 5)
    name = args.name or quick.get("name", "scores_over_time")
    stem = quick.get("stem", "scores_over_time")
    progress = not args.no_progress
    big = 10 ** 9  # the time marks stop training; the Trainer's own checkpoints and pictures are off
    overrides = [f"name={name}", f"run_dir={args.run_dir}", f"train.steps={big}", f"train.checkpoint_every={big}",
                 f"train.sample_every={big}", f"train.keep_checkpoints={len(minutes) + 1}"] + args.overrides
    try:
        cfg = load_config(args.config, overrides)
        set_context(argparse.Namespace(context="cpu", device_id="0", type_config="float"))
        run_path = os.path.join(cfg["run_dir"], cfg["name"])
        marks_path = os.path.join(run_path, "marks.json")
        t0 = time.perf_counter()
        if args.evaluate_only:
            with open(marks_path) as f:
                marks = json.load(f)["marks"]
        else:
            if os.path.exists(run_path):
                if not args.overwrite:
                    raise SystemExit(f"{run_path} exists; pass --overwrite to train it again from scratch, "
                                     "or --evaluate-only to score its checkpoints again")
                shutil.rmtree(run_path)
            print(f"training {args.config} on CPU for {minutes[-1]:g} min into {run_path} "
                  f"(checkpoints at {', '.join(f'{m:g}' for m in minutes)} min)", flush=True)
            marks = train(cfg, minutes, progress)
            with open(marks_path, "w") as f:
                json.dump({"marks": marks, "config": args.config, "overrides": args.overrides}, f, indent=2)
        train_wall = time.perf_counter() - t0

        rows, floor = [], None
        t1 = time.perf_counter()
        for mark in marks:
            print(f"evaluating step {mark['step']} ({mark['minutes']:g} min of training), N = {num}, "
                  f"{repeats} repeats", flush=True)
            result = evaluate_run(run_path, step=mark["step"], num=num, repeats=repeats, seed=args.seed,
                                  progress=progress, floor=floor,
                                  out=os.path.join(run_path, "evaluation", f"minute_{mark['minutes']:g}"))
            floor = result["holdout"]
            rows.append({**mark, "scores": result["generated"], "report": os.path.join(result["out"], "report.md")})
        eval_wall = time.perf_counter() - t1
    except GanSruError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    print()
    print(format_table(rows, floor))
    last = rows[-1]["scores"]
    verdicts = []
    pred = last["predictive"] or {}
    # the predictive target compares with TimeGAN's figures, in TimeGAN's scale for sines (evaluate.py)
    for key, value in (("discriminative", last["discriminative"]["mean"]),
                       ("predictive", pred.get("mae_timegan_scale", pred.get("mae")))):
        if value is not None:
            verdicts.append(f"{key} {value:.4f} {'meets' if value <= TARGETS[key] else 'MISSES'} "
                            f"the <= {TARGETS[key]:.2f} target")
    print(f"\nafter {rows[-1]['minutes']:g} min: " + "; ".join(verdicts))

    os.makedirs(args.out, exist_ok=True)
    report = {
        "config": args.config, "overrides": args.overrides, "run": run_path, "minutes": minutes,
        "num": num, "repeats": repeats, "seed": args.seed, "scale": "[0, 1] training scale",
        "rows": rows, "floor": floor, "targets": TARGETS,
        "train_wall_seconds": round(train_wall, 1), "evaluate_wall_seconds": round(eval_wall, 1),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
    }
    json_path = os.path.join(args.out, f"{stem}.json")
    with open(json_path, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    png_path = write_plot(rows, floor, os.path.join(args.out, f"{stem}.png"),
                          f"{cfg['name']}: scores vs CPU training time (N = {num}, {repeats} repeats)")
    print(f"\nwritten: {json_path}\n         {png_path}\n         reports: {run_path}/evaluation/minute_*/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
