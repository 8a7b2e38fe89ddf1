"""How precise a discriminative score is: its spread split into the classifier's, the generated draw's and
training's shares.

    .venv/bin/python benchmarks/score_noise.py RUN [RUN ...] [--repeats 10] [--draws 2] [--protocol paper]
                                              [--stem score_noise]
    .venv/bin/python benchmarks/score_noise.py --table --stem score_noise     # redraw from the JSON

Every RUN is a finished run folder (benchmarks/ablation.py names them SET_L<length>_s<seed>_<variant>_<budget>;
other names count as their own set). Its newest checkpoint draws --draws generated sets (seeds 0, 1, ...), as
`gan-sru evaluate` draws them, with as many sequences as the run holds out (as the ablation scores); each set
is scored by --repeats fresh classifiers (TimeGAN's post-hoc GRU, --protocol's settings), and the held-out
floor by as many. Per set and variant the table gives:

    classifier sd   the spread of one classifier's score on the same generated set (pooled)
    draw sd         the spread between generated sets of one checkpoint, less what the classifiers explain
    seed sd         the spread between runs of different seeds, less what classifiers and draws explain
    repeats for 0.01   classifiers a score needs for its mean to have sd 0.01 from the classifier alone

and per set, every variant pooled, the sd one evaluation has from the measurement alone with 3, 10 and 20
classifiers.

Writes benchmarks/results/<stem>.json (merged by run, so a cut grid continues), .md and .png (each
classifier's score per run, the runs' means and the floor).
"""
import argparse
import json
import os
import re
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
RESULTS = os.path.join(REPO, "benchmarks", "results")
NAME = re.compile(r"^(?P<set>[a-z0-9]+)_L(?P<length>\d+)_s(?P<seed>\d+)_(?P<variant>.+?)(_\d+[smh])?$")


def parse_name(folder):
    """(set, length, seed, variant) from an ablation run folder's name; (name, None, None, name) otherwise."""
    name = os.path.basename(os.path.normpath(folder))
    m = NAME.match(name)
    if not m:
        return name, None, None, name
    return m["set"], int(m["length"]), int(m["seed"]), m["variant"]


def score_run(path, repeats, draws, protocol, floors, iterations=None):
    """One row: every classifier's score of `draws` generated sets of the newest checkpoint, and the floor's
    (iterations: the classifier's training steps, None for the protocol's)."""
    import numpy as np

    from gan_sru import metrics
    from gan_sru.commands.evaluate import _SUBSET_STREAM, _subset
    from gan_sru.sampling import TrainedRun, draw_lengths, generate_cut, training_split

    run = TrainedRun(path, "latest")
    train, holdout = training_split(run.cfg, run.folder.path, None, False)
    num = len(holdout.sequences)
    if num < 2:
        raise SystemExit(f"{path}: holds out {num} sequence(s); at least 2 are needed")
    rng = np.random.default_rng([0, _SUBSET_STREAM])
    real = _subset(train.sequences, num, rng)
    held = _subset(holdout.sequences, num, rng)
    settings = metrics.protocol_settings(protocol, run.num_features)["discriminative"]
    if iterations:
        settings["iterations"] = iterations
    t0 = time.process_time()
    scores = []
    for k in range(draws):
        fake = generate_cut(run, draw_lengths(train.lengths, num, k), k, None)
        scores.append(metrics.discriminative_score(real, fake, repeats=repeats, seed=k, progress=False,
                                                   **settings)["scores"])
    fkey = repr((run.cfg.data, run.cfg.seed))
    if fkey not in floors:  # runs of one data set and seed share their split, so their floor
        floors[fkey] = metrics.discriminative_score(real, held, repeats=repeats, seed=0, progress=False,
                                                    **settings)["scores"]
    name, length, seed, variant = parse_name(path)
    return {"run": os.path.basename(os.path.normpath(path)), "set": name, "length": length, "seed": seed,
            "variant": variant, "step": run.step, "num": num, "protocol": protocol, "repeats": repeats,
            "iterations": settings["iterations"],
            "scores": scores, "floor": floors[fkey], "cpu_seconds": round(time.process_time() - t0, 1)}


