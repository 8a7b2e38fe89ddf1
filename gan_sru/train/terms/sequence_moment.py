"""sequence_moment: each sequence's own statistics (per-feature mean, std, lag-1 autocorrelation, log magnitude
spectrum, feature correlations), the fake batch's distribution of them against the real data's
(losses.sequence_moment_loss). Its removed options `tails` (skewness and kurtosis) and `lags` (autocorrelations
past lag 1): config/retired.py."""
from gan_sru.ops.moments import sequence_reference
from gan_sru.train.losses import sequence_moment_loss

from . import TERMS, Term


@TERMS.register("sequence_moment")
class SequenceMoment(Term):
    name = "sequence_moment"

    def reference(self, data, graph):
        return sequence_reference(data.x, data.mask)

    def discrepancy(self, graph, reference):
        return sequence_moment_loss(graph.fake_g, graph.mask, reference, graph.moment_impl)
