"""marginal: each feature's distribution of values over the batch, the 1-D Wasserstein-1 distance between
fake and real values divided by the real std, averaged over features (losses.marginal_loss)."""
from gan_sru.train.losses import marginal_loss

from . import TERMS, Term


@TERMS.register("marginal")
class Marginal(Term):
    name, old_key = "marginal", "marginal_loss"

    def discrepancy(self, graph, ref):
        return marginal_loss(graph.fake_g, graph.real, graph.mask, graph.moment_impl)
