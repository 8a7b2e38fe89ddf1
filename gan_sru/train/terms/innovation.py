"""innovation: the std and the C x C correlations of the step changes x_t - x_t-1, the fake batch's against the
real data's (losses.innovation_loss). Buckets of one step have no change and go without it."""
from gan_sru.ops.pooled_moments import step_change_reference
from gan_sru.train.losses import innovation_loss

from . import TERMS, Term


@TERMS.register("innovation")
class Innovation(Term):
    name = "innovation"

    def applies(self, length, graph):
        return length >= 2

    def reference(self, data, graph):
        return step_change_reference(data.x, data.mask)

    def discrepancy(self, graph, reference):
        return innovation_loss(graph.fake_g, graph.mask, reference, graph.moment_impl)
