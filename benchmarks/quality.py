"""Sample quality per dataset x length for a fixed CPU training budget, every score next to its floor.

    .venv/bin/python benchmarks/quality.py [--sets wide,long64,long128,long256,sines] [--minutes M | SET=M,...]
                                           [--protocol paper] [--repeats 3] [--set KEY=VALUE ...]
    .venv/bin/python benchmarks/quality.py --sets wide --steps 3000 --label ' (3000 steps)'   # a fixed step count
    .venv/bin/python benchmarks/quality.py --quick      # smoke test: 1 minute each, fast protocol, 200 sequences
    .venv/bin/python benchmarks/quality.py --table      # quality.md and .png again from quality.json
    .venv/bin/python benchmarks/quality.py --rescore 'long64 (log grid)' --repeats 10

For each set, configs/<set>.yaml (the long sets: configs/wide.yaml at their length, SETS) is trained in this
process by the project's Trainer on the CPU context for its budget of wall-clock training time (--minutes: one
number for every set, or SET=M pairs; by default BUDGETS)
(benchmarks/scores_over_time.TimeMarks: a checkpoint at the mark, then the trainer stops), into
RUN_DIR/quality_<set>; or, with --steps N, for N steps whatever time they take (a row that a loaded machine does
not change; its "training" cell says the steps); then `gan_sru.commands.evaluate.evaluate_run` scores that
checkpoint (with train.select on, the one selection chose; its scoring counts in the budget) with --protocol
(default paper: TimeGAN's 2000 / 5000 iterations, GRU hidden C // 2), N = every held-out real sequence (or --num),
--repeats repeats of the discriminative score, into RUN/evaluation/.
The table: discriminative, predictive (TSTR MAE), Context-FID, correlational score, each generated / floor
(held-out real vs real), and the training speed (steps/s, ms per step, ms per step per time step: a
constant last column means step time grows linearly with length; over the training's own seconds, those
checkpoint selection spent scoring left out and recorded as select_seconds).

--rescore ROW[;ROW...] trains nothing: it scores the checkpoint that a row of quality.json evaluated again, from
its run folder, with --repeats repeats (default 10), the row's protocol and N and --seed (default 0, as the rows), into
RUN/evaluation_<repeats>_repeats/, and adds the row "ROW [<repeats> repeats]" (the training's figures copied).
The repeats are seeded: the first 3 of 10 are the row's own 3, so the new row extends the old one. A
classifier repeat either finds a giveaway or not, so a mean of 3 moves a lot between seeds of the same config;
10 repeats narrow that to what ranking configs needs.

Writes benchmarks/results/quality.json (one entry per set, merged with the sets already there so a
partial run adds to the table), quality.md (the table and the targets) and quality.png (per set: each score
generated next to its floor; steps/s against length). Every figure names the CPU (`lscpu` model name).
"""
import argparse
import json
import os
import platform
import re
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

DEFAULT_SETS = "wide,long64,long128,long256,sines"
# The targets: discriminative <= 0.10 on the wide and long sets, the wide set's predictive score
# within 2% of its floor (predictive_above_floor: percent), the sines at their floor.
TARGETS = {"wide": {"discriminative": 0.10, "predictive_above_floor": 2.0}, "long64": {"discriminative": 0.10},
           "long128": {"discriminative": 0.10}, "long256": {"discriminative": 0.10},
           "sines": {"discriminative": 0.011, "predictive_timegan_scale": 0.094}}
SCORES = ("discriminative", "predictive", "context_fid", "correlational")
# Training minutes per set by default: 15 CPU-minutes for the wide set; the long sets' budgets grow with their length
# (a step costs time in proportion to it).
BUDGETS = {"wide": 15.0, "long64": 10.0, "long128": 25.0, "long256": 45.0, "sines": 10.0}
DEFAULT_BUDGET = 15.0  # a set not in BUDGETS
# Sets that are a config with overrides: the wide set's signal in longer windows, with fewer sequences and
# smaller batches (memory and set-up grow with the length). Any other set is configs/<set>.yaml as it is.
SETS = {"long64": ("wide", ["data.seq_len=64", "data.num_sequences=5000", "train.batch_size=64"]),
        "long128": ("wide", ["data.seq_len=128", "data.num_sequences=3000", "train.batch_size=64"]),
        "long256": ("wide", ["data.seq_len=256", "data.num_sequences=2000", "train.batch_size=32"])}
