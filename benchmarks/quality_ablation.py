"""One ablation row: train a config with overrides for a fixed number of steps, score it, append a JSON line.

    .venv/bin/python benchmarks/quality_ablation.py NAME CONFIG STEPS [KEY=VALUE ...]
    .venv/bin/python benchmarks/quality_ablation.py --table   # every row so far: prints it, writes the .md
    e.g. .venv/bin/python benchmarks/quality_ablation.py mom configs/wide.yaml 1500 train.moment_loss=1.0

Trains CONFIG with `--set` overrides for STEPS steps (train.py in a subprocess, into /tmp/gan_sru_ablation/NAME),
then scores the last checkpoint with `evaluate_run` (fast protocol, N = 1000, 3 repeats, Context-FID's encoder
300 iterations; the held-out floor computed once per config and cached next to the runs) and appends one line
to benchmarks/results/quality_ablation.jsonl (`--table` renders them all as quality_ablation.md). Fixed
steps rather than a time budget, so rows measured on a loaded machine compare; what the table in the README
compares is benchmarks/quality.py's.
"""
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_DIR = "/tmp/gan_sru_ablation"


RESULTS = os.path.join(REPO, "benchmarks", "results")


def table(rows):
    """Markdown table of the ablation rows (the floors are the held-out real set's, per config)."""
    lines = ["| row | config | overrides | steps | discriminative | predictive MAE | Context-FID | correlational |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f = r["floor"]
        lines.append(f"| {r['name']} | {r['config']} | {' '.join(r['sets']) or '(defaults)'} | {r['steps']} | "
                     f"{r['disc']:.3f} ± {r['disc_std']:.3f} (floor {f['disc']:.3f}) | "
                     f"{r['pred']:.4f} ({f['pred']:.4f}) | "
                     f"{r['cfid']:.2f} ({f['cfid']:.2f}) | {r['corr']:.2f} ({f['corr']:.2f}) |")
    return "\n".join(lines) + "\n"


def write_table():
    with open(os.path.join(RESULTS, "quality_ablation.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    sys.path.insert(0, REPO)
    from gan_sru.files import atomic_write_text

    text = table(rows)
    print(text, end="")
    atomic_write_text(os.path.join(RESULTS, "quality_ablation.md"),
                      "Ablation rows (`benchmarks/quality_ablation.py`): fast protocol, N = 1000, 3 repeats; "
                      "fixed steps.\n\n" + text)


def main():
    if sys.argv[1:] == ["--table"]:
        return write_table()
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    name, config, steps, sets = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    args = [sys.executable, os.path.join(REPO, "train.py"), "--config", config, "--set", f"run_dir={RUN_DIR}",
            "--set", f"name={name}", "--set", f"train.steps={steps}", "--set", "train.sample_every=1000000",
            "--set", f"train.checkpoint_every={steps}"]
    for s in sets:
        args += ["--set", s]
    t0 = time.time()
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    train_s = time.time() - t0
    sys.path.insert(0, REPO)
    import gan_sru.models  # noqa: F401
    from gan_sru.commands.evaluate import evaluate_run

    floor_path = os.path.join(RUN_DIR, f"floor_{os.path.basename(config)}.json")
    floor = json.load(open(floor_path)) if os.path.exists(floor_path) else None
    res = evaluate_run(os.path.join(RUN_DIR, name), num=1000, repeats=3, progress=False, floor=floor,
                       iterations={"context_fid": 300})
    if floor is None:
        with open(floor_path, "w") as f:
            json.dump(res["holdout"], f)
    g, h = res["generated"], res["holdout"]
    row = dict(name=name, config=config, sets=sets, steps=steps, train_s=round(train_s, 1),
               disc=round(g["discriminative"]["mean"], 4), disc_std=round(g["discriminative"]["std"], 4),
               pred=round(g["predictive"]["mae"], 4), cfid=round(g["context_fid"], 3),
               corr=round(g["correlational"]["mean"], 3),
               floor=dict(disc=round(h["discriminative"]["mean"], 4), pred=round(h["predictive"]["mae"], 4),
                          cfid=round(h["context_fid"], 3), corr=round(h["correlational"]["mean"], 3)))
    print(json.dumps(row))
    with open(os.path.join(RESULTS, "quality_ablation.jsonl"), "a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
