"""`gan-sru train` / `python train.py`: train a run from a config (or profile it with --profile).

Under an MPI launcher (`mpirun -n N gan-sru train ...`, `srun ...`) every process is one rank of a
data-parallel run (gan_sru/train/distributed.py); without one, nothing about a run changes.
"""
from gan_sru.config import load_config
from gan_sru.context import set_context


def start_ranks(args):
    """The communicator (NullCommunicator without a launcher), the config loaded on every rank and checked to
    be the same everywhere, and the nnabla context. Returns (comm, cfg); from the config on, an error on any
    rank is an error on all of them (`distributed.guard` around the caller's work ends the job otherwise)."""
    from gan_sru.train import distributed

    comm = distributed.start(args.context, args.type_config)  # its errors happen alike on every rank
    if comm.device_id is not None:  # one GPU per rank: the communicator picked this rank's
        args.device_id = comm.device_id
    with distributed.guard(comm):
        cfg = comm.collective(lambda: load_config(args.config, args.overrides))
        comm.check_same({"config": cfg, "resume": getattr(args, "resume", False), "context": args.context,
                         "type_config": args.type_config}, "resolved configs",
                        hint=f"; start every rank with the same command line and config file (mpirun -n "
                             f"{comm.size} gan-sru train --config C ...)")
        comm.local_batch(cfg["train"]["batch_size"])  # refuses a global batch the ranks cannot share evenly
        comm.collective(lambda: set_context(args))
    return comm, cfg


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