QUICK = {"minutes": 1.0, "protocol": "fast", "num": 200, "repeats": 2, "stem": "quality_quick"}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _value(name, scores):
    if scores is None or scores.get(name) is None:
        return None
    v = scores[name]
    if name in ("discriminative", "correlational"):
        return v["mean"]
    if name == "predictive":
        return v["mae"]
    return float(v)


def _scores(result, targets):
    """(generated, floor, met) of an evaluate_run result: {score: value} each, TimeGAN's predictive scale
    too where the data has it, the generated predictive MAE's distance above its floor in percent
    (generated["predictive_above_floor"]), and which of `targets` the generated scores meet."""
    gen, floor = result["generated"], result["holdout"]
    generated, floors = {k: _value(k, gen) for k in SCORES}, {k: _value(k, floor) for k in SCORES}
    generated["predictive_above_floor"] = _above(generated["predictive"], floors["predictive"])
    pred = gen.get("predictive") or {}
    if "mae_timegan_scale" in pred:
        generated["predictive_timegan_scale"] = pred["mae_timegan_scale"]
        floors["predictive_timegan_scale"] = (floor or {}).get("predictive", {}).get("mae_timegan_scale")
    met = {k: (generated.get(k) is not None and generated[k] <= t) for k, t in targets.items()}
    return generated, floors, met


def parse_budgets(text, sets):
    """--minutes: None (BUDGETS), one number for every set, or SET=MINUTES pairs (the other sets keep BUDGETS).
    Returns {set: minutes} for `sets`; SystemExit naming the bad part otherwise."""
    budgets = {s: BUDGETS.get(s, DEFAULT_BUDGET) for s in sets}
    if text is None:
        return budgets
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    try:
        if len(parts) == 1 and "=" not in parts[0]:
            return {s: _positive(parts[0]) for s in sets}
        for part in parts:
            name, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"{part!r} is not SET=MINUTES")
            if name.strip() not in budgets:
                raise ValueError(f"{name.strip()!r} is not one of --sets ({', '.join(sets)})")
            budgets[name.strip()] = _positive(value)
    except ValueError as e:
        raise SystemExit(f"--minutes {text!r}: {e}; expected a number of minutes or SET=MINUTES pairs, "
                         "e.g. --minutes 15 or --minutes long128=25,long256=45") from None
    return budgets


def _positive(text):
    value = float(text)
    if not value > 0:
        raise ValueError(f"{text!r} is not a positive number of minutes")
    return value


def train_steps(cfg, progress):
    """Train cfg for its train.steps; returns the mark (step, train_seconds, select_seconds: checkpoint
    selection's scoring, all of it inside train_seconds) of its last checkpoint."""
    from gan_sru.train import Trainer

    t0 = time.perf_counter()
    trainer = Trainer(cfg, progress=progress)
    trainer.train()
    return {"step": cfg["train"]["steps"], "train_seconds": round(time.perf_counter() - t0, 2),
            "select_seconds": round(trainer.selection.seconds, 1)}


def set_config(name):
    """(config path relative to the repository, overrides) of set `name`."""
    config, overrides = SETS.get(name, (name, []))
    return f"configs/{config}.yaml", list(overrides)


