"""Conditional generation: attributes per sequence and categorical features per step.

`networks` wraps the registered builders (attribute inputs, categorical outputs); `conditions` chooses the
attributes to generate for; `api` serves `SequenceGAN.sample`; `evaluate` and `plots` are the conditional
parts of `gan-sru evaluate` and `generate`."""
