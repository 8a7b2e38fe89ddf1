"""The generator's output activation (model.generator.output_activation)."""
import nnabla.functions as F

SIGMOID_MARGIN = 0.25  # sigmoid_margin's outputs span [-0.25, 1.25]: the data's [0, 1] scale and a margin


def output_activation(x, kind):
    """The output features from their pre-activations: "sigmoid" (0, 1); "sigmoid_margin", a sigmoid stretched
    to (-SIGMOID_MARGIN, 1 + SIGMOID_MARGIN), so the data's range sits on its straighter part (at a value of 0.8
    of the [0, 1] scale a sigmoid's slope is 64% of its slope at 0.5, this one's 84%: less compression of the
    tails); "identity"."""
    if kind == "sigmoid":
        return F.sigmoid(x)
    if kind == "sigmoid_margin":
        return F.sigmoid(x) * (1.0 + 2 * SIGMOID_MARGIN) - SIGMOID_MARGIN
    return x
