"""GAN losses on the discriminator's logits (B, 1)."""
import nnabla.functions as F

from gan_sru.registry import LOSSES


def d_loss_fn(kind, d_real, d_fake):
    """Discriminator loss from logits (B, 1) of real and fake sequences."""
    if kind == "non_saturating":
        return F.mean(F.softplus(-d_real)) + F.mean(F.softplus(d_fake))
    if kind == "hinge":
        return F.mean(F.relu(1.0 - d_real)) + F.mean(F.relu(1.0 + d_fake))
    if kind == "least_squares":
        return 0.5 * (F.mean(F.squared_error(d_real, F.constant(1.0, d_real.shape))) + F.mean(d_fake * d_fake))
    if kind == "wasserstein":
        return F.mean(d_fake) - F.mean(d_real)
    raise ValueError(f"unknown loss {kind!r}; expected one of {LOSSES}")


def g_loss_fn(kind, d_fake):
    """Generator loss from the discriminator's logits (B, 1) of fake sequences."""
    if kind == "non_saturating":
        return F.mean(F.softplus(-d_fake))
    if kind in ("hinge", "wasserstein"):
        return -F.mean(d_fake)
    if kind == "least_squares":
        return 0.5 * F.mean(F.squared_error(d_fake, F.constant(1.0, d_fake.shape)))
    raise ValueError(f"unknown loss {kind!r}; expected one of {LOSSES}")


def moment_loss(fake, real, mask):
    """A moment-matching term for G (TimeGAN's moment loss, plus lag-0 feature correlations and lag-1
    autocorrelations).

    fake, real (L, B, C), both 0 at padded steps; mask (L, B). Over the valid steps of the batch, per feature:
    |mean_fake - mean_real| + |std_fake - std_real| + |acf1_fake - acf1_real| (lag-1 autocorrelation over the
    pairs of consecutive valid steps), averaged over features, plus the mean absolute difference of the C x C
    correlation matrices. Cross-feature structure (what the correlational score measures) is learned slowly
    by a discriminator when C is large, and the lag-1 term keeps per-step noise from turning into jitter.
    Real statistics are constants (no gradient).
    """
    L, B, C = fake.shape
    N = L * B
    count = F.reshape(F.sum(mask), (1, 1))
    pairs = F.reshape(F.maximum_scalar(F.sum(F.slice(mask, start=(1, 0), stop=(L, B))), 1.0), (1, 1))

    def stats(x):
        flat = F.reshape(x, (N, C))
        mean = F.sum(flat, axis=0, keepdims=True) / count
        centred = (flat - F.broadcast(mean, (N, C))) * F.broadcast(F.reshape(mask, (N, 1)), (N, C))
        cov = F.batch_matmul(F.reshape(centred, (1, N, C)), F.reshape(centred, (1, N, C)),
                             transpose_a=True) / F.reshape(count, (1, 1, 1))
        var = F.reshape(F.matrix_diag_part(cov), (1, C)) + 1e-8
        std = F.pow_scalar(var, 0.5)
        inv = F.reshape(1.0 / std, (1, 1, C))
        corr = cov * F.broadcast(F.reshape(inv, (1, C, 1)), (1, C, C)) * F.broadcast(inv, (1, C, C))
        if L < 2:
            return mean, std, corr, None
        steps = F.reshape(centred, (L, B, C))
        lagged = F.slice(steps, start=(1, 0, 0), stop=(L, B, C)) * F.slice(steps, start=(0, 0, 0), stop=(L - 1, B, C))
        acf1 = F.reshape(F.sum(lagged, axis=(0, 1)), (1, C)) / F.broadcast(pairs, (1, C)) / var
        return mean, std, corr, acf1

    mf, sf, cf, af = stats(fake)
    mr, sr, cr, ar = stats(real)
    loss = F.mean(F.absolute_error(mf, mr)) + F.mean(F.absolute_error(sf, sr)) + F.mean(F.absolute_error(cf, cr))
    return loss + F.mean(F.absolute_error(af, ar)) if af is not None else loss
