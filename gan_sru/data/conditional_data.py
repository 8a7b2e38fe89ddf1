"""The steps of load_dataset that concern attribute and categorical columns (gan_sru.data.attributes)."""
import numpy as np

from gan_sru import DataError

from .attributes import Encoding, drop_missing_attributes
from .scaling import MinMaxScaler

CLASSES_DEFAULTS = {"attributes": ["class"], "categorical": ["state"]}  # the columns of data.source sines_classes


def encode_raw(raw, data_cfg, name):
    """-> (raw, Encoding or None): missing attributes handled by data.missing, the categories fitted (refused
    over data.max_categories)."""
    if raw.extras is None:
        return raw, None
    raw, note = drop_missing_attributes(raw, data_cfg.get("missing", "error"), name)
    if note:
        raw.info = dict(raw.info, notes=[*raw.info.get("notes", []), note])
    encoding = Encoding.fit(raw.extras, raw.arrays[0].shape[1], data_cfg.get("max_categories", 50), name)
    return raw, encoding


def with_encoded(sequences, scaler, raw, encoding, name):
    """Scaled (L_i, C) sequences -> (L_i, C + K + W): the one-hot categorical blocks, then the encoded
    attributes repeated at every step; and the scaler extended to map the K one-hot columns as identity."""
    where = name
    steps = encoding.encode_steps(raw.extras["categorical"]["arrays"], where) if encoding.categorical else \
        [np.zeros((len(s), 0), np.float32) for s in sequences]
    rows = raw.extras["attributes"]["rows"]
    attrs = encoding.encode_attributes(rows, where) if encoding.attributes else np.zeros((len(sequences), 0),
                                                                                         np.float32)
    if len(attrs) != len(sequences):
        raise DataError(f"{name}: {len(attrs)} attribute rows for {len(sequences)} sequences")
    out = [np.concatenate([s, c.astype(s.dtype), np.broadcast_to(a, (len(s), len(a))).astype(s.dtype)], axis=1)
           for s, c, a in zip(sequences, steps, attrs)]
    k = sum(encoding.cat_sizes)
    scaler = MinMaxScaler(np.concatenate([scaler.min, np.zeros(k)]), np.concatenate([scaler.max, np.ones(k)]))
    return out, scaler
