"""The attributes to generate for: resampled from training, read from a conditions file, or given as key=value.

    rows = draw_attribute_rows(encoding, train.attributes, num, seed)     # unconditional: (num, A) object
    rows = read_conditions("conditions.csv", encoding)                    # one row per sequence to generate
    rows = parse_conditions(["class=c1"], encoding, train.attributes, num, seed)
    attrs = encoding.encode_attributes(rows)                              # (num, W) for the generator

Without conditions the attributes are resampled, with replacement, from the training split's attribute rows:
the empirical joint distribution, exact for the data seen, with no combination that never occurred (a learned
model of the attributes could invent impossible ones, e.g. a device type with a region it is never sold in).
"""

import numpy as np

from gan_sru import ConfigError, DataError

_ATTR_STREAM = 0xA77B  # separates the attribute draw from the noise and length streams


class ConditionError(ConfigError):
    """A --condition or conditions file that does not fit the run's attributes."""


def draw_attribute_rows(encoding, train_attrs, num, seed):
    """(num, A) object rows drawn with replacement from the training split's (encoded) attribute rows."""
    rng = np.random.default_rng([seed, _ATTR_STREAM])
    picked = rng.integers(0, len(train_attrs), num)
    return encoding.decode_attributes(train_attrs[picked])


def check_columns(found, encoding, where):
    names = encoding.attr_names
    missing = [n for n in names if n not in found]
    extra = [n for n in found if n not in names]
    if missing or extra:
        raise ConditionError(f"{where}: columns {list(found)} do not match the run's attributes {names}"
                             f"{'; missing ' + repr(missing) if missing else ''}"
                             f"{'; extra ' + repr(extra) if extra else ''}; expected exactly one column per "
                             "attribute")


def read_conditions(path, encoding):
    """A .csv or .parquet table with one column per attribute and one row per sequence -> (N, A) object rows
    (checked: every categorical value seen in training, every numeric value a number)."""
    import pandas as pd

    if not encoding.attributes:
        raise ConditionError(f"--conditions {path}: the run has no attributes (data.attributes) to condition on")
    from gan_sru.data.readers import check_regular_file

    try:
        check_regular_file(path)  # a FIFO, a device or a huge file is refused before it is opened
    except DataError as e:
        raise ConditionError(f"--conditions {e}") from None
    try:
        df = pd.read_parquet(path) if str(path).lower().endswith(".parquet") else pd.read_csv(path)
    except (ValueError, OSError, UnicodeDecodeError) as e:
        raise ConditionError(f"--conditions {path}: cannot read the table ({type(e).__name__}: {e})") from None
    df.columns = [str(c).strip() for c in df.columns]
    check_columns(list(df.columns), encoding, f"--conditions {path}")
    if len(df) == 0:
        raise ConditionError(f"--conditions {path}: no rows; expected one row of attributes per sequence")
    rows = df[encoding.attr_names].astype(object).to_numpy()
    check_rows(rows, encoding, f"--conditions {path}")
    return rows


def _label_for(text, categories):
    """A --condition value (text) -> the training label it names (labels may be ints or bools)."""
    for label in categories.labels:
        if str(label) == text or (isinstance(label, bool) and text.lower() == str(label).lower()):
            return label
    return text


def parse_conditions(items, encoding, train_attrs, num, seed):
    """`--condition key=value` items -> (num, A) object rows. Attributes not given are drawn from the training
    rows that agree with the given categorical values (the empirical conditional distribution)."""
    if not encoding.attributes:
        raise ConditionError("--condition: the run has no attributes (data.attributes) to condition on")
    given = {}
    for item in items:
        if "=" not in item:
            raise ConditionError(f"--condition {item!r}: expected KEY=VALUE, e.g. "
                                 f"{encoding.attr_names[0]}=<value>")
        key, value = (p.strip() for p in item.split("=", 1))
        if key not in encoding.attr_names:
            raise ConditionError(f"--condition {item!r}: unknown attribute {key!r}; the run's attributes are "
                                 f"{encoding.attr_names}")
        given[key] = value
    decoded = encoding.decode_attributes(train_attrs)
    keep = np.ones(len(decoded), bool)
    values = {}
    for j, a in enumerate(encoding.attributes):
        if a["name"] not in given:
            continue
        text = given[a["name"]]
        if a["kind"] == "categorical":
            label = _label_for(text, a["categories"])
            if label not in a["categories"].labels:
                raise ConditionError(f"--condition {a['name']}={text}: {text!r} was never seen in training for "
                                     f"the categorical attribute {a['name']!r}; allowed values: "
                                     f"{a['categories'].labels}")
            keep &= np.array([v == label for v in decoded[:, j]])
            values[j] = label
        else:
            try:
                values[j] = float(text)
            except ValueError:
                raise ConditionError(f"--condition {a['name']}={text}: expected a number (the attribute is "
                                     "numeric)") from None
            if not np.isfinite(values[j]):
                raise ConditionError(f"--condition {a['name']}={text}: expected a finite number")
    pool = decoded[keep] if keep.any() else decoded
    rng = np.random.default_rng([seed, _ATTR_STREAM])
    rows = pool[rng.integers(0, len(pool), num)].copy()
    for j, v in values.items():
        rows[:, j] = v
    return rows


def check_rows(rows, encoding, where):
    """Refuse categorical values never seen in training (naming the allowed ones) and non-numbers."""
    try:
        encoding.encode_attributes(rows, where)
    except DataError as e:
        raise ConditionError(str(e)) from None


def sample_columns(samples, encoding, rows):
    """Generated (L_i, C + K) sequences in data units and their (N, A) attribute rows -> (continuous (L_i, C)
    sequences, {column: list of N (L_i,) arrays}: each categorical feature's labels, then each attribute
    repeated on every step), what the writers put beside the features."""
    C = encoding.num_continuous
    continuous = [np.ascontiguousarray(s[:, :C]) for s in samples]
    columns = {}
    labels = [encoding.decode_steps(s) for s in samples]
    for j, c in enumerate(encoding.categorical):
        columns[c.name] = [lab[:, j] for lab in labels]
    for j, name in enumerate(encoding.attr_names):
        columns[name] = [np.full(len(s), rows[i, j], dtype=object) for i, s in enumerate(samples)]
    return continuous, columns
