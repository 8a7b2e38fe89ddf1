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
