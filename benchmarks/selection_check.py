"""Does checkpoint selection (train.select) choose well? The checkpoint it chose and the run's newest, scored
afresh as `gan-sru evaluate` scores them.

    .venv/bin/python benchmarks/selection_check.py RUN [RUN ...] [--repeats 10] [--num 1000]
    .venv/bin/python benchmarks/selection_check.py --table          # the table of every run checked so far

For each run folder that selection scored (RUN/selection.json), the selected checkpoint and the newest one are
each scored with the paper protocol's discriminative score: `num` generated sequences against `num` of the
training split, `repeats` classifier repeats, seed 0, the very draws `gan-sru evaluate --protocol paper
--repeats R` makes (so a figure equals evaluate's; where RUN/evaluation/metrics.json already holds that
measurement of the step, it is read instead of made again). Selection's own score of each step stands next to
it: the lowest of many noisy measurements is biased low (the winner's curse), and the fresh score says by how
much (selection measures on train.select_num sequences, and the score grows with the number: read that gap
where --num is the same). Each run's row is merged by its folder's name into
benchmarks/results/selection_check.json, and the table (selection_check.md) ends, for each kind of data
(source and length), with the means over the runs where the two checkpoints differ.
"""
import argparse
import json
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(REPO, "benchmarks", "results")
STEM = "selection_check"


def cached(run_path, step, num, repeats):
    """evaluate's own paper-protocol measurement of `step` (seed 0, the same num and repeats), or None."""
    path = os.path.join(run_path, "evaluation", "metrics.json")
    try:
        with open(path) as f:
            m = json.load(f)
    except (OSError, ValueError):
        return None
    same = (m.get("checkpoint_step") == step and m.get("seed") == 0 and m.get("repeats") == repeats
            and m.get("num_generated") == num and (m.get("protocol") or {}).get("name") == "paper")
    return m["generated"]["discriminative"] if same else None


def fresh_score(run_path, step, num, repeats, splits=None):
    """{mean, std, scores}: the paper protocol's discriminative score of checkpoint `step`, drawn as evaluate
    draws it (seed 0). splits: a dict the caller keeps across the checkpoints of one run, so that its training
    split is made once (the built-in sets are generated from the config)."""
    import numpy as np

    import gan_sru.models  # noqa: F401  (registers the networks a run's config names)
    from gan_sru import metrics
    from gan_sru.commands.evaluate import _SUBSET_STREAM, _subset
    from gan_sru.sampling import TrainedRun, draw_lengths, generate_cut, training_split

    run = TrainedRun(run_path, step)
    splits = {} if splits is None else splits
    if "train" not in splits:
        splits["train"] = training_split(run.cfg)[0]
    train_set = splits["train"]
    real = _subset(train_set.sequences, num, np.random.default_rng([0, _SUBSET_STREAM]))
    fake = generate_cut(run, draw_lengths(train_set.lengths, num, 0), 0)
    settings = metrics.protocol_settings("paper", run.num_features)["discriminative"]
    return metrics.discriminative_score(real, fake, repeats=repeats, seed=0, progress=False, **settings)


def check_run(run_path, num, repeats, previous=None):
    """The run's row: selection's choice and the newest checkpoint, each with selection's score and the fresh
    one. previous: this run's row from an earlier check; a checkpoint it scored with the same num and repeats
    is not scored again. SystemExit naming the folder when it has no selection or no checkpoints."""
    from gan_sru.train.run_folder import RunFolder
    from gan_sru.train.selection import FILE

    try:
        with open(os.path.join(run_path, FILE)) as f:
            sel = json.load(f)
    except OSError:
        raise SystemExit(f"{run_path}: no {FILE} (the run was trained with train.select: none)") from None
    history = {int(s): float(v) for s, v in sel["history"]}
    steps = [s for s, _ in RunFolder(run_path).list_checkpoints()]
    if not steps or sel.get("best") not in steps:
        raise SystemExit(f"{run_path}: the selected checkpoint (step {sel.get('best')}) is not among its "
                         f"checkpoints {steps}")
    import yaml

    with open(os.path.join(run_path, "config.yaml")) as f:
        data = yaml.safe_load(f)["data"]
    row = {"run": os.path.basename(os.path.normpath(run_path)), "data": data_name(data), "num": num,
           "repeats": repeats}
    splits = {}
    for key, step in (("selected", sel["best"]), ("newest", steps[-1])):
        if key == "newest" and step == row["selected"]["step"]:  # selection chose the newest: one measurement
            row[key] = dict(row["selected"])
            continue
        before = (previous or {}).get(key)
        if before and before["step"] == step and (previous["num"], previous["repeats"]) == (num, repeats):
            row[key] = dict(before, selection_score=history.get(step))
            continue
        t0 = time.perf_counter()
        score = cached(run_path, step, num, repeats)
        reused = score is not None
        if score is None:
            score = fresh_score(run_path, step, num, repeats, splits)
        row[key] = {"step": step, "selection_score": history.get(step), "fresh": round(score["mean"], 4),
                    "fresh_std": round(score["std"], 4), "reused_evaluation": reused,
                    "seconds": round(time.perf_counter() - t0, 1)}
    return row