def run_set(name, args, minutes):
    """Train set `name` (set_config) for `minutes` (or args.steps steps) and evaluate it; returns the set's entry
    for quality.json."""
    from scores_over_time import train

    from gan_sru.commands.evaluate import evaluate_run
    from gan_sru.config import load_config
    from gan_sru.data import training_data

    big = 10 ** 9
    run_name = f"quality_{name}" + ("_" + re.sub(r"[^A-Za-z0-9]+", "_", args.label).strip("_") if args.label else "")
    # the config's checkpoints stay: with train.select each is scored, and the best one is what is evaluated
    overrides = [f"name={run_name}", f"run_dir={args.run_dir}", f"train.steps={big}",
                 f"train.sample_every={big}", "train.keep_checkpoints=2"]
    if args.steps:
        overrides[2] = f"train.steps={args.steps}"
        minutes = None
    config, set_overrides = set_config(name)
    cfg = load_config(os.path.join(REPO, config), set_overrides + overrides + args.overrides)
    run_path = os.path.join(cfg["run_dir"], cfg["name"])
    if os.path.exists(run_path):
        import shutil
        shutil.rmtree(run_path)  # a benchmark run starts from nothing
    cpu0, t0 = time.process_time(), time.perf_counter()
    mark = train_steps(cfg, not args.no_progress) if args.steps else train(cfg, [minutes], not args.no_progress)[-1]
    train_cpu = time.process_time() - cpu0
    holdout = len(training_data(cfg).holdout)
    selecting = cfg["train"]["select"] != "none"  # then the selected checkpoint, else the last one
    result = evaluate_run(run_path, step=None if selecting else mark["step"], num=args.num or holdout,
                          repeats=args.repeats, seed=args.seed, progress=not args.no_progress, protocol=args.protocol)
    length = cfg["data"]["seq_len"]
    select_s = mark["select_seconds"]  # the scoring inside the training time (a time mark's own save is outside)
    steps_s = mark["step"] / (mark["train_seconds"] - select_s)  # the training's speed, the scoring left out
    targets = row_targets(name, args.overrides)
    generated, floors, met = _scores(result, targets)
    entry = {
        "set": name, "dataset": name, "config": config, "set_overrides": set_overrides, "overrides": args.overrides,
        "length": length,
        "features": result.get("num_features") or cfg["data"]["num_features"],
        "budget_minutes": minutes, "steps": mark["step"], "train_seconds": mark["train_seconds"],
        "select": cfg["train"]["select"], "evaluated_step": result["checkpoint_step"], "select_seconds": select_s,
        "train_cpu_seconds": round(train_cpu, 1), "steps_per_second": round(steps_s, 3),
        "ms_per_step": round(1000 / steps_s, 2), "ms_per_step_per_time_step": round(1000 / steps_s / length, 3),
        "protocol": result["protocol"]["name"], "num_generated": result["num_generated"],
        "num_real": result["num_real"], "num_holdout": result["num_holdout"], "repeats": result["repeats"],
        "generated": generated, "floor": floors, "met": met,
        "discriminative_std": result["generated"]["discriminative"]["std"],
        "discriminative_scores": result["generated"]["discriminative"].get("scores"), "targets": targets,
        "evaluation": result["out"], "evaluate_seconds": result["seconds"],
        "wall_seconds": round(time.perf_counter() - t0, 1),
    }
    return entry


def row_targets(name, overrides):
    """The targets of set `name`; none for a comparison row (--set overrides): they are for the defaults."""
    return {} if overrides else TARGETS.get(name, {})


def _fmt(x, digits=4):
    return "-" if x is None else f"{x:.{digits}f}"


def _above(value, floor):
    """How far `value` lies above `floor`, in percent of the floor (None without both)."""
    return None if value is None or not floor else 100.0 * (value / floor - 1.0)


