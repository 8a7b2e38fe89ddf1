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
from gan_sru.profiling.measure import _check_counts


def run_profile(cfg, args, out=None):
    """`gan-sru profile` / `train.py --profile` on a loaded config; args as cli parses them (the train
    parser has no --steps/--warmup/--strategies/--out: the defaults apply)."""
    strategies = parse_strategies(getattr(args, "strategies", None) or ",".join(DEFAULT_STRATEGIES))
    steps, warmup = getattr(args, "steps", DEFAULT_STEPS), getattr(args, "warmup", DEFAULT_WARMUP)
    _check_counts(steps, warmup)
    out_dir = getattr(args, "out", None) or os.path.join(cfg["run_dir"], cfg["name"], "profile")
    report = profile(cfg, strategies, steps=steps, warmup=warmup, context=ExtensionContext.from_args(args),
                     progress=not getattr(args, "no_progress", False))
    paths = write_report(report, out_dir)
    out = out or sys.stdout
    print(format_table(report), file=out)
    print(f"\nreport: {paths['md']}\n        {paths['json']}\n        {paths['png']}", file=out, flush=True)
    return 0


def main(args):
    from gan_sru.config import load_config
    from gan_sru.context import set_context

    cfg = load_config(args.config, args.overrides)
    parse_strategies(args.strategies)  # refuse a bad list before loading anything heavy
    set_context(args)
    return run_profile(cfg, args)
