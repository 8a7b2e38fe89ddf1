"""innovation: the std and the C x C correlations of the step changes x_t - x_t-1, fake against the real batch
(losses.innovation_loss). Buckets of one step have no change and go without it."""
from gan_sru.train.losses import innovation_loss

from . import TERMS, Term


@TERMS.register("innovation")
class Innovation(Term):
    name = "innovation"

    def applies(self, length, graph):
        return length >= 2

    def discrepancy(self, graph):
        return innovation_loss(graph.fake_g, graph.real, graph.mask, graph.moment_impl)