def markdown(doc):
    """The table of every set: score generated / floor, targets, speed."""
    lines = [f"Sample quality for a fixed CPU budget ({doc['cpu']}; a row measured on another CPU names it after "
             "the set; `python benchmarks/quality.py`). Each cell: generated / floor (held-out real vs real); lower "
             "is better.", "",
             "| set | length x features | training | steps | steps/s | ms/step/time step | protocol, N, repeats | "
             "discriminative | predictive MAE (above its floor) | Context-FID | correlational | targets |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in doc["sets"].values():
        g, f = e["generated"], e["floor"]
        cells = [f"{_fmt(g[k])} / {_fmt(f[k])}" for k in SCORES]
        if e["generated"].get("discriminative") is not None:
            cells[0] += f" (± {e['discriminative_std']:.3f})"
        above = _above(g.get("predictive"), f.get("predictive"))
        if above is not None:
            cells[1] += f" ({above:+.1f}%)"
        targets = ", ".join(f"{k} ≤ {t} {'met' if e['met'].get(k) else 'NOT met'}" for k, t in e["targets"].items())
        budget = f"{e['steps']} steps" if e["budget_minutes"] is None else f"{e['budget_minutes']:g} min"
        steps = str(e["steps"])
        if e.get("select", "none") != "none":  # the checkpoint evaluated: the one selection chose
            steps += f", selected {e['evaluated_step']}"
        name = e["set"] + (f" [{e['cpu']}]" if e.get("cpu", doc["cpu"]) != doc["cpu"] else "")
        lines.append(f"| {name} | {e['length']} x {e['features']} | {budget} | {steps} | "
                     f"{e['steps_per_second']:.2f} | {e['ms_per_step_per_time_step']:.2f} | "
                     f"{e['protocol']}, {e['num_holdout']}, {e['repeats']} | " + " | ".join(cells)
                     + f" | {targets or '-'} |")
    return "\n".join(lines) + "\n"


def write_plot(doc, path):
    """One row per entry, each score a pair of horizontal bars: generated (orange) over its floor (blue),
    the target as a green tick; Context-FID on a log axis (its values span two decades). The last panel is
    the training time per step per time step: equal bars for the lengths mean step time grows linearly.
    Rows are labelled once, on the left, so that a long table stays readable."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from gan_sru.files import atomic_write

    entries = list(doc["sets"].values())
    n = len(entries)
    fig = Figure(figsize=(3.2 * len(SCORES) + 6.5, 1.4 + 0.34 * n), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(SCORES) + 1, sharey=True)
    y = np.arange(n)[::-1]  # the table's first row at the top
    for ax, name in zip(axes, SCORES):
        gen = np.array([np.nan if e["generated"][name] is None else e["generated"][name] for e in entries], float)
        flo = np.array([np.nan if e["floor"][name] is None else e["floor"][name] for e in entries], float)
        ax.barh(y + 0.2, gen, 0.4, color="tab:orange", label="generated")
        ax.barh(y - 0.2, flo, 0.4, color="tab:blue", label="floor (held-out real)")
        for yi, e in zip(y, entries):
            t = e["targets"].get(name)
            if t is not None:
                ax.vlines(t, yi - 0.45, yi + 0.45, colors="tab:green", linewidth=2)
        if name == "context_fid":
            ax.set_xscale("log")
        ax.set_title(name + (" (log)" if name == "context_fid" else "")
                     + (" (green: target)" if name == "discriminative" else ""), fontsize="medium")
        ax.grid(alpha=0.3, axis="x")
    axes[0].set_yticks(y)
    axes[0].set_yticklabels([f"{e['set']} ({e['length']} x {e['features']})" for e in entries], fontsize="small")
    axes[0].set_ylim(-0.7, n - 0.3)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="upper left", ncol=2, fontsize="small")  # clear of the rows
    ax = axes[-1]
    ms = [e["ms_per_step_per_time_step"] for e in entries]
    ax.barh(y, ms, 0.6, color="tab:gray")
    for yi, e, v in zip(y, entries, ms):
        ax.annotate(f"{e['steps']} steps, {e['steps_per_second']:.2f}/s", (v, yi), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize="x-small")
    ax.set_xlim(0, max(ms) * 1.9)
    ax.set_title("ms per step per time step", fontsize="medium")
    ax.grid(alpha=0.3, axis="x")
    fig.suptitle(f"sample quality for a fixed CPU budget ({doc['cpu']}): each score generated / floor, lower is better")
    fig.tight_layout()
    return atomic_write(path, lambda f: fig.savefig(f, format="png"))


def rescore(key, entry, args):
    """The entry of `key` scored again from its run folder with args.repeats repeats; returns the new row."""
    from gan_sru.commands.evaluate import evaluate_run

    run_path = os.path.dirname(entry["evaluation"])
    if not os.path.isdir(run_path):
        raise SystemExit(f"--rescore {key!r}: its run folder {run_path} is not on this machine")
    result = evaluate_run(run_path, step=entry["evaluated_step"], num=entry["num_holdout"], repeats=args.repeats,
                          seed=args.seed, progress=not args.no_progress, protocol=entry["protocol"],
                          out=os.path.join(run_path, f"evaluation_{args.repeats}_repeats"))
    targets = row_targets(entry["dataset"], entry.get("overrides")) if "dataset" in entry else entry["targets"]
    generated, floors, met = _scores(result, targets)
    disc = result["generated"]["discriminative"]
    return dict(entry, repeats=result["repeats"], rescored_from=key, evaluation=result["out"],
                evaluate_seconds=result["seconds"], discriminative_std=disc["std"],
                discriminative_scores=disc.get("scores"), generated=generated, floor=floors, targets=targets,
                met=met)


def _read_sets(json_path):
    """The entries already in the results file ({} when there is none). Read again before every write, so that
    two runs at once (e.g. --sets long256 and a --label comparison) keep each other's rows."""
    if not os.path.exists(json_path):
        return {}
    with open(json_path) as f:
        return json.load(f).get("sets", {})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=DEFAULT_SETS, help=f"comma-separated config names (default: {DEFAULT_SETS})")
    parser.add_argument("--minutes", default=None,
                        help="training budget: minutes for every set, or SET=MINUTES pairs (default: "
                             + ", ".join(f"{k} {v:g}" for k, v in BUDGETS.items()) + ")")
    parser.add_argument("--steps", type=int, default=None,
                        help="train this many steps instead of a time budget (overrides --minutes)")
    parser.add_argument("--protocol", default=None, choices=("fast", "paper"), help="default: paper")
    parser.add_argument("--num", type=int, default=None, help="sequences compared (default: every held-out one)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="discriminative-score repeats (default: 3; with --rescore 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="config override applied to every set (repeatable)")
    parser.add_argument("--label", default="",
                        help="suffix of the table's row names, for a comparison run, e.g. --label ' (sines sizes)'")
    parser.add_argument("--run-dir", default=os.path.join(REPO, "runs"))
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--quick", action="store_true", help="smoke test: 1 minute, fast protocol, 200 sequences")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--table", action="store_true", help="rewrite the .md and .png from the .json; train nothing")
    parser.add_argument("--rescore", default=None, metavar="ROW[;ROW...]",
                        help="score rows of quality.json again from their run folders with --repeats repeats; "
                             "train nothing")
    args = parser.parse_args()
    if args.steps is not None and args.steps < 1:
        raise SystemExit(f"--steps {args.steps}: expected a positive number of training steps")

    import gan_sru  # noqa: F401
    import gan_sru.models  # noqa: F401  (registers the networks)
    from gan_sru.context import set_context
    from gan_sru.files import atomic_write_text

    quick = QUICK if args.quick else {}
    for key, default in (("minutes", None), ("protocol", "paper"), ("num", None),
                         ("repeats", 10 if args.rescore else 3)):
        if getattr(args, key) is None:  # an explicit option wins over --quick's settings
            setattr(args, key, quick.get(key, default))
    stem = quick.get("stem", "quality")
    json_path = os.path.join(args.out, f"{stem}.json")
    doc = {"cpu": cpu_model(), "sets": _read_sets(json_path)}
    if args.table:  # the file's own CPU, not this machine's
        if not doc["sets"]:
            raise SystemExit(f"--table: no results in {json_path}")
        with open(json_path) as f:
            doc["cpu"] = json.load(f)["cpu"]
    set_context(argparse.Namespace(context="cpu", device_id="0", type_config="float"))
    os.makedirs(args.out, exist_ok=True)
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    for name in names:
        if not os.path.exists(os.path.join(REPO, set_config(name)[0])):
            raise SystemExit(f"--sets: no configs/{name}.yaml (nor a set of SETS)")
    budgets = parse_budgets(args.minutes, names)
    for key in [k.strip() for k in args.rescore.split(";") if k.strip()] if args.rescore else ():
        if key not in doc["sets"]:
            raise SystemExit(f"--rescore {key!r}: no such row in {json_path}; rows: {sorted(doc['sets'])}")
        print(f"== {key}: {args.repeats} repeats", flush=True)
        row = rescore(key, doc["sets"][key], args)
        new_key = f"{key} [{args.repeats} repeats]"
        doc["sets"] = _read_sets(json_path)
        doc["sets"][new_key] = dict(row, set=new_key)
        atomic_write_text(json_path, json.dumps(doc, indent=2) + "\n")
        print(json.dumps({"set": new_key, "generated": row["generated"], "floor": row["floor"],
                          "discriminative_scores": row["discriminative_scores"]}), flush=True)
    for name in names if not (args.table or args.rescore) else ():
        print(f"== {name}", flush=True)
        key = name + args.label
        entry = run_set(name, args, budgets[name])
        entry["set"], entry["cpu"] = key, doc["cpu"]
        doc["sets"] = _read_sets(json_path)
        doc["sets"][key] = entry
        atomic_write_text(json_path, json.dumps(doc, indent=2) + "\n")  # after each set: a partial run counts
        print(json.dumps({k: entry[k] for k in ("set", "steps", "steps_per_second", "generated", "floor", "met")}),
              flush=True)
    table = markdown(doc)
    atomic_write_text(os.path.join(args.out, f"{stem}.md"), table)
    write_plot(doc, os.path.join(args.out, f"{stem}.png"))
    print(table)


if __name__ == "__main__":
    main()
