"""sequence_moment: each sequence's own statistics (per-feature mean, std, autocorrelations at lags 1..`lags`,
log magnitude spectrum, feature correlations; with `tails` also skewness and kurtosis), the fake batch's
distribution of them against the real batch's (losses.sequence_moment_loss)."""
from gan_sru.train.losses import sequence_moment_loss

from . import TERMS, Term


@TERMS.register("sequence_moment")
class SequenceMoment(Term):
    name = "sequence_moment"
    options = {"tails": False, "lags": 1}

    def discrepancy(self, graph):
        return sequence_moment_loss(graph.fake_g, graph.real, graph.mask, self.opts["tails"], graph.moment_impl,
                                    self.opts["lags"])
