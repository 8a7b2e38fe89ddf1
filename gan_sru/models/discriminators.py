"""Discriminators: sequences (L, B, C) + mask (L, B) -> one logit per sequence (B, 1)."""
import nnabla as nn
import nnabla.functions as F

from gan_sru.ops.elementwise import time_sum
from gan_sru.ops.matmul import affine
from gan_sru.ops.sru import sru
from gan_sru.registry import DISCRIMINATORS


def _mean_over_valid_steps(h, mask):
    """h (L, B, H) that is already 0 at padded steps, mask (L, B) -> (B, H): the mean over valid steps.
    (No h * mask: nnabla's broadcasting multiply is slow on CPU, and the SRU output is 0 there anyway.)"""
    B, H = h.shape[1:]
    return time_sum(h) / F.reshape(F.sum(mask, axis=0), (B, 1))


def _head(feats, width, features=False):
    """A small MLP from pooled features to one logit: pooled features need a nonlinearity after them to
    score things like roughness (|x_t - x_t-1|) that a linear map of time-means cannot see.
    features=True: (logit, the hidden layer (B, width)), for a projection discriminator's inner product."""
    h = F.leaky_relu(affine(feats, width, name="head"), 0.2)
    out = affine(h, 1, name="output")
    return (out, h) if features else out


@DISCRIMINATORS.register("sru_bi")
def sru_bi_discriminator(dcfg, seqs, mask, train=True, features=False):
    """Bidirectional SRU stack; the time-mean of its output and its last states -> MLP head -> logit."""
    with nn.parameter_scope("discriminator"):
        h, c_last = sru(seqs, dcfg["hidden_size"], num_layers=dcfg["num_layers"], bidirectional=True,
                        mask=mask, train=train, name="sru")
        top = F.reshape(F.slice(c_last, start=(c_last.shape[0] - 1, 0, 0), stop=c_last.shape),
                        c_last.shape[1:])
        parts = [_mean_over_valid_steps(h, mask), F.tanh(top)]
        return _head(F.concatenate(*parts, axis=1), dcfg["hidden_size"], features)

