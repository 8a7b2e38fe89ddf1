"""`gan-sru tune`: search a config's hyperparameters with Optuna (gan_sru/tuning/), write the best config.

    gan-sru tune --config C --trials N --workers W --budget 5m --storage STORAGE --out best.yaml [--set K=V]

--workers W > 1 starts W worker processes on this machine (each `gan-sru tune ... --workers 1 --worker`) that
share the study through STORAGE; more machines join with the same command and an RDB URL as --storage. When
the study holds N finished trials the command writes --out (the config with the best trial's values) and
prints the command that trains it. Run again with the same --study and --storage to go on or to add trials.
"""
import os
import subprocess
import sys

from gan_sru import GanSruError


def main(args):
    from gan_sru import tracking
    from gan_sru.context import set_context
    from gan_sru.tuning import Study, parse_duration

    set_context(args)
    study = Study(args.config, args.overrides, study=args.study, storage=args.storage,
                  budget_s=parse_duration(args.budget), trials=args.trials, track=args.track,
                  validation_fraction=args.validation, score_num=args.score_num, score_repeats=args.score_repeats,
                  score_iterations=args.score_iterations, pruner=args.pruner, seed=args.seed)
    if args.workers < 1:
        raise GanSruError(f"--workers {args.workers}: expected at least 1")
    if not args.worker:
        print(f"study {study.name} in {args.storage}: {args.trials} trials of {args.budget} each, "
              f"{args.workers} worker(s); trial run folders in {study.trial_dir}", flush=True)
    if args.workers == 1:
        result = study.work()
    elif tracking.is_enabled(study.cfg, args.track):  # one process creates a new store's tables first
        tracking.prepare_store(tracking.resolve_uri(study.cfg), study.name)
        result = _spawn(args)
    else:
        result = _spawn(args)
    if args.worker:
        return 0
    _report(study, result, args.out)
    return 0


def _spawn(args):
    """W worker processes of this command (--workers 1 --worker); an error if any of them failed."""
    procs = [subprocess.Popen([sys.executable, "-m", "gan_sru", *_worker_argv(args, i)]) for i in range(args.workers)]
    codes = [p.wait() for p in procs]
    bad = [c for c in codes if c != 0]
    if bad:
        raise GanSruError(f"{len(bad)} of {len(procs)} tune workers failed (exit status {bad[0]}); the study keeps "
                          "their finished trials: run the same command again to go on")
    from gan_sru.tuning import Study

    return Study(args.config, args.overrides, study=args.study, storage=args.storage, trials=args.trials).study()


def _worker_argv(args, index):
    """This command's arguments for worker `index`: --workers 1 --worker (the parent writes --out); with --seed,
    seed + index (workers with one seed would suggest the same values)."""
    argv = ["tune", "--config", args.config, "--trials", str(args.trials), "--budget", args.budget,
            "--storage", args.storage, "--out", args.out, "--validation", str(args.validation),
            "--score-num", str(args.score_num), "--score-repeats", str(args.score_repeats), "--pruner", args.pruner,
            "--context", args.context, "--device-id", args.device_id, "--type-config", args.type_config,
            "--workers", "1", "--worker"]
    for text in args.overrides:
        argv += ["--set", text]
    for flag, value in (("--study", args.study), ("--score-iterations", args.score_iterations),
                        ("--seed", None if args.seed is None else args.seed + index)):
        if value is not None:
            argv += [flag, str(value)]
    return argv + (["--track"] if args.track else [])


def _report(study, result, path):
    from optuna.trial import TrialState

    trials = result.get_trials(deepcopy=False)
    done = [t for t in trials if t.state == TrialState.COMPLETE]
    if not done:
        raise GanSruError(f"study {study.name}: no trial completed ({len(trials)} trials: "
                          f"{_states(trials)}); nothing to write")
    path, best = study.best_config(result, path)
    print(f"trials: {_states(trials)}")
    print("best trials (validation discriminative score, paper protocol; lower is better):")
    for t in sorted(done, key=lambda t: t.value)[:5]:
        values = ", ".join(f"{k}={_short(v)}" for k, v in t.params.items())
        print(f"  trial {t.number:4d}  {t.value:.4f}  {values}")
    print(f"best config: {path}")
    print(f"train it:    gan-sru train --config {os.path.relpath(path)}")


def _states(trials):
    from collections import Counter

    counts = Counter(t.state.name.lower() for t in trials)
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


def _short(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)
