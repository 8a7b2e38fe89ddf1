"""class_moment: the moment term within each class of the first categorical attribute (conditional runs only),
the fake rows made for a class against the real data of that class (losses.class_moment_loss)."""
import nnabla.functions as F
import numpy as np

from gan_sru.ops.pooled_moments import pooled_reference
from gan_sru.train.losses import class_moment_loss

from . import TERMS, Term


@TERMS.register("class_moment")
class ClassMoment(Term):
    name = "class_moment"

    def applies(self, length, graph):
        return graph.attrs is not None and graph.cond.class_block() is not None

    def reference(self, data, graph):
        s, e = graph.cond.class_block()
        classes = np.asarray(data.attrs)[:, s:e].argmax(axis=1)
        return [pooled_reference(data.x[:, classes == k], data.mask[:, classes == k]) if np.any(classes == k)
                else None for k in range(e - s)]

    def discrepancy(self, graph, reference):
        s, e = graph.cond.class_block()
        onehot = F.slice(graph.attrs, start=(0, s), stop=(graph.fake_g.shape[1], e))
        return class_moment_loss(graph.fake_g, graph.mask, onehot, reference)
