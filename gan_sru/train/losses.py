"""The GAN loss on the discriminator's outputs (B, 1), and the generator's terms' discrepancies."""
import nnabla as nn
import nnabla.functions as F
import numpy as np


def d_loss_fn(d_real, d_fake):
    """Discriminator loss from its outputs (B, 1) on real and fake sequences: least squares (LSGAN), real -> 1,
    fake -> 0. It scored better than the logistic loss on real data (docs/results/2026-11-30-loss.md)."""
    return 0.5 * (F.mean(F.squared_error(d_real, F.constant(1.0, d_real.shape))) + F.mean(d_fake * d_fake))


def g_loss_fn(d_fake):
    """Generator loss from the discriminator's outputs (B, 1) on fake sequences: least squares towards 1."""
    return 0.5 * F.mean(F.squared_error(d_fake, F.constant(1.0, d_fake.shape)))


def _fused(impl):
    """Whether a moment term takes its fused host form (gan_sru/ops/moments.py, pooled_moments.py): impl
    "auto" on a CPU context."""
    from gan_sru.ops.matmul import is_cuda_context

    if impl not in ("auto", "ref"):
        raise ValueError(f"unknown impl {impl!r}; expected 'auto' or 'ref'")
    return impl == "auto" and not is_cuda_context(nn.get_current_context())


def _masked_stats(x, mask, lag1=True):
    """Per-feature mean (1, C), std (1, C), the C x C correlation matrix (1, C, C) and, with lag1 and L >= 2,
    the lag-1 autocorrelation (1, C) of x (L, B, C) over the steps where mask (L, B) is 1 (x is 0 elsewhere)."""
    L, B, C = x.shape
    N = L * B
    count = F.reshape(F.maximum_scalar(F.sum(mask), 1.0), (1, 1))
    flat = F.reshape(x, (N, C))
    mean = F.sum(flat, axis=0, keepdims=True) / count
    centred = (flat - F.broadcast(mean, (N, C))) * F.broadcast(F.reshape(mask, (N, 1)), (N, C))
    cov = F.batch_matmul(F.reshape(centred, (1, N, C)), F.reshape(centred, (1, N, C)),
                         transpose_a=True) / F.reshape(count, (1, 1, 1))
    var = F.reshape(F.matrix_diag_part(cov), (1, C)) + 1e-8
    std = F.pow_scalar(var, 0.5)
    inv = F.reshape(1.0 / std, (1, 1, C))
    corr = cov * F.broadcast(F.reshape(inv, (1, C, 1)), (1, C, C)) * F.broadcast(inv, (1, C, C))
    if not lag1 or L < 2:
        return mean, std, corr, None
    pairs = F.reshape(F.maximum_scalar(F.sum(F.slice(mask, start=(1, 0), stop=(L, B))), 1.0), (1, 1))
    steps = F.reshape(centred, (L, B, C))
    lagged = F.slice(steps, start=(1, 0, 0), stop=(L, B, C)) * F.slice(steps, start=(0, 0, 0), stop=(L - 1, B, C))
    acf1 = F.reshape(F.sum(lagged, axis=(0, 1)), (1, C)) / F.broadcast(pairs, (1, C)) / var
    return mean, std, corr, acf1


def _constant(array, shape):
    """A reference statistic (NumPy) as a constant Variable of `shape`."""
    return nn.Variable.from_numpy_array(np.asarray(array, np.float32).reshape(shape))


