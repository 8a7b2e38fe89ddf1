"""Generators: noise sequences -> synthetic sequences in the data's [0, 1] scale."""
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np

from gan_sru.ops.activations import output_activation
from gan_sru.ops.matmul import affine
from gan_sru.ops.sru import sru
from gan_sru.registry import GENERATORS

OUTPUT_NOISE_START = 0.1  # softplus(bias) at the start: the output noise's std in pre-activation units


def output_noise(h, eps, num_features):
    """h (L, B, H), eps (L, B, E) -> (L, B, C): softplus(affine(h)) * (eps A), A a learned (E, C) mixing; call
    under G's scope. Noise that bypasses the SRU, scaled per step and feature by the state: each feature's own
    innovations. A starts at the identity when E >= C (each feature its own noise, independent, as a
    measurement noise is), else N(0, 1 / E); either way eps A has unit variance per feature, and the scale
    starts at OUTPUT_NOISE_START (about 2.5% of the [0, 1] range through a sigmoid at mid-range).
    Off by default (`model.generator.output_noise_dim: 0`); `null` sizes it to the features. Measurements:
    docs/results/2026-11-28-ablation.md."""
    import nnabla.initializer as I

    E = eps.shape[2]
    if E >= num_features:  # each feature starts on a channel of its own: independent per-feature noise
        w_init = np.eye(E, num_features, dtype=np.float32)
    else:
        w_init = I.NormalInitializer(E ** -0.5)
    mixed = PF.affine(eps, num_features, base_axis=2, with_bias=False, name="output_noise_mix", w_init=w_init)
    bias = float(np.log(np.expm1(OUTPUT_NOISE_START)))
    scale = F.softplus(PF.affine(h, num_features, base_axis=2, b_init=I.ConstantInitializer(bias),
                                 name="output_noise_scale"))
    return scale * mixed


@GENERATORS.register("sru")
def sru_generator(gcfg, noise, mask, num_features, max_len, train=True, impl="auto"):
    """SRU stack over [per-step noise, per-sequence noise, time t/max_len] -> affine (+ output noise, see
    output_noise) -> output activation.

    noise: dict of nn.Variable, step (L, B, Z) and static (B, S); mask (L, B); max_len: the longest training
    length (scales the time feature the same way in every bucket); impl: the SRU's, "auto" (fused recurrence,
    BLAS matmul) or "ref" (plain nnabla ops only: what `gan-sru export` serialises). Returns (L, B, C), 0 at
    padding.
    The per-sequence noise and the time feature give an SRU (whose state is elementwise, with no recurrent
    matrix) what it needs to draw whole-sequence traits such as a sine's frequency and phase.
    """
    step = noise["step"]
    L, B, width = step.shape
    Z, E = gcfg["noise_dim"], gcfg.get("output_noise_dim", 0)
    eps = None
    if E:  # channels Z .. Z + E bypass the SRU (anything after them, e.g. oscillators, goes in)
        eps = F.slice(step, start=(0, 0, Z), stop=(L, B, Z + E))
        ins = [F.slice(step, start=(0, 0, 0), stop=(L, B, Z))]
        if width > Z + E:
            ins.append(F.slice(step, start=(0, 0, Z + E), stop=(L, B, width)))
        step = F.concatenate(*ins, axis=2) if len(ins) > 1 else ins[0]
    parts = [step]
    if gcfg["static_noise_dim"] > 0:
        static = noise["static"]
        parts.append(F.broadcast(F.reshape(static, (1, B, static.shape[1])), (L, B, static.shape[1])))
    if gcfg["time_feature"]:
        t = (np.arange(L, dtype=np.float32) / max(max_len - 1, 1)).reshape(L, 1, 1)
        parts.append(F.constant(0.0, (L, B, 1)) + nn.Variable.from_numpy_array(t))
    inp = F.concatenate(*parts, axis=2) if len(parts) > 1 else step
    with nn.parameter_scope("generator"):
        h, _ = sru(inp, gcfg["hidden_size"], num_layers=gcfg["num_layers"], bidirectional=gcfg["bidirectional"],
                   weight_c=gcfg["weight_c"], layer_norm=gcfg["layer_norm"], dropout=gcfg["dropout"],
                   activation=gcfg.get("activation", "tanh"),
                   mask=mask, impl=impl, train=train, name="sru")
        out = affine(h, num_features, name="output", impl=impl)
        if eps is not None:
            out = out + output_noise(h, eps, num_features)
    out = output_activation(out, gcfg["output_activation"])
    # zero the padded steps, as the real batch is; an explicit broadcast first (a broadcasting Mul2 is slow)
    return out * F.broadcast(F.reshape(mask, (L, B, 1)), (L, B, num_features))

