"""What forward-pass reuse saves: `gan-sru profile` on the default config (configs/sines.yaml), CPU.

    .venv/bin/python benchmarks/profile_reuse.py [--steps 30] [--warmup 5] [--config configs/sines.yaml]

Each strategy (linked, recompute, detached) runs in a worker process of its own; the workers take turns
step by step, so changes in machine load hit all three alike. Writes benchmarks/results/profile_reuse.json,
.md and .png, prints the table and the two figures the project reports:
  * detached's saving over recompute as a percentage of one measured G forward (target >= 80%);
  * the linked / detached median step-time ratio.
"""
import argparse
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

TARGET_PCT = 80.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=os.path.join(REPO, "configs", "sines.yaml"))
    parser.add_argument("--steps", type=int, default=30, help="timed steps per strategy (default: 30)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up steps per strategy (default: 5)")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results"))
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()

    from gan_sru.config import load_config
    from gan_sru.profiling import ExtensionContext, format_table, profile, write_report

    cfg = load_config(args.config)
    report = profile(cfg, steps=args.steps, warmup=args.warmup, context=ExtensionContext("cpu"),
                     progress=not args.no_progress)
    paths = write_report(report, args.out, stem="profile_reuse")
    print(format_table(report))
    sv = report["savings"]
    pct, ratio = sv["recompute"]["saving_of_bound_pct"], sv["linked"]["step_time_ratio"]
    verdict = "meets" if pct >= TARGET_PCT else "BELOW"
    print(f"\n{cfg['name']}, {args.steps} timed steps after {args.warmup} warm-up steps, CPU:")
    print(f"  detached saving over recompute: {pct:.1f}% of one G forward "
          f"({sv['recompute']['saving_ms']:.2f} of {sv['recompute']['bound_ms']:.2f} ms) "
          f"-- {verdict} the {TARGET_PCT:.0f}% target")
    print(f"  linked / detached step-time ratio: {ratio:.3f} "
          f"({report['results']['linked']['step_ms']['median']:.2f} / "
          f"{report['results']['detached']['step_ms']['median']:.2f} ms)")
    print(f"\nwritten: {paths['json']}\n         {paths['md']}\n         {paths['png']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
