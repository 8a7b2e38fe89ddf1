# New config keys go in gan_sru/config/models.py, as a field on their section's model (type, default, range, doc).
"""The config's key table ({dotted key: Field(kind, default, allowed, doc)}), derived from gan_sru.config.models."""
from gan_sru.config.table import SCHEMA, Field

__all__ = ["SCHEMA", "Field"]
