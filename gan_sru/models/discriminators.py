"""Discriminators: sequences (L, B, C) + mask (L, B) -> one logit per sequence (B, 1)."""
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np

from gan_sru.ops.matmul import affine, matmul
from gan_sru.ops.sru import sru
from gan_sru.registry import DISCRIMINATORS


def _mean_over_valid_steps(h, mask):
    """h (L, B, H) that is already 0 at padded steps, mask (L, B) -> (B, H): the mean over valid steps.
    (No h * mask: nnabla's broadcasting multiply is slow on CPU, and the SRU output is 0 there anyway.) The sum
    over time is a (1, L) x (L, B H) matmul: nnabla's CPU F.sum over the first axis is slow enough at long
    lengths to be a sizeable share of D's time in a training step."""
    L, B, H = h.shape
    ones = nn.Variable.from_numpy_array(np.ones((1, L), np.float32))
    total = F.reshape(matmul(ones, F.reshape(h, (L, B * H))), (B, H))
    return total / F.reshape(F.sum(mask, axis=0), (B, 1))


def minibatch_std(feats, group):
    """feats (B, F) -> (B, F): each feature's standard deviation over the row's group of ``group`` rows (rows
    b, b + B/g, b + 2 B/g, ...; ProGAN's minibatch standard deviation, per feature rather than averaged). A
    batch is all real or all fake, so D can score a batch's diversity: a generator that draws too alike
    sequences (one amplitude, one mixture of the factors) is told so. group is cut to the largest divisor of
    B that is at most group (the whole batch when B is prime)."""
    B, width = feats.shape
    g = max([d for d in range(2, min(group, B) + 1) if B % d == 0] or [B])
    x = F.reshape(feats, (g, B // g, width))
    centred = x - F.broadcast(F.mean(x, axis=0, keepdims=True), x.shape)
    std = F.pow_scalar(F.mean(centred * centred, axis=0) + 1e-8, 0.5)  # (B / g, width)
    return F.reshape(F.broadcast(F.reshape(std, (1, B // g, width)), (g, B // g, width)), (B, width))


def _head(feats, width, features=False, group=0):
    """A small MLP from pooled features to one logit: pooled features need a nonlinearity after them to
    score things like roughness (|x_t - x_t-1|) that a linear map of time-means cannot see.
    group > 1: the MLP also reads the features' minibatch standard deviation (``minibatch_std``).
    features=True: (logit, the hidden layer (B, width)), for a projection discriminator's inner product."""
    if group > 1 and feats.shape[0] > 1:
        feats = F.concatenate(feats, minibatch_std(feats, group), axis=1)
    h = F.leaky_relu(affine(feats, width, name="head"), 0.2)
    out = affine(h, 1, name="output")
    return (out, h) if features else out


def sequence_statistics(seqs, mask):
    """Per-sequence summary statistics, (L, B, C) + mask (L, B) -> (B, 3 C + C C): each feature's mean, standard
    deviation and mean |x_t - x_t-1| over the valid steps, and the C x C correlation matrix of the features.
    Cross-feature structure is what a recurrent D learns slowly on wide data; here it is one input away."""
    L, B, C = seqs.shape
    m = F.reshape(mask, (L, B, 1))
    mc = F.broadcast(m, (L, B, C))
    n = F.reshape(F.sum(mask, axis=0), (B, 1))
    mean = F.sum(seqs, axis=0) / F.broadcast(n, (B, C))
    centred = (seqs - F.broadcast(F.reshape(mean, (1, B, C)), (L, B, C))) * mc
    cov = F.batch_matmul(F.transpose(centred, (1, 2, 0)), F.transpose(centred, (1, 0, 2)))
    cov = cov / F.broadcast(F.reshape(n, (B, 1, 1)), (B, C, C))  # (B, C, C)
    std = F.pow_scalar(F.matrix_diag_part(cov) + 1e-4, 0.5)  # (B, C); floor 0.01 keeps 1/std bounded
    inv = 1.0 / std
    corr = cov * F.broadcast(F.reshape(inv, (B, C, 1)), (B, C, C)) * F.broadcast(F.reshape(inv, (B, 1, C)), (B, C, C))
    parts = [mean, std]
    if L > 1:
        step = F.slice(seqs, start=(1, 0, 0), stop=(L, B, C)) - F.slice(seqs, start=(0, 0, 0), stop=(L - 1, B, C))
        moved = F.sum(F.abs(step * F.slice(mc, start=(1, 0, 0), stop=(L, B, C))), axis=0)
        parts.append(moved / F.broadcast(F.maximum_scalar(n - 1.0, 1.0), (B, C)))
    parts.append(F.reshape(corr, (B, C * C)))
    return F.concatenate(*parts, axis=1)


def step_features(seqs, mask, width, window=2):
    """(L, B, C) + mask (L, B) -> (L, B, width): leaky_relu(W [x_t, x_t - x_t-1, ..., x_t-w+2 - x_t-w+1] + b) at
    every valid step (w = window >= 2; steps before the first are the first step, so their differences are 0), 0
    at padding. An SRU's elementwise recurrence sees differences only through its gates; this layer gives D
    |step|-like features directly, and with w > 2 the joint shape of a few steps (call under D's scope)."""
    L, B, C = seqs.shape
    if window < 2:
        raise ValueError(f"step_features: window {window}; expected at least 2")
    shifted = [seqs]  # shifted[j][t] = x_max(t-j, 0)
    for j in range(1, window):
        if L > j:
            first = F.broadcast(F.slice(seqs, stop=(1, B, C)), (j, B, C))
            shifted.append(F.concatenate(first, F.slice(seqs, stop=(L - j, B, C)), axis=0))
        else:
            shifted.append(F.broadcast(F.slice(seqs, stop=(1, B, C)), (L, B, C)))
    parts = [seqs] + [shifted[j - 1] - shifted[j] for j in range(1, window)]
    x = F.concatenate(*parts, axis=2)
    h = F.leaky_relu(PF.affine(x, width, base_axis=2, name="step_features"), 0.2)
    return h * F.broadcast(F.reshape(mask, (L, B, 1)), (L, B, width))


@DISCRIMINATORS.register("sru_bi")
def sru_bi_discriminator(dcfg, seqs, mask, train=True, features=False):
    """Bidirectional SRU stack; the time-mean of its output and its last states (and, with pooled_stats, the
    sequence's summary statistics) -> MLP head -> logit."""
    with nn.parameter_scope("discriminator"):
        inp = (step_features(seqs, mask, dcfg["hidden_size"], dcfg.get("step_window", 2)) if dcfg["step_features"]
               else seqs)
        h, c_last = sru(inp, dcfg["hidden_size"], num_layers=dcfg["num_layers"], bidirectional=True,
                        mask=mask, train=train, name="sru", identity_skip=dcfg.get("identity_skip", False))
        top = F.reshape(F.slice(c_last, start=(c_last.shape[0] - 1, 0, 0), stop=c_last.shape),
                        c_last.shape[1:])
        parts = [_mean_over_valid_steps(h, mask), F.tanh(top)]
        if dcfg["pooled_stats"]:
            parts.append(sequence_statistics(seqs, mask))
        return _head(F.concatenate(*parts, axis=1), dcfg["hidden_size"], features, dcfg.get("minibatch_std", 0))


@DISCRIMINATORS.register("conv1d")
def conv1d_discriminator(dcfg, seqs, mask, train=True, features=False):
    """1-D convolutions over time (same padding, leaky ReLU, padding re-zeroed) -> masked mean -> MLP head."""
    L, B, C = seqs.shape
    m = F.reshape(F.transpose(mask, (1, 0)), (B, 1, L))
    x = F.transpose(seqs, (1, 2, 0))  # (B, C, L)
    k = dcfg["kernel_size"]
    mc = F.broadcast(m, (B, dcfg["channels"], L))  # once: a broadcasting multiply per layer is slow on CPU
    with nn.parameter_scope("discriminator"):
        for layer in range(dcfg["num_layers"]):
            x = PF.convolution(x, dcfg["channels"], (k,), pad=(k // 2,), name=f"conv{layer}")
            if k % 2 == 0:  # an even kernel with pad k//2 gives L + 1 steps
                x = F.slice(x, stop=(B, dcfg["channels"], L))
            x = F.leaky_relu(x, 0.2) * mc
        feats = F.sum(x, axis=2) / F.reshape(F.sum(m, axis=2), (B, 1))
        return _head(feats, dcfg["channels"], features, dcfg.get("minibatch_std", 0))

