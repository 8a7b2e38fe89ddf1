"""Conditioning wrapped around the registered builders (models/ stays unconditional).

Generator: the encoded attributes (B, W) are joined to the per-sequence noise (B, S), so the builder sees a
static input of S + W features at every step; with categorical features it returns pre-activations (L, B, C + K)
(`logits=True`): each categorical feature's block of K_j logits goes through a straight-through Gumbel-softmax
(gan_sru.ops.gumbel) with the fed Gumbel noise and temperature, and the C continuous features, plus a learned
linear map of the categories drawn at the same step, through the sigmoid. Every categorical block is
exactly one-hot, so a generated label is always one seen in training.

With model.generator.oscillators, G's per-step input also holds a bank of random-phase oscillators (see
`oscillators`), each scaled by a gain that is a learned linear function of the attributes (`oscillator_gain`):
an SRU fed only t does not reach multi-cycle periodic classes (its samples come out as jitter or slow
waves), and through the static input alone the class moves the frequency band only weakly.

Discriminator: the attributes are joined to every valid step of its input (L, B, C + K + W), or with
model.discriminator.projection a projection discriminator (`projection`: the builder's last hidden layer, taken
with features=True), with model.discriminator.spectral also a head on the magnitude spectra (`magnitude_spectra`);
plus the auxiliary attribute loss below.
"""
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np

from gan_sru.ops.gumbel import gumbel_softmax


def join_attributes(seqs, attrs, mask):
    """seqs (L, B, C), attrs (B, W), mask (L, B) -> (L, B, C + W), the attributes 0 at padded steps."""
    L, B, _ = seqs.shape
    W = attrs.shape[1]
    a = F.broadcast(F.reshape(attrs, (1, B, W)), (L, B, W))
    m = F.broadcast(F.reshape(mask, (L, B, 1)), (L, B, W))
    return F.concatenate(seqs, a * m, axis=2)


LOG_GRID_TOP = 0.6 * np.pi  # the log grid's highest frequency: a period of 3.3 steps


def oscillator_grid(size, max_len, kind="linear"):
    """The bank's frequencies (size,) in radians per step. linear: pi (j + 1) / max_len, j < size (periods
    2 max_len / (j + 1): at 256 steps and 14 oscillators none shorter than 37 steps). log: geometrically
    spaced from pi / max_len (a period of twice the window) to LOG_GRID_TOP, so that short periods (a daily
    cycle in a long hourly window) stay within reach at any length."""
    if kind == "auto":
        raise ValueError("oscillator grid 'auto' is resolved from the data first (gan_sru.sizes.apply_size_rules)")
    if kind not in ("linear", "log"):
        raise ValueError(f"unknown oscillator grid {kind!r}; expected 'linear' or 'log'")
    lowest = np.pi / max(max_len, 1)
    if kind == "log" and size > 1:
        return np.geomspace(lowest, max(LOG_GRID_TOP, lowest), size).astype(np.float32)
    return (lowest * np.arange(1, size + 1)).astype(np.float32)


def oscillators(static, length, max_len, tuning=None, grid="linear", impl="auto"):
    """static (B, S) standard normal -> (L, B, 2 S): sin and cos of w_j t + phi_j, w_j the grid's frequencies
    (`oscillator_grid`), phi_j = 2 pi sigmoid(1.7 z_j) (about uniform): a bank of random-phase oscillators drawn
    from G's per-sequence noise. An SRU cell is a leaky integrator and cannot oscillate; with this bank its gates
    (functions of the attributes and the noise) select a frequency band, and the phase is random per sequence as
    in the data. tuning: None, or (B, S) u: each sequence's frequencies are w_j exp(tanh(u_j)), within a factor
    e of the grid (see `oscillator_tuning`). impl: `gan_sru.ops.elementwise.oscillator_bank`'s."""
    from gan_sru.ops.elementwise import oscillator_bank

    B, S = static.shape
    w = oscillator_grid(S, max_len, grid)
    if tuning is None:
        freq = nn.Variable.from_numpy_array(np.broadcast_to(w[None, :], (B, S)).copy())
    else:
        freq = F.exp(F.tanh(tuning)) * F.broadcast(nn.Variable.from_numpy_array(w[None, :]), (B, S))
    phase = 2 * np.pi * F.sigmoid(1.7 * static)
    return oscillator_bank(freq, phase, length, impl)


