"""class_moment: the moment term within each class of the first categorical attribute (conditional runs only),
fake rows against the real rows of the same class (losses.class_moment_loss)."""
import nnabla.functions as F

from gan_sru.train.losses import class_moment_loss

from . import TERMS, Term


@TERMS.register("class_moment")
class ClassMoment(Term):
    name = "class_moment"

    def applies(self, length, graph):
        return graph.attrs is not None and graph.cond.class_block() is not None

    def discrepancy(self, graph):
        s, e = graph.cond.class_block()
        onehot = F.slice(graph.attrs, start=(0, s), stop=(graph.real.shape[1], e))
        return class_moment_loss(graph.fake_g, graph.real, graph.mask, onehot)
