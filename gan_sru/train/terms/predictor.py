"""predictor: the residuals of the real data's next-step linear regression on the `lags` past steps, applied to
the fake windows (ops/predictor.py). Reference: the regression fitted once on the real windows of the bucket;
discrepancy: ops.predictor.predictor_loss. Buckets no longer than `lags` + 1 go without it."""
from gan_sru.ops.predictor import predictor_loss

from . import TERMS, Term


@TERMS.register("predictor")
class Predictor(Term):
    name, old_key = "predictor", "predictor_loss"
    options = {"lags": ("predictor_lags", 5)}

    def applies(self, length, graph):
        return length > self.opts["lags"] + 1

    def reference(self, steps, length):
        from gan_sru.ops import predictor

        lags = self.opts["lags"]
        if length <= lags + 1:
            return None
        return steps._windows_reference(length, lags + 1, "train.predictor_loss",
                                        lambda x, m: predictor.reference(x, m, lags, seed=steps.cfg.seed))

    def discrepancy(self, graph, ref):
        return predictor_loss(graph.fake_g, graph.mask, ref)