def oscillator_tuning(static, size):
    """static (B, S') G's per-sequence input (noise, and attributes) -> (B, size) u for `oscillators`: a learned
    linear map starting at 0 (the fixed grid), so each sequence's frequencies can sit anywhere in a band, as a
    period that varies between sequences needs (the grid alone has one frequency every pi / max_len); call under
    scope "G"."""
    import nnabla.initializer as I

    return PF.affine(static, size, w_init=I.ConstantInitializer(0.0), name="oscillator_tuning")


def oscillator_gain(attrs, size):
    """attrs (B, W) -> (B, size) gains of the oscillators, 1 + a learned linear map of the attributes (starting at
    1): the attributes select a frequency band by scaling the bank directly (FiLM-like); call under scope "G"."""
    import nnabla.initializer as I

    return 1.0 + PF.affine(attrs, size, w_init=I.ConstantInitializer(0.0), with_bias=False, name="oscillator_gain")


def with_oscillators(gcfg, noise, static, attrs, length, max_len, impl="auto"):
    """G's step input with the oscillator bank appended ((L, B, Z [+ E] + 2 S)); noise["static"] (B, S) draws the
    phases, `static` (G's whole per-sequence input: noise, and attributes) the tuning; attrs (B, W) or None scale
    the bank by learned gains. Call under G's parameter scope (export builds it in its own scope, impl="ref")."""
    B = static.shape[0]
    tuning = oscillator_tuning(static, gcfg["static_noise_dim"]) if gcfg.get("oscillator_tuning") else None
    osc = oscillators(noise["static"], length, max_len, tuning, gcfg.get("oscillator_grid", "linear"), impl)
    if attrs is not None:  # the gains let the attributes move the frequency band, which G's static input barely does
        gain = oscillator_gain(attrs, osc.shape[2])
        osc = osc * F.broadcast(F.reshape(gain, (1, B, osc.shape[2])), osc.shape)
    return F.concatenate(noise["step"], osc, axis=2)


def conditional_generator(builder, gcfg, cond, noise, mask, num_features, max_len, train, options):
    """(fake (L, B, C + K), attrs (B, W) Variable or None, tau (1,) Variable or None) of a conditional run (see
    the module docstring); parameters under scope "G"."""
    L, B = mask.shape
    inputs, g = {"step": noise["step"], "static": noise["static"]}, dict(gcfg)
    attrs = None
    if cond.attr_width:
        attrs = nn.Variable((B, cond.attr_width))
        inputs["static"] = (F.concatenate(noise["static"], attrs, axis=1) if gcfg["static_noise_dim"] > 0
                            else attrs)
        g["static_noise_dim"] = gcfg["static_noise_dim"] + cond.attr_width
    if gcfg["oscillators"] and gcfg["static_noise_dim"] > 0:
        with nn.parameter_scope("G"):
            inputs["step"] = with_oscillators(gcfg, noise, inputs["static"], attrs, L, max_len,
                                              options.get("impl", "auto"))
    tau = None
    if cond.categorical:
        options = dict(options, logits=True)  # the sigmoid and the Gumbel-softmax come below
    with nn.parameter_scope("G"):
        out = builder(g, inputs, mask, num_features, max_len, train=train, **options)
    if cond.categorical:
        tau = nn.Variable.from_numpy_array([1.0])
        C = cond.num_continuous
        blocks = []
        for s, e in cond.blocks():
            logits = F.slice(out, start=(0, 0, s), stop=(L, B, e))
            gum = F.slice(noise["gumbel"], start=(0, 0, s - C), stop=(L, B, e - C))
            blocks.append(gumbel_softmax(logits, gum, tau, hard=True))
        parts = []
        if C:
            cont = F.slice(out, start=(0, 0, 0), stop=(L, B, C))
            # the continuous features see the categories drawn at their step (a learned offset per category):
            # without it they cannot agree with a draw made after them (e.g. a state's shift)
            onehot = F.concatenate(*blocks, axis=2) if len(blocks) > 1 else blocks[0]
            with nn.parameter_scope("G"):
                cont = cont + PF.affine(onehot, C, base_axis=2, with_bias=False, name="categories_to_continuous")
            parts.append(F.sigmoid(cont))
        out = F.concatenate(*(parts + blocks), axis=2) if len(parts + blocks) > 1 else (parts + blocks)[0]
        out = out * F.broadcast(F.reshape(mask, (L, B, 1)), (L, B, num_features))
    return out, attrs, tau


SPECTRAL_FREQS = 24  # w_f = pi f / 24, f = 1..24: 0.13 rad/step apart, about a 24-step sequence's resolution