def write(doc, out):
    """selection_check.json (every row so far) and selection_check.md (their table), each replaced whole."""
    from gan_sru.files import atomic_write_text

    os.makedirs(out, exist_ok=True)
    atomic_write_text(os.path.join(out, f"{STEM}.json"), json.dumps(doc, indent=2) + "\n")
    text = (f"Checkpoint selection's choice and the newest checkpoint, scored afresh ({doc['cpu']}; "
            f"`python benchmarks/selection_check.py RUN ...`; paper protocol, evaluate's draws).\n\n"
            + table(list(doc["rows"].values())))
    atomic_write_text(os.path.join(out, f"{STEM}.md"), text)
    return text


def data_name(data):
    """The data a run trained on, for the table's groups: its source and length (e.g. 'factors, 24 steps')."""
    where = data.get("path") or data.get("source")
    return f"{where}, {data.get('seq_len') or data.get('window')} steps"


def table(rows):
    lines = ["| run | N | selected: step, selection's score, fresh | newest: step, selection's score, fresh | "
             "lower afresh |", "|---|---|---|---|---|"]

    def cell(c):
        sel = "-" if c["selection_score"] is None else f"{c['selection_score']:.3f}"
        return f"{c['step']}, {sel}, {c['fresh']:.3f} ± {c['fresh_std']:.3f}"

    differ = [r for r in rows if r["selected"]["step"] != r["newest"]["step"]]
    for r in rows:
        lower = ("same checkpoint" if r not in differ else
                 "selected" if r["selected"]["fresh"] < r["newest"]["fresh"] else "newest")
        lines.append(f"| {r['run']} | {r.get('num', '-')} | {cell(r['selected'])} | {cell(r['newest'])} | {lower} |")
    lines.append("")
    for data in sorted({r.get("data", "-") for r in rows}):  # the means apply to one kind of data at a time
        group = [r for r in differ if r.get("data", "-") == data]
        runs = sum(r.get("data", "-") == data for r in rows)
        if not group:
            lines.append(f"- {data}: {runs} runs, each selected its newest checkpoint.")
            continue
        mean = {k: sum(r[k]["fresh"] for r in group) / len(group) for k in ("selected", "newest")}
        curse = sum(r["selected"]["fresh"] - r["selected"]["selection_score"] for r in group) / len(group)
        wins = sum(r["newest"]["fresh"] < r["selected"]["fresh"] for r in group)
        lines.append(f"- {data}: over the {len(group)} of {runs} runs whose selected checkpoint is not the newest, "
                     f"fresh discriminative score {mean['selected']:.3f} selected, {mean['newest']:.3f} newest; the "
                     f"newest is lower in {wins} of {len(group)}. The selected checkpoints scored {curse:+.3f} "
                     "afresh against selection's own measurement of them (the lowest of many noisy ones).")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", help="run folders trained with train.select: discriminative")
    parser.add_argument("--num", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--table", action="store_true", help="only write the table of the runs checked so far")
    parser.add_argument("--out", default=RESULTS)
    args = parser.parse_args()
    if not args.runs and not args.table:
        parser.error("give run folders, or --table")
    sys.path.insert(0, REPO)
    path = os.path.join(args.out, f"{STEM}.json")
    doc = {"rows": {}}
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    from moment_terms import cpu_name

    doc["cpu"] = doc.get("cpu") or cpu_name()
    for run_path in args.runs:  # the files after each run: a stopped check keeps the rows it made
        name = os.path.basename(os.path.normpath(run_path))
        row = check_run(run_path, args.num, args.repeats, previous=doc["rows"].get(name))
        doc["rows"][row["run"]] = row
        write(doc, args.out)
        print(f"{row['run']}: selected {row['selected']['step']} {row['selected']['fresh']:.3f}, newest "
              f"{row['newest']['step']} {row['newest']['fresh']:.3f}", flush=True)
    print(write(doc, args.out))


if __name__ == "__main__":
    main()
