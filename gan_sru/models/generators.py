"""Generators: noise sequences -> synthetic sequences in the data's [0, 1] scale."""
import nnabla as nn
import nnabla.functions as F
import numpy as np

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
        if gcfg.get("principal_output") and not logits:
            out = principal_output(out, num_features)
    # the data is scaled to [0, 1]; other activations scored no better (docs/results/2026-12-01-generator-output.md)
    if not logits and not gcfg.get("principal_output"):
        out = F.sigmoid(out)
    # zero the padded steps, as the real batch is; an explicit broadcast first (a broadcasting Mul2 is slow)
    return out * F.broadcast(F.reshape(mask, (L, B, 1)), (L, B, num_features))



def principal_output(z, num_features):
    """mean + z @ basis: z's coordinate j moves the output along the data's j-th principal direction, scaled by
    that direction's std, so a direction the data hardly varies in (two features that move together, a copy of a
    feature) stays as narrow in G's output. The basis (C, C) and mean (C,) are parameters without gradient,
    set from the training data by `principal_basis` (identity and 0 until then). The output is clipped to
    [0, 1] in training too, so that D sees the exact bounds (zeros at night) the data holds; a linear output
    clipped only when sampling left noise above them (docs/results/2026-12-05-principal-output.md)."""
    C = num_features
    basis = nn.parameter.get_parameter_or_create("output_basis", (C, C), np.eye(C, dtype=np.float32),
                                                 need_grad=False)
    mean = nn.parameter.get_parameter_or_create("output_mean", (C,), np.zeros(C, np.float32), need_grad=False)
    return F.maximum_scalar(F.minimum_scalar(F.affine(z, basis, mean, base_axis=2), 1.0), 0.0)


def principal_basis(sequences):
    """(basis (C, C), mean (C,)) of `principal_output` from (L_i, C) training sequences in [0, 1]: the rows of
    the basis are the principal directions of their pooled steps, each times the std along it."""
    x = np.concatenate([np.asarray(s, np.float64) for s in sequences])
    mean = x.mean(axis=0)
    lam, vec = np.linalg.eigh(np.atleast_2d(np.cov(x.T, bias=True)))
    basis = (vec * np.sqrt(np.maximum(lam, 0.0))).T
    return basis.astype(np.float32), mean.astype(np.float32)
