"""The discriminators: their logits do not depend on what lies in the padded steps."""
import nnabla as nn
import numpy as np
import pytest

import gan_sru.models  # noqa: F401  (fills the registries)


def _batch(L=7, B=3, C=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((L, B, C)).astype(np.float32)
    lengths = np.array([L, L - 2, 3])[:B]
    mask = (np.arange(L)[:, None] < lengths[None, :]).astype(np.float32)
    return x * mask[:, :, None], mask, lengths


@pytest.mark.parametrize("options", [{}, {"num_layers": 3}])
def test_sru_bi_logits_do_not_depend_on_the_padded_steps(options):
    from gan_sru.config import load_config
    from gan_sru.networks import discriminator

    sets = ["model.discriminator.hidden_size=8"] + [f"model.discriminator.{k}={str(v).lower()}"
                                                    for k, v in options.items()]
    dcfg = load_config("configs/sines.yaml", sets)["model"]["discriminator"]
    x, mask, _ = _batch()
    noisy = x + 5.0 * (1 - mask[:, :, None])  # padding must be ignored whatever it holds
    with nn.parameter_scope(f"pad{sorted(options.items())}"):
        seqs, m = nn.Variable(x.shape), nn.Variable.from_numpy_array(mask)
        y = discriminator(dcfg, seqs, m)
        seqs.d = x
        y.forward()
        clean = y.d.copy()
        seqs.d = noisy
        y.forward()
    np.testing.assert_allclose(y.d, clean, rtol=1e-5, atol=1e-6)


def test_sru_bi_layers_each_have_four_projections_per_direction():
    """Layer 0 reads 4 features, layers 1 on the 2 x 8 outputs below; each has its own skip projection."""
    from gan_sru.config import load_config
    from gan_sru.networks import discriminator

    dcfg = load_config("configs/sines.yaml", ["model.discriminator.hidden_size=8", "model.discriminator.num_layers=3"])
    x, mask, _ = _batch()
    with nn.parameter_scope("layers3"):
        discriminator(dcfg["model"]["discriminator"], nn.Variable.from_numpy_array(x),
                      nn.Variable.from_numpy_array(mask))
        shapes = {k.split("/sru/")[1]: v.shape for k, v in nn.get_parameters().items() if k.endswith("/W")
                  and "/sru/" in k}
    assert shapes == {"layer0/W": (4, 2 * 4 * 8), "layer1/W": (16, 2 * 4 * 8), "layer2/W": (16, 2 * 4 * 8)}
