"""The networks: generators and discriminators, registered by name into gan_sru.registry on import.

Add your own the same way (a module that decorates its builder with `GENERATORS.register("name")`,
imported before training) and pick it in the config: `model.generator.name: name`.

    generator(gcfg, noise, mask, num_features, max_len, train=True, logits=False) -> fake (L, B, C) in [0, 1]
                                                     (logits=True: its pre-activations, for categorical features)
    discriminator(dcfg, seqs, mask, train=True) -> logits (B, 1)
"""
from . import discriminators, generators  # noqa: F401  (registers them)