def moment_loss(fake, mask, reference, impl="auto"):
    """A moment-matching term for G (TimeGAN's moment loss, plus lag-0 feature correlations and lag-1
    autocorrelations).

    fake (L, B, C), 0 at padded steps; mask (L, B); reference: the real data's [mean (C,), std (C,),
    correlations (C, C), lag-1 autocorrelation (C,) or None for L < 2] (`ops.pooled_moments.pooled_reference`).
    Over the valid steps of the batch, per feature: |mean_fake - mean_real| + |std_fake - std_real| +
    |acf1_fake - acf1_real| (lag-1 autocorrelation over the pairs of consecutive valid steps), averaged over
    features, plus the mean absolute difference of the C x C correlation matrices. Cross-feature structure
    (what the correlational score measures) is learned slowly by a discriminator when C is large, and the
    lag-1 term keeps per-step noise from turning into jitter. impl: as `sequence_moment_loss`'s ("auto": the
    fused host function of gan_sru/ops/pooled_moments.py on a CPU context; "ref": these plain ops).
    """
    if _fused(impl):
        from gan_sru.ops.pooled_moments import batch_moments

        return batch_moments(fake, mask, reference)
    C = fake.shape[2]
    mf, sf, cf, af = _masked_stats(fake, mask)
    mr, sr, cr = _constant(reference[0], (1, C)), _constant(reference[1], (1, C)), _constant(reference[2], (1, C, C))
    loss = F.mean(F.absolute_error(mf, mr)) + F.mean(F.absolute_error(sf, sr)) + F.mean(F.absolute_error(cf, cr))
    return loss + F.mean(F.absolute_error(af, _constant(reference[3], (1, C)))) if af is not None else loss


def innovation_loss(fake, mask, reference, impl="auto"):
    """A moment-matching term on the step changes d_t = x_t - x_(t-1) (the pairs of consecutive valid steps):
    |std_fake - std_real| per feature, averaged, plus the mean absolute difference of the C x C correlation
    matrices of the changes. The batch's lag-0 correlations mix slow (between-sequence) and fast co-movement;
    these pin down the fast one, the directions in which a sequence moves from step to step (without them a
    sequence's own feature correlations tell generated from real data apart).
    fake (L, B, C), 0 at padded steps; mask (L, B); L >= 2; reference: the real data's
    `ops.pooled_moments.step_change_reference`. impl: as `moment_loss`'s."""
    if _fused(impl):
        from gan_sru.ops.pooled_moments import step_change_moments

        return step_change_moments(fake, mask, reference)
    L, B, C = fake.shape
    pair = F.slice(mask, start=(1, 0), stop=(L, B)) * F.slice(mask, start=(0, 0), stop=(L - 1, B))
    d = F.slice(fake, start=(1, 0, 0), stop=(L, B, C)) - F.slice(fake, start=(0, 0, 0), stop=(L - 1, B, C))
    _, sf, cf, _ = _masked_stats(d * F.broadcast(F.reshape(pair, (L - 1, B, 1)), (L - 1, B, C)), pair, lag1=False)
    sr, cr = _constant(reference[1], (1, C)), _constant(reference[2], (1, C, C))
    return F.mean(F.absolute_error(sf, sr)) + F.mean(F.absolute_error(cf, cr))


def class_moment_loss(fake, mask, onehot, references):
    """``moment_loss`` within each class: the mean over classes k of moment_loss on the fake sequences made for
    class k against `references[k]`, the real data's moments within class k (None: no real sequence of
    class k, adds 0). onehot (B, K) the classes of the batch's rows; classes absent from the batch add 0.
    The batch's moments are a mixture over classes; a class drawn with the right mixture but the wrong
    spread (e.g. one class's samples at another class's amplitude) is seen only within the class."""
    L, B, C = fake.shape
    K = onehot.shape[1]
    total = None
    for k in range(K):
        if references[k] is None:
            continue
        member = F.reshape(F.slice(onehot, start=(0, k), stop=(B, k + 1)), (1, B))
        mk = mask * F.broadcast(member, (L, B))
        present = F.greater_scalar(F.sum(mk), 0.5)  # 0 when no row of the batch has class k
        mk3 = F.broadcast(F.reshape(mk, (L, B, 1)), (L, B, C))
        term = moment_loss(fake * mk3, mk, references[k]) * present
        total = term if total is None else total + term
    return F.constant(0.0, ()) if total is None else total / K


def _autocorrelation(z, m, k):
    """(B, C): each feature's lag-k autocorrelation over the pairs of valid steps k apart, from the standardised
    values z (B, L, C), 0 at padding, and the mask m (B, L, 1)."""
    B, L, C = z.shape
    pair = F.slice(m, start=(0, k, 0), stop=(B, L, 1)) * F.slice(m, start=(0, 0, 0), stop=(B, L - k, 1))
    lagged = F.slice(z, start=(0, k, 0), stop=(B, L, C)) * F.slice(z, start=(0, 0, 0), stop=(B, L - k, C))
    return F.sum(lagged, axis=1) / F.maximum_scalar(F.sum(pair, axis=1), 1.0)


