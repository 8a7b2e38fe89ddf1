"""moment: the batch's per-feature means and stds, lag-0 feature correlations and lag-1 autocorrelations,
fake against the real half of the same step (losses.moment_loss)."""
from gan_sru.train.losses import moment_loss

from . import TERMS, Term


@TERMS.register("moment")
class Moment(Term):
    name = "moment"

    def discrepancy(self, graph):
        return moment_loss(graph.fake_g, graph.real, graph.mask, graph.moment_impl)
