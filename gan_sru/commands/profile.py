"""`gan-sru profile` and `train.py --profile`: the step strategies side by side (see gan_sru.profiling)."""
import os
import sys

from gan_sru.profiling import (
    DEFAULT_STEPS,
    DEFAULT_STRATEGIES,
    DEFAULT_WARMUP,
    ExtensionContext,
    format_table,
    parse_strategies,
    profile,
    write_report,
)
from gan_sru.profiling.measure import check_counts


def run_profile(cfg, args, out=None, comm=None):
    """`gan-sru profile` / `train.py --profile` on a loaded config; args as cli parses them (the train
    parser has no --steps/--warmup/--strategies/--out: the defaults apply). Under mpirun (`comm` of several
    ranks) every rank profiles its shard in-process and rank 0 writes and prints the report. The keys the
    config leaves unset take the recipe's values first, as in training; the report's "recipe" lists them."""
    strategies = parse_strategies(getattr(args, "strategies", None) or ",".join(DEFAULT_STRATEGIES))
    steps, warmup = getattr(args, "steps", DEFAULT_STEPS), getattr(args, "warmup", DEFAULT_WARMUP)
    check_counts(steps, warmup)
    out_dir = getattr(args, "out", None) or os.path.join(cfg.run_dir, cfg.name, "profile")
    cfg, choices = _with_recipe(cfg)
    report = profile(cfg, strategies, steps=steps, warmup=warmup, context=ExtensionContext.from_args(args),
                     progress=not getattr(args, "no_progress", False), comm=comm)
    report["recipe"] = {key: value for key, (value, _) in choices.items()}
    if comm is not None:  # rank 0 writes and prints; its error is every rank's
        paths = comm.collective(lambda: write_report(report, out_dir), root_only=True)
        if not comm.is_root:
            return 0
    else:
        paths = write_report(report, out_dir)
    out = out or sys.stdout
    print(format_table(report), file=out)
    print(f"\nreport: {paths['md']}\n        {paths['json']}\n        {paths['png']}", file=out, flush=True)
    return 0


def _with_recipe(cfg):
    """The config with the recipe's choices for its data (gan_sru/recipe.py), as `gan-sru train` applies them,
    so the profiled step is the one training runs; and the choices."""
    from gan_sru.data import training_data
    from gan_sru.recipe import apply_recipe

    cfg, _, choices = apply_recipe(cfg, training_data(cfg).train.sequences)
    return cfg, choices


def main(args):
    from gan_sru.train import distributed
    from gan_sru.train.launch import start_ranks

    parse_strategies(args.strategies)  # refuse a bad list before loading anything heavy
    comm, cfg = start_ranks(args)  # under mpirun: the ranks, checked to hold the same config
    with distributed.guard(comm):
        return run_profile(cfg, args, comm=comm)
