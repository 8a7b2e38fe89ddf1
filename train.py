"""Train a sequence GAN: `python train.py --config configs/sines.yaml [--set train.steps=500] [--resume]`.

The same as `gan-sru train ...`; `--profile` runs `gan-sru profile` on the config instead.
"""
import sys

from gan_sru.commands.main import main

if __name__ == "__main__":
    sys.exit(main(["train"] + sys.argv[1:]))
