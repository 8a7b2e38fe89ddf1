"""Regenerate the pictures the README and the docs site show (`make samples`).

Trains the default config into runs/<name> unless that run already finished (then it is reused),
generates and evaluates it, and copies the pictures into samples/. The benchmark pictures (SRU speed,
forward-pass reuse, scores over time) come from `make bench` and are copied as they are, so the
pictures match the results pages' tables.

    python scripts/make_samples.py [--config configs/sines.yaml] [--set KEY=VALUE ...]

With a conditional config (configs/sines_classes.yaml) it copies only the per-class and category pictures, to
samples/conditional_per_class.png and samples/conditional_categories.png. With another built-in set's config
(configs/wide.yaml, ...) it copies the samples and the correlation picture to samples/NAME_real_vs_generated.png
and samples/NAME_correlation.png. --run RUN uses that finished run folder (e.g. a benchmarks/quality.py run at
the CPU budget) instead of training, and keeps its evaluation when it has one.

    python scripts/make_samples.py --config configs/wide.yaml --run runs/quality_wide_...
"""
import argparse
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import gan_sru.models  # noqa: E402,F401  (fills the registries load_config checks names against)
from gan_sru.commands.main import main as cli  # noqa: E402
from gan_sru.config import load_config  # noqa: E402
from gan_sru.train.run_folder import RunFolder  # noqa: E402

SAMPLES = os.path.join(ROOT, "samples")


def copy(src, name, dest=SAMPLES):
    if os.path.exists(src):
        shutil.copyfile(src, os.path.join(dest, name))
        print(f"{os.path.join(dest, name)} <- {src}")
    else:
        print(f"{os.path.join(dest, name)}: {src} not found, left as it was")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "sines.yaml"))
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--run", default=None, help="a finished run folder to use instead of training")
    ap.add_argument("--out-dir", default=SAMPLES, help="where the pictures go (default: samples/)")
    args = ap.parse_args(argv)
    cfg = load_config(args.config, args.overrides)
    run = RunFolder(args.run or os.path.join(cfg["run_dir"], cfg["name"]))
    if args.run and not run.list_checkpoints():
        print(f"make_samples: --run {args.run}: no checkpoints there", file=sys.stderr)
        return 2
    sets = sum((["--set", o] for o in args.overrides), [])
    done = args.run or (run.list_checkpoints() and run.list_checkpoints()[-1][0] >= cfg["train"]["steps"])
    if not done:
        rc = cli(["train", "--config", args.config, *sets] + (["--resume"] if run.list_checkpoints() else []))
        if rc:
            return rc
    out = os.path.join(run.path, "generated")
    evaluated = args.run and os.path.exists(os.path.join(run.path, "evaluation", "report.md"))
    for argv_ in [["generate", "--run", run.path, "--num", "500", "--seed", "0", "--out", out]] + (
            [] if evaluated else [["evaluate", "--run", run.path]]):
        rc = cli(argv_)
        if rc:
            return rc
    dest = args.out_dir
    os.makedirs(dest, exist_ok=True)
    if cfg["data"].get("attributes") or cfg["data"].get("categorical"):  # only the conditional pictures
        for name in ("per_class.png", "categories.png"):
            copy(os.path.join(run.path, "evaluation", name), f"conditional_{name}", dest)
        return 0
    if cfg["data"]["source"] != "sines":  # another built-in set: its samples and correlations, named after it
        copy(os.path.join(out, "real_vs_generated.png"), f"{cfg['name']}_real_vs_generated.png", dest)
        copy(os.path.join(run.path, "evaluation", "correlation.png"), f"{cfg['name']}_correlation.png", dest)
        return 0
    copy(os.path.join(out, "real_vs_generated.png"), "real_vs_generated.png", dest)
    copy(os.path.join(out, "samples.png"), "generated_grid.png", dest)
    copy(os.path.join(out, "training.gif"), "training.gif", dest)
    copy(os.path.join(run.path, "losses.png"), "losses.png", dest)
    for name in ("pca.png", "autocorrelation.png", "scores.png"):
        copy(os.path.join(run.path, "evaluation", name), name, dest)
    results = os.path.join(ROOT, "benchmarks", "results")
    copy(os.path.join(results, "profile_reuse.png"), "profile.png", dest)
    for name in ("sru_speed.png", "scores_over_time.png"):
        copy(os.path.join(results, name), name, dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