def shares(rows):
    """{classifier_sd, draw_sd, seed_sd, mean, se, floor, runs, repeats_for_001} of rows of one set and variant.

    Variance components of a one-way nested design: classifiers within draws within runs, each share the
    spread of its level less what the level below explains (0 when that is larger)."""
    import numpy as np

    within = [np.var(d, ddof=1) for r in rows for d in r["scores"] if len(d) > 1]
    v_clf = float(np.mean(within)) if within else 0.0
    R = int(np.mean([len(d) for r in rows for d in r["scores"]]))
    draw_means = [[float(np.mean(d)) for d in r["scores"]] for r in rows]
    between_draws = [np.var(m, ddof=1) for m in draw_means if len(m) > 1]
    v_draw = max(0.0, float(np.mean(between_draws)) - v_clf / R) if between_draws else None
    K = int(np.mean([len(m) for m in draw_means]))
    run_means = [float(np.mean(m)) for m in draw_means]
    v_seed = None
    if len(run_means) > 1:
        v_seed = max(0.0, float(np.var(run_means, ddof=1)) - ((v_draw or 0.0) / K + v_clf / (K * R)))
    sd = float(np.sqrt(v_clf))
    return {"runs": len(rows), "mean": float(np.mean(run_means)),
            "se": float(np.std(run_means, ddof=1) / np.sqrt(len(run_means))) if len(run_means) > 1 else None,
            "run_means": run_means, "classifier_sd": sd,
            "draw_sd": None if v_draw is None else float(np.sqrt(v_draw)),
            "seed_sd": None if v_seed is None else float(np.sqrt(v_seed)),
            "floor": float(np.mean([np.mean(r["floor"]) for r in rows])),
            "repeats_for_001": int(np.ceil((sd / 0.01) ** 2))}


def measurement_sd(s, classifiers):
    """The sd one evaluation of a checkpoint has from the measurement alone, with `classifiers` classifiers on
    one generated set: sqrt(classifier var / classifiers + draw var), from `s` = shares(rows) of any rows."""
    return float(((s["classifier_sd"] ** 2) / classifiers + (s["draw_sd"] or 0.0) ** 2) ** 0.5)


def groups(doc):
    out = {}
    for r in doc["rows"]:
        out.setdefault((r["set"], r["length"] or 0, r["variant"]), []).append(r)
    return {k: sorted(v, key=lambda r: (r["seed"] is None, r["seed"])) for k, v in sorted(out.items())}