def magnitude_spectra(seqs, mask, num_freqs=SPECTRAL_FREQS):
    """seqs (L, B, C), mask (L, B) -> (B, C num_freqs), feature-major: |sum_t m_t (x_t - mean) e^(-i w_f t)| / n
    over the n valid steps, w_f = pi f / num_freqs, f = 1..num_freqs (a fixed grid, whatever the length)."""
    L, B, C = seqs.shape
    m = F.reshape(mask, (L, B, 1))
    n = F.reshape(F.sum(mask, axis=0), (1, B, 1))
    x = (seqs - F.sum(seqs * m, axis=0, keepdims=True) / n) * m
    return centred_spectra(F.transpose(x, (1, 2, 0)), F.reshape(n, (B, 1, 1)), num_freqs)


def centred_spectra(x, count, num_freqs):
    """`magnitude_spectra` of sequences already centred on their mean and 0 at padded steps: x (B, C, L),
    count (B, 1, 1) their valid steps -> (B, C num_freqs)."""
    B, C, L = x.shape
    arg = np.arange(L)[:, None] * (np.pi * np.arange(1, num_freqs + 1) / num_freqs)[None, :]  # (L, NF)
    flat = F.reshape(x, (B * C, L))
    re = F.affine(flat, nn.Variable.from_numpy_array(np.cos(arg).astype(np.float32)))
    im = F.affine(flat, nn.Variable.from_numpy_array(np.sin(arg).astype(np.float32)))
    mag = F.pow_scalar(re * re + im * im + 1e-8, 0.5)  # (B C, NF); + 1e-8 keeps the gradient at 0 finite
    return F.reshape(F.reshape(mag, (B, C, num_freqs)) / count, (B, C * num_freqs))


def projection(builder, dcfg, seqs, mask, attrs, train):
    """A projection discriminator (Miyato & Koyama 2018): logit(x) + <V a, phi(x)>, phi the builder's last hidden
    layer (B, H), a the encoded attributes (B, W), V (W, H) learned (call under scope "D").
    With dcfg["spectral"], plus a second head on the magnitude spectra s(x) (`magnitude_spectra`):
    + u . psi + <U a, psi>, psi = leaky_relu(A s(x)) (B, H): the class's frequency band is one input away
    (a recurrent D alone can accept a class drawn as a slow plus a fast wave, whose std and mean |step| are
    the class's but whose spectrum is not)."""
    logit, phi = builder(dcfg, seqs, mask, train=train, features=True)
    embed = PF.affine(attrs, phi.shape[1], with_bias=False, name="projection")
    out = logit + F.sum(embed * phi, axis=1, keepdims=True)
    if dcfg["spectral"]:
        H = phi.shape[1]
        psi = F.leaky_relu(PF.affine(magnitude_spectra(seqs, mask), H, name="spectral_head"), 0.2)
        out = out + PF.affine(psi, 1, name="spectral_output") + F.sum(
            PF.affine(attrs, H, with_bias=False, name="spectral_projection") * psi, axis=1, keepdims=True)
    return out


def attribute_loss(seqs, mask, attrs, cond, width):
    """The auxiliary attribute loss (AC-GAN, Odena et al. 2017): a small bidirectional SRU under scope "D/aux"
    predicts the attributes from a sequence (L, B, C); cross-entropy per categorical attribute's block, squared
    error of a sigmoid for numeric ones; mean over the batch, summed over attributes. D minimises it on real
    sequences (learning what each attribute looks like), G on its fakes for the attributes it was given: a
    direct gradient toward the asked-for attributes, which joining them to D's input alone gives only weakly."""
    from gan_sru.ops.sru import sru

    B = mask.shape[1]
    with nn.parameter_scope("D"), nn.parameter_scope("aux"):
        h, _ = sru(seqs, width, num_layers=1, bidirectional=True, mask=mask, name="sru")
        pooled = F.sum(h, axis=0) / F.reshape(F.sum(mask, axis=0), (B, 1))
        out = PF.affine(F.leaky_relu(PF.affine(pooled, width, name="hidden"), 0.2), cond.attr_width, name="out")
    total = None
    for a, (s, e) in zip(cond.attributes, cond.attr_blocks()):
        pred = F.slice(out, start=(0, s), stop=(B, e))
        target = F.slice(attrs, start=(0, s), stop=(B, e))
        if a["kind"] == "categorical":
            term = -F.mean(F.sum(target * F.log_softmax(pred, axis=1), axis=1))
        else:
            term = F.mean(F.squared_error(F.sigmoid(pred), target))
        total = term if total is None else total + term
    return total
