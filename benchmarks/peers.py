"""Peer comparison: samples of this project's generator, of other tools and of baselines, all scored by `gan-sru score`.

    .venv/bin/python benchmarks/peers.py [--sets sines,motions] [--generators gan_sru,par,var,train,holdout]
                                         [--budget 2m] [--protocol fast] [--repeats 3] [--num 1000] [--seed 0]
                                         [--par-sequences 250] [--peers-python /tmp/peers/bin/python]
                                         [--var-maxlags 6] [--work /tmp/gan_sru_peers] [--only SECTIONS]
    .venv/bin/python benchmarks/peers.py --table        # peers.md and peers.png again from peers.json

Sets, split as `gan-sru train` splits them (gan_sru.data.training_data; motions: benchmarks/ablation.py's CSV):
    sines    configs/sines.yaml: 10,000 sequences of 24 steps and 5 features, 10% held out at random
    motions  sktime's BasicMotions (accelerometer and gyroscope, 80 recordings of 100 steps, 6 features) cut into
             windows of 24 steps a quarter window apart, 20% held out in blocks that no training window overlaps
The training and held-out windows are written in data units to WORK/<set>/train.csv and holdout.csv (long:
id, time, features).

Generators, each given --budget of CPU time (seconds of the processes that fit it; run with OMP_NUM_THREADS=1),
each writing --num sequences of 24 steps to WORK/<set>/<generator>/samples.csv:
    gan_sru  the Trainer as `gan-sru train` runs it (the recipe fills the keys the config leaves unset), train.budget
             measured in CPU seconds of this process (Trainer.budget.clock = time.process_time), then `gan-sru generate`
    par      SDV's PARSynthesizer in its own venv (--peers-python; `pip install sdv`) on --par-sequences training
             windows drawn at random (a PAR epoch is one full-batch step over all of them), its epoch loop stopped
             when the budget is spent (PAR has no time budget of its own)
    var      statsmodels' VAR fitted by least squares on the training windows placed end to end, the lag order by
             AIC (at most --var-maxlags), simulated from a training window's first steps past a burn-in
    train    the training windows themselves: a copier, which the privacy section must flag
    holdout  the held-out windows: real data the generators never saw, the floor
Each is scored by `gan-sru score --real train.csv --holdout holdout.csv --fake samples.csv --protocol P`.
Writes benchmarks/results/<stem>.json (one row per set and generator with its metrics.json, merged by key so a
partial run adds to it), <stem>.md (the table) and <stem>.png (discriminative score and membership-inference AUC).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(REPO, "benchmarks", "results")
SETS = ("sines", "motions")
GENERATORS = {
    "gan_sru": "this project: gan-sru train at the budget, then gan-sru generate",
    "par": "SDV's PARSynthesizer (DeepEcho's PAR) on a random subset of the training windows, epochs until the "
           "budget is spent",
    "var": "statsmodels' VAR (lag order by AIC) fitted on the training windows, simulated",
    "train": "the training windows themselves (a copier)",
    "holdout": "the held-out windows (the floor: real data no generator saw)",
}
BUDGETED = ("gan_sru", "par")  # the generators whose fit the budget sets (VAR's least squares take a second)
LENGTH = 24
THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def set_config(name, seed, budget, work, overrides=()):
    """The config `gan-sru train` trains the set with at LENGTH steps (motions: benchmarks/ablation.py's data),
    the budget in force and no checkpoint but the last; `overrides` (KEY=VALUE) last."""
    from gan_sru.config import load_config

    big = 10 ** 9
    common = [f"name=peers_{name}", f"run_dir={os.path.join(work, 'runs')}", f"seed={seed}",
              f"train.budget={budget}", f"train.steps={big}", f"train.checkpoint_every={big}",
              f"train.sample_every={big}", "train.select=none", "train.keep_checkpoints=1"]
    if name == "sines":
        return load_config(os.path.join(REPO, "configs", "sines.yaml"), common + [f"data.seq_len={LENGTH}"] +
                           list(overrides))
    if name != "motions":
        raise SystemExit(f"--sets: unknown set {name!r}; expected some of {', '.join(SETS)}")
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    import ablation

    path, _ = ablation.real_csv(name, os.path.join(work, "data"))
    data = ["data.source=file", "data.csv_time_column=time", f"data.path={path}", f"data.window={LENGTH}",
            f"data.window_stride={LENGTH // 4}", "data.holdout_split=blocks", "data.holdout_fraction=0.2"]
    return load_config(None, common + data + list(overrides))


def write_split(cfg, folder):
    """WORK/<set>/train.csv and holdout.csv: the training and held-out windows in data units; their paths, the
    feature names and the training windows (list of (L, C) float64 arrays in data units)."""
    import numpy as np

    from gan_sru.data import training_data
    from gan_sru.data.writers import save_sequences

    data = training_data(cfg)
    names = data.dataset.info.get("feature_names") or [f"f{c}" for c in range(data.train.num_features)]
    os.makedirs(folder, exist_ok=True)
    paths = {}
    for what, part in (("train", data.train), ("holdout", data.holdout)):
        seqs = [part.scaler.inverse(s).astype(np.float64) for s in part.sequences]
        paths[what] = os.path.join(folder, f"{what}.csv")
        save_sequences(seqs, paths[what], feature_names=names)
        if what == "train":
            train = seqs
    return paths, names, train


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(cmd, log):
    """Run a command (single-threaded), its output into `log`; its CPU seconds."""
    t0 = _children_cpu()
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env={**os.environ, **THREADS})
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}; see {log}")
    return _children_cpu() - t0


def gan_sru_samples(cfg, out, num, seed, log):
    """Train the set's run for its CPU budget in this process, then `gan-sru generate` its last checkpoint."""
    import shutil

    import nnabla as nn

    from gan_sru.train import Trainer

    nn.clear_parameters()  # a previous run's networks are in nnabla's global scope
    run_path = os.path.join(cfg.run_dir, cfg.name)
    shutil.rmtree(run_path, ignore_errors=True)
    t0 = time.process_time()
    with open(log, "a") as f:
        trainer = Trainer(cfg, progress=False, out=f)
        trainer.budget.clock = time.process_time  # the budget in CPU seconds of this process
        trainer.train()
    fit_cpu = time.process_time() - t0
    step = trainer.run.list_checkpoints()[-1][0]
    gen_cpu = _run([sys.executable, "-m", "gan_sru", "generate", "--run", run_path, "--checkpoint", str(step),
                    "--num", str(num), "--seed", str(seed), "--out", out, "--overwrite"], log)
    return {"fit_cpu_seconds": round(fit_cpu, 1), "sample_cpu_seconds": round(gen_cpu, 1), "steps": step,
            "command": f"Trainer(config {cfg.name}, train.budget={cfg.train.budget}, clock=time.process_time)"
                       f".train(); gan-sru generate --run {run_path} "
                       f"--checkpoint {step} --num {num} --seed {seed} --out {out}"}


def var_samples(train, names, out, num, seed, maxlags=6, burn=48):
    """statsmodels' VAR on the training windows placed end to end (a window's first steps are regressed on the
    previous window's last: p of LENGTH rows per window), lag order by AIC; `num` sequences of LENGTH steps, each
    started from a random training window's first p steps and kept after `burn` steps."""
    import numpy as np
    from statsmodels.tsa.api import VAR

    from gan_sru.data.writers import save_sequences

    t0 = time.process_time()
    series = np.concatenate(train)
    keep = series.std(0) > 0  # VAR needs a full-rank covariance: constant features are copied as they are
    fit = VAR(series[:, keep]).fit(maxlags=maxlags, ic="aic", trend="c")
    p = max(fit.k_ar, 1)
    fit_cpu = time.process_time() - t0
    t0 = time.process_time()
    rng = np.random.default_rng(seed)
    starts = rng.integers(len(train), size=num)
    out_seqs = []
    for i, j in enumerate(starts):
        sim = fit.simulate_var(steps=p + burn + LENGTH, initial_values=train[j][:p, keep],
                               rng=np.random.RandomState(seed * 100003 + i))
        seq = np.repeat(series[:1], LENGTH, 0)
        seq[:, keep] = sim[-LENGTH:]
        out_seqs.append(seq)
    save_sequences(out_seqs, out, feature_names=names)
    return {"fit_cpu_seconds": round(fit_cpu, 1), "sample_cpu_seconds": round(time.process_time() - t0, 1),
            "lag_order": int(fit.k_ar), "stable": bool(fit.is_stable()),
            "command": f"statsmodels VAR(maxlags={maxlags}, ic='aic', trend='c').fit; simulate_var (burn-in {burn})"}


def par_samples(train_csv, out, num, seed, budget_s, python, log, sequences=250):
    """SDV's PARSynthesizer in `python` (its own venv) on `sequences` training windows drawn at random, its epochs
    stopped when the CPU budget is spent, then `num` sequences of LENGTH steps."""
    report = out + ".json"
    _run([python, os.path.abspath(__file__), "--par-fit", train_csv, "--seed", str(seed), "--par-budget",
          str(budget_s), "--par-sequences", str(sequences), "--num", str(num), "--out", out, "--par-report", report],
         log)
    with open(report) as f:
        done = json.load(f)
    return dict(done, command=f"PARSynthesizer(epochs: until {budget_s:.0f} CPU s are spent).fit on {done['windows']} "
                              f"windows; sample_sequences(num_sequences={num}, sequence_length={LENGTH})")


def par_main(args):
    """In the peers venv (pandas, sdv, torch; no gan_sru): fit PAR on a long CSV for a CPU budget, write `num`
    sequences and a report (CPU seconds, epochs, versions)."""
    import numpy as np
    import pandas as pd
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    import deepecho.models.par as par_model
    from sdv.metadata import Metadata
    from sdv.sequential import PARSynthesizer

    frame = pd.read_csv(args.par_fit)
    ids = frame["id"].unique()
    if args.par_sequences and len(ids) > args.par_sequences:  # PAR's epoch is one full-batch step over every window
        keep = np.random.default_rng(args.seed).choice(ids, args.par_sequences, replace=False)
        frame = frame[frame["id"].isin(keep)]
    columns = {"id": {"sdtype": "id"}, "time": {"sdtype": "numerical"}}
    columns.update({c: {"sdtype": "numerical"} for c in frame.columns[2:]})
    meta = Metadata.load_from_dict({"tables": {"windows": {"columns": columns, "sequence_key": "id",
                                                           "sequence_index": "time"}}})
    t0 = time.process_time()
    epochs = []

    def budgeted(iterable, **_):  # PAR's epoch loop (deepecho wraps range(epochs) in tqdm): stop at the budget
        for epoch in iterable:
            if epochs and time.process_time() - t0 >= args.par_budget:
                return
            epochs.append(epoch)
            yield epoch
    if not hasattr(par_model, "tqdm"):
        raise SystemExit(f"{par_model.__file__}: no tqdm to wrap; expected deepecho's PAR epoch loop")
    par_model.tqdm = budgeted
    synth = PARSynthesizer(meta, epochs=10 ** 6, verbose=False, cuda=False)
    synth.fit({"windows": frame})  # sdv 2 takes and returns {table name: frame}
    fit_cpu = time.process_time() - t0
    t0 = time.process_time()
    sample = getattr(synth, "sample_sequences", None) or synth.sample  # sdv 2 / sdv 1
    fake = sample(num_sequences=args.num, sequence_length=LENGTH)
    fake = fake["windows"] if isinstance(fake, dict) else fake
    sample_cpu = time.process_time() - t0
    fake = fake[list(frame.columns)]
    fake["id"] = pd.factorize(fake["id"])[0]
    fake.to_csv(args.out, index=False)
    with open(args.par_report, "w") as f:
        json.dump({"fit_cpu_seconds": round(fit_cpu, 1), "sample_cpu_seconds": round(sample_cpu, 1),
                   "epochs": len(epochs), "windows": int(frame["id"].nunique()),
                   "sdv": __import__("sdv").__version__, "torch": torch.__version__}, f)


def score(paths, fake, out, protocol, repeats, num, seed, only, log):
    """`gan-sru score` of one sample file; (metrics.json as a dict, its command line, its CPU seconds)."""
    cmd = [sys.executable, "-m", "gan_sru", "score", "--real", paths["train"], "--holdout", paths["holdout"],
           "--fake", fake, "--out", out, "--protocol", protocol, "--repeats", str(repeats), "--num", str(num),
           "--seed", str(seed), "--no-progress"] + (["--only", only] if only else [])
    cpu = _run(cmd, log)
    with open(os.path.join(out, "metrics.json")) as f:
        return json.load(f), "gan-sru " + " ".join(cmd[3:]), cpu


def headline(metrics):
    """The numbers of the table from one metrics.json: {name: value or None}."""
    def get(section, *keys):
        node = metrics.get(section)
        for k in keys:
            if node is None:
                return None
            node = node.get(k)
        return node
    out = {}
    for side, section in (("", "generated"), ("floor_", "holdout")):
        out[side + "discriminative"] = get(section, "discriminative", "mean")
        out[side + "discriminative_std"] = get(section, "discriminative", "std")
        out[side + "predictive"] = get(section, "predictive", "mae")
        out[side + "context_fid"] = get(section, "context_fid")
        out[side + "correlational"] = get(section, "correlational", "mean")
    out["mia_auc"] = get("privacy", "membership_inference", "auc")
    out["mia_interval"] = get("privacy", "membership_inference", "interval")
    out["mia_tpr_low_fpr"] = get("privacy", "membership_inference", "tpr_at_low_fpr")
    out["aa_train"] = get("privacy", "adversarial_accuracy", "aa_train_synthetic")
    out["aa_holdout"] = get("privacy", "adversarial_accuracy", "aa_holdout_synthetic")
    out["privacy_loss"] = get("privacy", "adversarial_accuracy", "privacy_loss")
    out["memorisation_ratio"] = get("memorisation", "median_ratio")
    return out


def _f(v, d=3):
    return "-" if v is None else f"{v if round(v, d) else 0.0:.{d}f}"  # 0.000, not -0.000


def markdown(doc):
    """The table: per set and generator, each fidelity score next to its floor and the privacy scores."""
    order = list(GENERATORS)
    rows = sorted(doc["rows"], key=lambda r: (SETS.index(r["set"]) if r["set"] in SETS else 99, r["set"],
                                              order.index(r["generator"])))
    lines = [f"`benchmarks/peers.py` (each row's commands in {doc.get('stem', 'peers')}.json). CPU: {doc['cpu']}; "
             f"budget {doc['budget']} of CPU time per generator; `gan-sru score --protocol {doc['protocol']}`, "
             f"{doc['repeats']} repeats; (floor) = held-out real data against training real data. Lower is better "
             "for the four fidelity scores; the membership attack's AUC and the adversarial accuracies are best at "
             "0.5, the privacy loss at 0; the nearest-training ratio (memorisation: median distance of a sample to "
             "its nearest training window over the same for held-out windows) is 1 for unseen data, near 0 for "
             "copies.", "",
             "| set | generator | CPU s | discriminative (floor) | predictive MAE (floor) | Context-FID (floor) | "
             "correlational (floor) | MIA AUC (members flagged at 1% FPR) | AA train / holdout | privacy loss | "
             "nearest-training ratio |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        h = r["scores"]
        cpu = r.get("fit_cpu_seconds")
        cpu = "-" if cpu is None else f"{cpu + r.get('sample_cpu_seconds', 0):.0f}"
        disc = "-" if h["discriminative"] is None else (f"{h['discriminative']:.3f} ± {h['discriminative_std']:.3f} "
                                                        f"({_f(h['floor_discriminative'])})")
        tpr = h.get("mia_tpr_low_fpr")
        mia = _f(h["mia_auc"]) + ("" if tpr is None else f" ({100 * tpr:.1f}%)")
        aa = "-" if h["aa_train"] is None else f"{h['aa_train']:.3f} / {h['aa_holdout']:.3f}"
        lines.append(f"| {r['set']} | {r['generator']} | {cpu} | {disc} | {_f(h['predictive'], 4)} "
                     f"({_f(h['floor_predictive'], 4)}) | {_f(h['context_fid'], 3)} ({_f(h['floor_context_fid'], 3)}) "
                     f"| {_f(h['correlational'])} ({_f(h['floor_correlational'])}) | {mia} | {aa} | "
                     f"{'-' if h['privacy_loss'] is None else format(h['privacy_loss'], '+.3f')} | "
                     f"{_f(h.get('memorisation_ratio'), 2)} |")
    lines += ["", "Generators:", ""] + [f"- `{g}`: {what}" for g, what in GENERATORS.items()
                                         if any(r["generator"] == g for r in rows)]
    return "\n".join(lines) + "\n"


def picture(doc, path):
    """Per set: the discriminative score of each generator (its floor dashed) and the membership attack's AUC."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = [s for s in SETS if any(r["set"] == s for r in doc["rows"])] + \
        sorted({r["set"] for r in doc["rows"]} - set(SETS))
    gens = [g for g in GENERATORS if any(r["generator"] == g for r in doc["rows"])]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    width = 0.8 / max(len(sets), 1)
    for i, s in enumerate(sets):
        rows = {r["generator"]: r["scores"] for r in doc["rows"] if r["set"] == s}
        xs = [j + i * width for j, g in enumerate(gens) if g in rows]
        got = [rows[g] for g in gens if g in rows]
        axes[0].bar(xs, [h["discriminative"] or 0 for h in got], width, label=s,
                    yerr=[h["discriminative_std"] or 0 for h in got], capsize=2)
        floor = next((h["floor_discriminative"] for h in got if h["floor_discriminative"] is not None), None)
        if floor is not None:
            axes[0].axhline(floor, color=f"C{i}", linestyle="dashed", linewidth=1)
        axes[1].bar(xs, [h["mia_auc"] or 0 for h in got], width, label=s)
    axes[1].axhline(0.5, color="k", linestyle="dashed", linewidth=1)
    for ax, what in zip(axes, ("discriminative score (lower is better; dashed: floor)",
                               "membership-inference AUC (0.5: nothing revealed)")):
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(gens))])
        ax.set_xticklabels(gens)
        ax.set_ylabel(what, fontsize=8)
        ax.legend(fontsize=7)
    axes[1].set_ylim(0, 1)
    fig.suptitle(f"{doc['budget']} of CPU per generator, {doc['protocol']} protocol, {doc['cpu']}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(doc, results, stem):
    from gan_sru.files import atomic_write_text

    os.makedirs(results, exist_ok=True)
    for r in doc["rows"]:  # the table's numbers from each row's metrics.json, so a new column fills old rows
        if "metrics" in r:
            r["scores"] = headline(r["metrics"])
    atomic_write_text(os.path.join(results, f"{stem}.json"), json.dumps(doc, indent=1) + "\n")
    text = markdown(doc)
    atomic_write_text(os.path.join(results, f"{stem}.md"), text)
    picture(doc, os.path.join(results, f"{stem}.png"))
    return text


def run_set(name, args, doc, results):
    """Write the set's split, make and score each generator's samples; the rows added to `doc`."""
    from gan_sru.train.duration import parse_duration

    budget_s = parse_duration(args.budget)
    folder = os.path.join(args.work, name)
    cfg = set_config(name, args.seed, args.budget, args.work, args.override)
    paths, names, train = write_split(cfg, folder)
    log = os.path.join(folder, "log.txt")
    for gen in args.generators.split(","):
        key = f"{name}_{gen}_{args.protocol}" + (f"_{args.budget}" if gen in BUDGETED else "")
        if key in {r["key"] for r in doc["rows"]}:
            continue
        gdir = os.path.join(folder, gen)
        os.makedirs(gdir, exist_ok=True)
        fake = os.path.join(gdir, "samples.csv")
        if gen == "gan_sru":
            made = gan_sru_samples(cfg, fake, args.num, args.seed, log)
        elif gen == "par":
            made = par_samples(paths["train"], fake, args.num, args.seed, budget_s, args.peers_python, log,
                               args.par_sequences)
        elif gen == "var":
            made = var_samples(train, names, fake, args.num, args.seed, args.var_maxlags)
        else:  # the copier and the floor: the real windows themselves
            fake, made = paths[gen], {"command": f"--fake {paths[gen]}"}
        metrics, command, score_cpu = score(paths, fake, os.path.join(gdir, "scores"), args.protocol, args.repeats,
                                            args.num, args.seed, args.only, log)
        row = dict(made, key=key, benchmark_command=doc["command"], set=name, generator=gen,
                   budget=args.budget if gen in BUDGETED else None, num_train=len(train), score_command=command,
                   score_cpu_seconds=round(score_cpu, 1), scores=headline(metrics), metrics=metrics)
        doc["rows"] = [r for r in doc["rows"] if r["key"] != key] + [row]
        write(doc, results, args.stem)
        h = row["scores"]
        print(f"{key}: discriminative {_f(h['discriminative'])} (floor {_f(h['floor_discriminative'])}), "
              f"membership AUC {_f(h['mia_auc'])}", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--generators", default=",".join(GENERATORS))
    p.add_argument("--budget", default="2m", help="CPU time of each generator's fit, e.g. 90s, 3m")
    p.add_argument("--protocol", default="fast", choices=("fast", "paper"))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--num", type=int, default=1000, help="sequences generated, and at most that many scored")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", default=None, help="gan-sru score --only (default: every section)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a config override of every set (e.g. data.num_sequences=60 for a smoke test)")
    p.add_argument("--var-maxlags", type=int, default=6)
    p.add_argument("--par-sequences", type=int, default=250,
                   help="training windows PAR is fit on (its epoch is one full-batch step over all of them)")
    p.add_argument("--peers-python", default="/tmp/peers/bin/python", help="the venv that has sdv")
    p.add_argument("--work", default="/tmp/gan_sru_peers")
    p.add_argument("--results", default=RESULTS)
    p.add_argument("--stem", default="peers")
    p.add_argument("--table", action="store_true", help="write the .md and .png from the .json; run nothing")
    # the PAR fit, run by the peers venv's python (this file imports nothing of gan_sru at the top)
    p.add_argument("--par-fit", default=None, help=argparse.SUPPRESS)
    p.add_argument("--par-budget", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument("--par-report", default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.par_fit:
        return par_main(args)
    sys.path.insert(0, REPO)
    unknown = [g for g in args.generators.split(",") if g not in GENERATORS]
    if unknown:
        raise SystemExit(f"--generators: unknown {', '.join(unknown)}; expected some of {', '.join(GENERATORS)}")
    json_path = os.path.join(args.results, f"{args.stem}.json")
    doc = {"rows": []}
    if os.path.exists(json_path):
        with open(json_path) as f:
            doc = json.load(f)
    if args.table:
        print(write(doc, args.results, args.stem), end="")
        return
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    from quality import cpu_model

    from gan_sru.context import set_context

    set_context(argparse.Namespace(context="cpu", device_id="0", type_config="float"))
    doc.update({"stem": args.stem, "cpu": cpu_model(), "budget": args.budget, "protocol": args.protocol,
                "repeats": args.repeats,
                "command": "benchmarks/peers.py " + " ".join(argv if argv is not None else sys.argv[1:])})
    for name in args.sets.split(","):
        run_set(name, args, doc, args.results)
    print(write(doc, args.results, args.stem), end="")


if __name__ == "__main__":
    main()