def _sequence_stats(x, mask):
    """Each sequence's own statistics over its valid steps: [mean (B, C), std (B, C), the correlation of each
    pair of features (B, C (C - 1) / 2), lag-1 autocorrelation (B, C), log magnitude spectrum (B, C L // 2)]
    of x (L, B, C), 0 at padded steps; mask (L, B). The spectrum is
    `conditioning.magnitude_spectra`'s at the L // 2 frequencies pi f / (L // 2) up to pi (for an even L a full
    sequence's DFT bins), log(|X_f| / n + 1e-3)."""
    from gan_sru.conditional.networks import centred_spectra

    L, B, C = x.shape
    xs = F.transpose(x, (1, 0, 2))  # (B, L, C); the arithmetic below broadcasts implicitly
    m = F.reshape(F.transpose(mask, (1, 0)), (B, L, 1))
    count = F.maximum_scalar(F.sum(m, axis=1, keepdims=True), 1.0)  # (B, 1, 1)
    mean = F.sum(xs, axis=1, keepdims=True) / count  # (B, 1, C)
    centred = (xs - mean) * m
    var = F.sum(centred * centred, axis=1, keepdims=True) / count + 1e-6  # (B, 1, C); a sequence can be flat
    z = centred * F.pow_scalar(var, -0.5)  # standardised: its Gram matrix is the correlation matrix
    stats = [F.reshape(mean, (B, C)), F.reshape(F.pow_scalar(var, 0.5), (B, C))]
    if C >= 2:
        upper = np.flatnonzero(np.triu(np.ones((C, C)), 1)).reshape(1, -1)  # the C (C - 1) / 2 distinct pairs
        corr = F.batch_matmul(z, z, transpose_a=True) / count  # (B, C, C)
        stats.append(F.gather(F.reshape(corr, (B, C * C)), nn.Variable.from_numpy_array(upper), axis=1))
    if L >= 2:
        stats.append(_autocorrelation(z, m, 1))
        stats.append(F.log(centred_spectra(F.transpose(centred, (0, 2, 1)), count, L // 2) + 1e-3))
    return stats


def sequence_moment_loss(fake, mask, reference, impl="auto"):
    """A moment-matching term on each sequence's own statistics: its per-feature mean, std, lag-1
    autocorrelation and log magnitude spectrum and the correlation of each pair of its features, one vector
    per sequence.
    For each statistic, the mean absolute difference (over its entries) between fake and real of its mean over
    the batch's sequences plus that of its spread (std) over them.

    The batch-level moments (``moment_loss``) pool every step of every sequence; they are met by samples whose
    sequences all look alike (each sequence's own feature correlations give them away, and they vary less
    from each other than real ones). This term asks for the right variety between sequences. The spectrum pins
    down the seasons, which the other statistics leave free (a season at a neighbouring frequency, too little
    power at the fastest frequencies).
    fake (L, B, C), 0 at padded steps; mask (L, B); reference: the real data's (mean, spread) of each
    statistic over its sequences (`ops.moments.sequence_reference`).
    impl: "auto", the fused host function (gan_sru/ops/moments.py: the same loss, a fraction of the
    time) on a CPU context; "ref" (and CUDA contexts), the plain nnabla ops below."""
    if _fused(impl):
        from gan_sru.ops.moments import sequence_moments

        return sequence_moments(fake, mask, reference)
    loss = None
    for sf, (mean_r, spread_r) in zip(_sequence_stats(fake, mask), reference):
        mf = F.mean(sf, axis=0, keepdims=True)
        mr, dr = _constant(mean_r, mf.shape), _constant(spread_r, mf.shape)
        # the spread from E[s^2] - E[s]^2: one product of the (B, n) statistics instead of a broadcast and a
        # product (nnabla's CPU elementwise ops dominate this term's cost); >= 0 against rounding
        df = F.pow_scalar(F.maximum_scalar(F.mean(sf * sf, axis=0, keepdims=True) - mf * mf, 0.0) + 1e-8, 0.5)
        term = F.mean(F.absolute_error(mf, mr)) + F.mean(F.absolute_error(df, dr))
        loss = term if loss is None else loss + term
    return loss
