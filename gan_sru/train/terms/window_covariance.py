"""window_covariance: the joint second moments of `lags` + 1 consecutive steps in the whitened axes of the real
windows (ops/covariance.py). Reference: the real windows' mean (D,), whitening (D, D) and target (D, D), D =
C (lags + 1), whitened per window or per step (`whitening`); discrepancy: losses.window_covariance_loss.
Buckets no longer than `lags` go without it."""
from gan_sru.train.losses import window_covariance_loss

from . import TERMS, Term


@TERMS.register("window_covariance")
class WindowCovariance(Term):
    name, old_key = "window_covariance", "window_covariance_loss"
    options = {"lags": ("window_covariance_lags", 1), "whitening": ("window_covariance_whitening", "window")}

    def applies(self, length, graph):
        return length > self.opts["lags"]

    def reference(self, steps, length):
        from gan_sru.ops import covariance

        lags, whitening = self.opts["lags"], self.opts["whitening"]
        if length <= lags:
            return None
        return steps._windows_reference(length, lags, "train.window_covariance_loss",
                                        lambda x, m: covariance.reference(x, m, lags, seed=steps.cfg.seed,
                                                                          whitening=whitening))

    def discrepancy(self, graph, ref):
        mu, whiten, target = ref
        return window_covariance_loss(graph.fake_g, graph.mask, mu, whiten, self.opts["lags"], target)
