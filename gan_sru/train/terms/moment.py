"""moment: the per-feature means and stds, lag-0 feature correlations and lag-1 autocorrelations over every valid
step, the fake batch's against the real data's (losses.moment_loss)."""
from gan_sru.ops.pooled_moments import pooled_reference
from gan_sru.train.losses import moment_loss

from . import TERMS, Term


@TERMS.register("moment")
class Moment(Term):
    name = "moment"

    def reference(self, data, graph):
        return pooled_reference(data.x, data.mask)

    def discrepancy(self, graph, reference):
        return moment_loss(graph.fake_g, graph.mask, reference, graph.moment_impl)
