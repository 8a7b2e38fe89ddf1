"""`gan-sru` / `python -m gan_sru`: train, generate, evaluate, export, profile.

Every deliberate error (bad config, bad data, locked run folder, ...) is a GanSruError: it is printed
as one line, `error: ...`, with exit status 2, never as a traceback.

nnabla logs "[INFO]: Initializing CPU extension..." when it is first imported; quiet_nnabla() sets its
logger to WARNING before that, here, the one place where every command (and python train.py) starts.
Set GAN_SRU_NNABLA_LOG=INFO (or DEBUG) to see nnabla's messages again.
"""
import argparse
import os
import sys


def quiet_nnabla():
    """nnabla's logger ('nnabla', a logging.Logger) at WARNING or $GAN_SRU_NNABLA_LOG; nnabla only adds handlers."""
    import logging

    level = os.environ.get("GAN_SRU_NNABLA_LOG", "WARNING").upper()

    logging.getLogger("nnabla").setLevel(level)


quiet_nnabla()

from gan_sru import GanSruError  # noqa: E402  (after quiet_nnabla: gan_sru may import nnabla)


def add_context_args(p):
    p.add_argument("-c", "--context", default="cpu", choices=("cpu", "cuda", "cudnn"),
                   help="nnabla extension context (default: cpu)")
    p.add_argument("-d", "--device-id", default="0", help="GPU device id (default: 0)")
    p.add_argument("-t", "--type-config", default="float", help="nnabla type config (default: float)")


def add_train_args(p):
    p.add_argument("--config", default=None,
                   help="YAML config file, e.g. configs/sines.yaml; without it, --data FILE and the recipe's choices")
    p.add_argument("--window", type=int, default=None, metavar="N",
                   help="cut the data into windows of N steps (data.window)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set train.steps=500 (repeatable)")
    p.add_argument("--resume", action="store_true", help="continue the run from its newest checkpoint")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--profile", action="store_true", help="profile forward-pass reuse instead of training")
    p.add_argument("--track", action="store_true",
                   help="log the run to MLflow (tracking.uri, $MLFLOW_TRACKING_URI, or RUN_DIR/mlruns.db)")
    p.add_argument("--data", default=None, metavar="PATH",
                   help="the training data (data.path) of a new run; with --resume, the run's data at a new place "
                        "(checked against the fingerprint the run recorded)")
    p.add_argument("--force-data", action="store_true",
                   help="with --resume: use --data (or the changed file at the recorded place) although its "
                        "fingerprint differs")
    add_context_args(p)


def add_data_args(p, what):
    """--data / --force-data: where the run's training data is now, for the commands that read it."""
    p.add_argument("--data", default=None, metavar="PATH",
                   help=f"{what}: the run's training data at a new place (checked against the fingerprint the "
                        "run recorded; default: where it was trained)")
    p.add_argument("--force-data", action="store_true",
                   help="use --data (or the changed file at the recorded place) although its fingerprint differs")


CHECKPOINT_HELP = "a step, latest, or best (default: the one checkpoint selection chose, else the newest)"


def checkpoint_arg(text):
    """--checkpoint: a step number, 'latest' or 'best'."""
    if text in ("latest", "best"):
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a step number, 'latest' or 'best'") from None


