"""step_profile: each position's mean and spread along the real sequences' whitened axes (ops/step_profile.py).
Reference: the step profile of up to ops.step_profile.MAX_REFERENCE real sequences of the bucket; discrepancy:
ops.step_profile.step_profile_loss."""
from gan_sru import GanSruError
from gan_sru.ops.step_profile import step_profile_loss

from . import TERMS, Term


@TERMS.register("step_profile")
class StepProfile(Term):
    name, old_key = "step_profile", "step_profile_loss"

    def reference(self, steps, length):
        from gan_sru.ops import step_profile

        x, mask = steps.bucket_sequences(length, step_profile.MAX_REFERENCE, "train.step_profile_loss")
        try:
            return step_profile.reference(x.transpose(1, 0, 2), mask.T)
        except ValueError as e:
            raise GanSruError(f"train.step_profile_loss: the bucket of length {length}: {e}") from None

    def discrepancy(self, graph, ref):
        return step_profile_loss(graph.fake_g, graph.mask, ref)
