"""`gan-sru train` / `python train.py`: train a run from a config (or profile it with --profile).

Under an MPI launcher (`mpirun -n N gan-sru train ...`, `srun ...`) every process is one rank of a
data-parallel run (gan_sru/train/distributed.py); without one, nothing about a run changes.
"""
from gan_sru.train.launch import start_ranks


def main(args):
    from gan_sru.train import distributed

    comm, cfg = start_ranks(args)
    with distributed.guard(comm):
        if args.profile:
            from gan_sru.commands.profile import run_profile
            return run_profile(cfg, args, comm=comm)
        from gan_sru.train import Trainer
        trainer = Trainer(cfg, resume=args.resume, progress=not args.no_progress, comm=comm)
        trainer.train()
    # stopped by SIGINT/SIGTERM: a checkpoint was saved, but the run is not finished (130 / 143)
    return 128 + trainer.stop_signal if trainer.stop_signal else 0
