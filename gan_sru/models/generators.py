"""Generators: noise sequences -> synthetic sequences in the data's [0, 1] scale."""
import nnabla as nn
import nnabla.functions as F
import numpy as np

from gan_sru.ops.elementwise import mask_steps
from gan_sru.ops.matmul import affine
from gan_sru.ops.sru import sru
from gan_sru.registry import GENERATORS


@GENERATORS.register("sru")
def sru_generator(gcfg, noise, mask, num_features, max_len, train=True, impl="auto", logits=False):
    """SRU stack over [per-step noise, per-sequence noise, time t/max_len] -> affine -> sigmoid.

    noise: dict of nn.Variable, step (L, B, Z) and static (B, S); mask (L, B); max_len: the longest training
    length (scales the time feature the same way in every bucket); impl: the SRU's, "auto" (fused recurrence,
    BLAS matmul) or "ref" (plain nnabla ops only: what `gan-sru export` serialises); logits: return the
    pre-activations (a conditional run's categories take a Gumbel-softmax of them). Returns (L, B, C), 0 at
    padding.
    The per-sequence noise and the time feature give an SRU (whose state is elementwise, with no recurrent
    matrix) what it needs to draw whole-sequence traits such as a sine's frequency and phase.
    """
    step = noise["step"]
    L, B, _ = step.shape
    parts = [step]
    if gcfg["static_noise_dim"] > 0:
        static = noise["static"]
        parts.append(F.broadcast(F.reshape(static, (1, B, static.shape[1])), (L, B, static.shape[1])))
    t = (np.arange(L, dtype=np.float32) / max(max_len - 1, 1)).reshape(L, 1, 1)
    parts.append(F.constant(0.0, (L, B, 1)) + nn.Variable.from_numpy_array(t))
    inp = F.concatenate(*parts, axis=2)
    with nn.parameter_scope("generator"):
        h, _ = sru(inp, gcfg["hidden_size"], num_layers=gcfg["num_layers"], bidirectional=gcfg["bidirectional"],
                   mask=mask, impl=impl, train=train, name="sru")
        out = affine(h, num_features, name="output", impl=impl)
    # the data is scaled to [0, 1]; other activations scored no better (docs/results/2026-12-01-generator-output.md)
    if not logits:
        out = F.sigmoid(out)
    return mask_steps(out, mask, impl)  # zero the padded steps, as the real batch is

