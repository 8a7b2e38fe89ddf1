"""`gan-sru train` / `python train.py`: train a run from a config (or profile it with --profile)."""
from gan_sru.config import load_config
from gan_sru.context import set_context


def main(args):
    cfg = load_config(args.config, args.overrides)
    set_context(args)
    if args.profile:
        from gan_sru.commands.profile import run_profile
        return run_profile(cfg, args)
    from gan_sru.train import Trainer
    trainer = Trainer(cfg, resume=args.resume, progress=not args.no_progress)
    trainer.train()
    # stopped by SIGINT/SIGTERM: a checkpoint was saved, but the run is not finished (130 / 143)
    return 128 + trainer.stop_signal if trainer.stop_signal else 0
