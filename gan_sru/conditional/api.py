"""SequenceGAN.sample() for conditional runs: the attributes to sample for, and the label columns of its result."""
import numpy as np

from gan_sru.conditional.conditions import (
    ConditionError,
    check_columns,
    check_rows,
    draw_attribute_rows,
    parse_conditions,
)


def condition_rows(run, run_path, conditions, num, seed, train):
    """(rows (N, A) object or None, encoded attributes (N, W) float32 or None). conditions: None (resampled
    from the training split), a DataFrame with one column per attribute and one row per sequence, or a dict
    {attribute: value} (the attributes it leaves out are drawn from the training rows that agree with it).
    train: the training split's encoded attribute rows as `.attributes` (N, W) (gan_sru.sampling.Reference)."""
    import pandas as pd

    enc = run.encoding
    if enc is None or not enc.attributes:
        if conditions is not None:
            raise ConditionError(f"SequenceGAN.sample: {run_path}: the model has no attributes to condition on")
        return None, None
    if conditions is None:
        rows = draw_attribute_rows(enc, train.attributes, num, seed)
    elif isinstance(conditions, pd.DataFrame):
        check_columns([str(c) for c in conditions.columns], enc, "SequenceGAN.sample(conditions=DataFrame)")
        rows = conditions[enc.attr_names].astype(object).to_numpy()
        if not len(rows):
            raise ConditionError("SequenceGAN.sample(conditions=DataFrame): no rows")
        check_rows(rows, enc, "SequenceGAN.sample(conditions=DataFrame)")
    elif isinstance(conditions, dict):
        rows = parse_conditions([f"{k}={v}" for k, v in conditions.items()], enc, train.attributes, num, seed)
    else:
        raise ConditionError(f"SequenceGAN.sample: conditions is a {type(conditions).__name__}; expected a "
                             "DataFrame of attribute rows, a dict {attribute: value} or None")
    return rows, enc.encode_attributes(rows)


def with_columns(df, columns, encoding):
    """The sample DataFrame with the categorical features' labels and the attributes as columns, in the
    training data's dtypes where they convert."""
    import pandas as pd

    dtypes = {c.name: c.dtype for c in encoding.categorical}
    dtypes.update({a["name"]: a["categories"].dtype if a["kind"] == "categorical" else a["dtype"]
                   for a in encoding.attributes})
    df = df.copy()
    for name, per_sequence in columns.items():
        values = pd.Series(np.concatenate([np.asarray(v, dtype=object) for v in per_sequence]), index=df.index)
        try:
            values = values.astype(dtypes[name])
        except (TypeError, ValueError):
            pass  # keep the labels as objects
        df[name] = values
    return df