def markdown(doc):
    def f(x, d=3):
        return "-" if x is None else f"{x:.{d}f}"

    lines = [f"CPU: {doc['cpu']}; protocol {doc['protocol']}; {doc['repeats']} classifiers per generated set, "
             f"{doc['draws']} generated set(s) per run, the floor by as many classifiers.", "",
             "| set | length | variant | runs | mean per run (seed order) | mean ± se | floor | classifier sd | "
             "draw sd | seed sd | repeats for sd 0.01 |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (name, length, variant), rows in groups(doc).items():
        s = shares(rows)
        lines.append(f"| {name} | {length or '-'} | {variant} | {s['runs']} | "
                     f"{' / '.join(f(m) for m in s['run_means'])} | {f(s['mean'])} ± {f(s['se'])} | {f(s['floor'])} | "
                     f"{f(s['classifier_sd'])} | {f(s['draw_sd'])} | {f(s['seed_sd'])} | {s['repeats_for_001']} |")
    by_set = {}
    for (name, length, _), rows in groups(doc).items():
        by_set.setdefault((name, length), []).extend(rows)
    lines += ["", "One evaluation's sd from the measurement alone (classifiers and the generated set; every variant "
              "of the set pooled):", "", "| set | length | runs | classifier sd | draw sd | 3 classifiers | "
              "10 classifiers | 20 classifiers |", "|---|---|---|---|---|---|---|---|"]
    for (name, length), rows in by_set.items():
        s = shares(rows)
        lines.append(f"| {name} | {length or '-'} | {len(rows)} | {f(s['classifier_sd'])} | {f(s['draw_sd'])} | "
                     + " | ".join(f(measurement_sd(s, n)) for n in (3, 10, 20)) + " |")
    return "\n".join(lines) + "\n"


def picture(doc, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = [r for g in groups(doc).values() for r in g]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(rows) + 2), 4.2))
    rng = np.random.default_rng(0)
    for i, r in enumerate(rows):
        for k, d in enumerate(r["scores"]):
            ax.scatter(i + 0.12 * (k - (len(r["scores"]) - 1) / 2) + rng.uniform(-0.04, 0.04, len(d)), d, s=9,
                       color=f"C{k}", alpha=0.7, label=f"generated set {k}" if i == 0 else None)
        ax.hlines(np.mean(r["scores"]), i - 0.3, i + 0.3, colors="k", label="run mean" if i == 0 else None)
        ax.scatter(np.full(len(r["floor"]), i + 0.35), r["floor"], s=7, color="0.6", marker="x",
                   label="floor (held-out real)" if i == 0 else None)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{r['set']} s{r['seed']} {r['variant']}" for r in rows], rotation=60, ha="right",
                       fontsize=7)
    ax.set_ylabel("discriminative score, one classifier per dot")
    ax.set_title(f"{doc['protocol']} protocol, {doc['repeats']} classifiers per set, {doc['cpu']}", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(doc, stem):
    from gan_sru.files import atomic_write_text

    atomic_write_text(os.path.join(RESULTS, f"{stem}.json"), json.dumps(doc, indent=1) + "\n")
    text = markdown(doc)
    atomic_write_text(os.path.join(RESULTS, f"{stem}.md"), f"# Score noise ({doc['command']})\n\n" + text)
    picture(doc, os.path.join(RESULTS, f"{stem}.png"))
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="*", help="finished run folders")
    p.add_argument("--repeats", type=int, default=10, help="classifiers per generated set and for the floor")
    p.add_argument("--draws", type=int, default=2, help="generated sets per run")
    p.add_argument("--protocol", default="paper", choices=("fast", "paper"))
    p.add_argument("--iterations", type=int, default=None, help="the classifier's training steps; default the "
                   "protocol's")
    p.add_argument("--stem", default="score_noise")
    p.add_argument("--table", action="store_true", help="write the .md and .png from the .json; score nothing")
    args = p.parse_args()
    if args.repeats < 2 or args.draws < 1:
        raise SystemExit("--repeats: expected at least 2; --draws: at least 1")
    from quality import cpu_model

    json_path = os.path.join(RESULTS, f"{args.stem}.json")
    doc = {"rows": []}
    if os.path.exists(json_path):
        with open(json_path) as f:
            doc = json.load(f)
    if args.table:
        print(write(doc, args.stem), end="")
        return
    from gan_sru.context import set_context

    set_context(argparse.Namespace(context="cpu", device_id="0", type_config="float"))
    doc.update({"cpu": cpu_model(), "protocol": args.protocol, "repeats": args.repeats, "draws": args.draws,
                "command": f"benchmarks/score_noise.py RUN ... --repeats {args.repeats} --draws {args.draws} "
                           f"--protocol {args.protocol}"})
    done = {r["run"] for r in doc["rows"]}
    floors = {}
    todo = [r for r in args.runs if os.path.basename(os.path.normpath(r)) not in done]
    for i, path in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] {path}: {args.draws} x {args.repeats} classifiers and the floor", flush=True)
        row = score_run(path, args.repeats, args.draws, args.protocol, floors, args.iterations)
        doc["rows"].append(row)
        print(f"  mean {sum(map(sum, row['scores'])) / (args.draws * args.repeats):.3f}, "
              f"{row['cpu_seconds']} CPU s", flush=True)
        write(doc, args.stem)
    print(write(doc, args.stem), end="")


if __name__ == "__main__":
    main()
