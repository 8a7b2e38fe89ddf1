"""sequence_whitened: each sequence's statistics in the principal axes of the real sequences' statistics
(ops/whitened.py). Reference: a WhitenedReference of up to ops.whitened.MAX_REFERENCE real sequences of the
bucket (with `rescale`, each axis scaled to unit spread); discrepancy: losses.whitened_sequence_loss."""
from gan_sru.train.losses import whitened_sequence_loss

from . import TERMS, Term


@TERMS.register("sequence_whitened")
class SequenceWhitened(Term):
    name, old_key = "sequence_whitened", "sequence_whitened_loss"
    options = {"rescale": ("sequence_whitened_rescale", False)}

    def reference(self, steps, length):
        from gan_sru.ops import whitened

        x, mask = steps.bucket_sequences(length, whitened.MAX_REFERENCE, "train.sequence_whitened_loss")
        return whitened.reference(x.transpose(1, 0, 2), mask.T[:, :, None], seed=steps.cfg.seed,
                                  rescale=self.opts["rescale"])

    def discrepancy(self, graph, ref):
        return whitened_sequence_loss(graph.fake_g, graph.mask, ref, graph.moment_impl)
