"""What the benchmarks that read trained run folders share: their command line, each run's checkpoint and data
split, its generated sequences, and their JSON results file (one entry per run and step)."""
import argparse
import json
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(doc, more=None):
    """RUN [RUN ...] [--checkpoint STEP|latest] [--num N], described by the first line of `doc`; more(parser)
    adds a benchmark's own options."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--checkpoint", default=None,
                        help="a step, or latest (default: the selected one, else the newest)")
    parser.add_argument("--num", type=int, default=1000)
    if more is not None:
        more(parser)
    return parser.parse_args()


def each_run(args):
    """(name, run, train, holdout) for each run folder of `args`: its `TrainedRun` at the chosen checkpoint and
    its config's training and held-out `Dataset`s (the [0, 1] training scale)."""
    sys.path.insert(0, REPO)
    import gan_sru.models  # noqa: F401
    from gan_sru.sampling import TrainedRun, training_split

    for path in args.runs:
        step = args.checkpoint if args.checkpoint in (None, "latest") else int(args.checkpoint)
        run = TrainedRun(path, step)
        train, holdout = training_split(run.cfg)
        yield os.path.basename(os.path.normpath(path)), run, train, holdout


def generated(run, num, length):
    """num sequences of `length` steps from `run` (seed 0), (num, length, C) float64."""
    from gan_sru.sampling import generate_cut

    return np.stack(generate_cut(run, np.full(num, length), 0)).astype(np.float64)


def load_results(path):
    return json.load(open(path)) if os.path.exists(path) else {}


def save_results(path, results):
    from gan_sru.files import atomic_write_text

    atomic_write_text(path, json.dumps(results, indent=1) + "\n")