def build_parser():
    parser = argparse.ArgumentParser(prog="gan-sru", description="Sequence GANs with an SRU generator on nnabla.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train a run on a data file (--data) or from a config (--config)")
    add_train_args(p)
    p.set_defaults(func=lambda a: _lazy("gan_sru.commands.train", a))

    p = sub.add_parser("generate", help="write samples of a trained run (.npy, .csv, pictures)")
    p.add_argument("--run", required=True, help="run folder, e.g. runs/sines")
    p.add_argument("--checkpoint", type=checkpoint_arg, default=None, metavar="STEP",
                   help=CHECKPOINT_HELP)
    p.add_argument("--num", type=int, default=1000, help="number of sequences (default: 1000)")
    p.add_argument("--length", type=int, default=None,
                   help="sequence length (default: the training lengths' distribution)")
    p.add_argument("--seed", type=int, default=0, help="noise seed; the same seed gives the same samples")
    p.add_argument("--out", default=None,
                   help="output folder (default: RUN/generated), or one file: samples.csv, .parquet, .npz, .npy")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    p.add_argument("--start", default=None, metavar="TIME",
                   help="first time of every sequence, a date or a number (default: the data's first time)")
    p.add_argument("--conditions", default=None, metavar="FILE",
                   help="conditional runs: a .csv/.parquet with one column per attribute, one row per sequence")
    p.add_argument("--condition", action="append", default=None, metavar="KEY=VALUE",
                   help="conditional runs: generate --num sequences with this attribute value (repeatable)")
    p.add_argument("--no-progress", action="store_true")
    add_context_args(p)
    p.set_defaults(func=lambda a: _lazy("gan_sru.commands.generate", a))

    p = sub.add_parser("evaluate", help="score a trained run (discriminative, predictive, Context-FID, "
                                             "correlational, MMD) with pictures")
    p.add_argument("--run", required=True, help="run folder, e.g. runs/sines")
    p.add_argument("--checkpoint", type=checkpoint_arg, default=None, metavar="STEP",
                   help=CHECKPOINT_HELP)
    p.add_argument("--num", type=int, default=1000, help="generated and real sequences compared (default: 1000)")
    p.add_argument("--repeats", type=int, default=5,
                   help="repeats of the post-hoc classifier and regressor (default: 5)")
    p.add_argument("--protocol", default="fast", choices=("fast", "paper"),
                   help="training of the GRU scores: fast (default, quick, for tracking runs) or paper "
                        "(TimeGAN's settings: 2000 / 5000 iterations, hidden C/2, lr 1e-3)")
    p.add_argument("--seed", type=int, default=0)
    from gan_sru.commands.sections import add_only_argument

    add_only_argument(p)
    p.add_argument("--no-progress", action="store_true")
    add_data_args(p, "evaluate")
    add_context_args(p)
    p.set_defaults(func=lambda a: _lazy("gan_sru.commands.evaluate", a))

    p = sub.add_parser("score", help="score generated sequences from files against real ones (no run needed)")
    from gan_sru.commands.score import add_arguments as add_score_arguments

    add_score_arguments(p)
    p.set_defaults(func=lambda a: _lazy("gan_sru.commands.score", a))

    p = sub.add_parser("export", help="write the trained generator as .nnp or .onnx, for inference elsewhere")
    p.add_argument("--run", required=True, help="run folder, e.g. runs/sines")
    p.add_argument("--checkpoint", type=checkpoint_arg, default=None, metavar="STEP",
                   help=CHECKPOINT_HELP)
    p.add_argument("--format", default=None, choices=("nnp", "onnx"),
                   help="nnp (nnabla) or onnx (default: from the --out file's name)")
    p.add_argument("--out", required=True, metavar="FILE", help="the file to write, e.g. generator.onnx")
    p.add_argument("--batch-size", type=int, default=None,
                   help=".nnp: sequences per call, fixed (default: 64); .onnx takes any batch size")
    p.add_argument("--length", type=int, default=None,
                   help="steps per sequence, fixed; shorter ones through the mask (default: the longest training "
                        "length)")
    p.set_defaults(func=lambda a: _lazy("gan_sru.commands.export", a))

    p = sub.add_parser("profile", help="measure what forward-pass reuse saves (linked / recompute / detached)")
    p.add_argument("--config", required=True)
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--steps", type=int, default=20, help="timed steps per strategy (default: 20)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps first (default: 3)")
    p.add_argument("--strategies", default="linked,recompute,detached")
    p.add_argument("--out", default=None, help="output folder (default: RUN/profile)")
    p.add_argument("--no-progress", action="store_true")
    add_context_args(p)
    p.set_defaults(func=lambda a: _lazy("gan_sru.commands.profile", a))

    p = sub.add_parser("tune", help="search hyperparameters with Optuna (many short runs), write the best config")
    p.add_argument("--config", required=True, help="YAML config file to tune")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value for every trial (repeatable)")
    p.add_argument("--trials", type=int, default=20, help="finished trials the study reaches (default: 20)")
    p.add_argument("--workers", type=int, default=1, help="worker processes on this machine (default: 1)")
    p.add_argument("--budget", default="5m", help="each trial's wall time, e.g. 90s, 5m, 1h (default: 5m)")
    p.add_argument("--storage", default="tune.journal",
                   help="Optuna storage: a journal file (one machine) or an RDB URL such as "
                        "postgresql://user:pw@host/db (many machines) (default: tune.journal)")
    p.add_argument("--study", default=None, help="study name (default: tune-<config name>); reuse it to resume")
    p.add_argument("--out", default="best.yaml", help="the best config, written at the end (default: best.yaml)")
    p.add_argument("--validation", type=float, default=0.1,
                   help="share of all sequences scored as the validation split (default: 0.1)")
    p.add_argument("--score-num", type=int, default=1000, help="validation and generated sequences scored")
    p.add_argument("--score-repeats", type=int, default=3, help="repeats of the validation classifier")
    p.add_argument("--score-iterations", type=int, default=None,
                   help="classifier iterations (default: the paper protocol's 2000)")
    p.add_argument("--pruner", default="median", choices=("median", "none"),
                   help="stop trials whose checkpoint scores trail the median (default: median)")
    p.add_argument("--seed", type=int, default=None, help="the sampler's seed (default: random)")
    p.add_argument("--track", action="store_true", help="log every trial to MLflow")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)  # a spawned worker: no --out
    add_context_args(p)
    p.set_defaults(func=lambda a: _lazy("gan_sru.commands.tune", a))
    return parser


def _lazy(module, args):
    import importlib

    if args.command not in ("train", "profile"):
        _one_process_only(args.command)
    return importlib.import_module(module).main(args)


def _one_process_only(command):
    """generate and evaluate are not data-parallel: under mpirun/srun N copies would do the same work and
    write the same files. Refused (printed by rank 0; the environment says which rank this is)."""
    from gan_sru.train.distributed import detect_launch, leave_unless_root

    launch = detect_launch()
    if launch is not None and launch.size != 1:
        leave_unless_root(launch)
        raise GanSruError(f"`gan-sru {command}` runs in one process, but {launch.launcher} started this one "
                          f"({launch.variable}); run it without the launcher")


def main(argv=None):
    import gan_sru.models  # noqa: F401  (fills the network registry: the entry points import it once)

    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except GanSruError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
