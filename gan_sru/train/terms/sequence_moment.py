"""sequence_moment: each sequence's own statistics (per-feature mean, std, autocorrelations at lags 1..`lags`,
log magnitude spectrum, feature correlations), the fake batch's distribution of them against the real data's
(losses.sequence_moment_loss). Its removed option `tails` (skewness and kurtosis): config/retired.py."""
from gan_sru.ops.moments import sequence_reference
from gan_sru.train.losses import sequence_moment_loss

from . import TERMS, Term


@TERMS.register("sequence_moment")
class SequenceMoment(Term):
    name = "sequence_moment"
    options = {"lags": 1}

    def reference(self, data, graph):
        return sequence_reference(data.x, data.mask, self.opts["lags"])

    def discrepancy(self, graph, reference):
        return sequence_moment_loss(graph.fake_g, graph.mask, reference, graph.moment_impl, self.opts["lags"])
