"""Sampling from a generator: in-process (during training) and from a run folder's checkpoint."""
import os

import nnabla as nn
import numpy as np

import models
from gan_sru import CheckpointError
from gan_sru.config import load_config, resolve_config
from gan_sru.data import BucketSpec, MinMaxScaler
from gan_sru.train.run_folder import RunFolder

_GENERATE_STREAM = 11


def generate_sequences(cfg, length, num, seed, max_len, num_features, lengths=None, batch_size=256):
    """`num` sequences from the generator whose parameters are under scope "G", in the [0, 1] scale.

    length: steps of the generated array; lengths: optional (num,) valid lengths (right-padded with 0).
    Returns float32 (num, length, C). The same seed gives the same sequences.
    """
    gcfg = cfg["model"]["generator"]
    rng = np.random.default_rng([seed, _GENERATE_STREAM])
    lengths = np.full(num, length) if lengths is None else np.asarray(lengths)
    out = np.zeros((num, length, num_features), np.float32)
    graphs = {}
    for start in range(0, num, batch_size):
        b = min(batch_size, num - start)
        if b not in graphs:
            noise = {k: nn.Variable(s) for k, s in models.noise_shapes(gcfg, length, b).items()}
            mask = nn.Variable((length, b))
            with nn.parameter_scope("G"):
                fake = models.build_generator(gcfg, noise, mask, num_features, max_len, train=False)
            graphs[b] = (noise, mask, fake)
        noise, mask, fake = graphs[b]
        for k, v in models.sample_noise(gcfg, length, b, rng).items():
            noise[k].d = v
        mask.d = (np.arange(length)[:, None] < lengths[start:start + b][None, :]).astype(np.float32)
        fake.forward(clear_buffer=True)
        out[start:start + b] = np.transpose(fake.d, (1, 0, 2))
    return out


class TrainedRun:
    """A run folder's config and one checkpoint, with the generator's parameters loaded into nnabla."""

    def __init__(self, run_path, step=None):
        folder = RunFolder(run_path)
        if not os.path.isfile(folder.config_path):
            raise CheckpointError(f"{run_path}: not a run folder (no config.yaml)")
        found = dict(folder.list_checkpoints())
        if not found:
            raise CheckpointError(f"{run_path}: the run has no checkpoint yet")
        if step is None:
            step = max(found)
        elif step not in found:
            raise CheckpointError(f"{run_path}: no checkpoint at step {step}; available: {sorted(found)}")
        from gan_sru.train.run_folder import Checkpoint

        ckpt = Checkpoint.load(found[step])
        self.folder, self.step, self.checkpoint = folder, step, ckpt
        # through the schema: fills keys added since the run was made (with defaults that keep old behaviour)
        saved = ckpt.meta.get("config")
        self.cfg = (resolve_config(saved, where=f"{found[step]} (saved config)") if saved
                    else load_config(folder.config_path))
        self.scaler = MinMaxScaler.from_dict(ckpt.meta["scaler"])
        self.spec = BucketSpec.from_dict(ckpt.meta["buckets"])
        self.num_features = int(ckpt.meta["num_features"])
        self.max_len = int(self.spec.boundaries[-1])
        self.checkpoints = sorted(found)
        self._load_generator()

    def _load_generator(self):
        """Create the generator's parameters (by building a tiny graph) and copy the checkpoint's into them."""
        nn.clear_parameters()
        generate_sequences(self.cfg, 2, 1, 0, self.max_len, self.num_features)
        with nn.parameter_scope("G"):
            params = {f"G/{k}": v for k, v in nn.get_parameters(grad_only=False).items()}
        for name, var in params.items():
            if name not in self.checkpoint.params:
                raise CheckpointError(f"checkpoint step {self.step} has no parameter {name}")
            # the moving average of G's weights when the run kept one (train.g_ema > 0)
            saved = self.checkpoint.params.get(f"EMA/{name}", self.checkpoint.params[name])
            if tuple(saved.shape) != tuple(var.shape):
                raise CheckpointError(f"checkpoint step {self.step}: parameter {name} has shape "
                                      f"{tuple(saved.shape)}, the config's generator has {tuple(var.shape)}")
            var.d = saved

    def sample(self, num, seed, length=None, lengths=None):
        """(num, L, C) in the [0, 1] scale plus the (num,) lengths used."""
        L = int(length or self.max_len)
        if lengths is None:
            lengths = np.full(num, L)
        return generate_sequences(self.cfg, L, num, seed, self.max_len, self.num_features, lengths), lengths
