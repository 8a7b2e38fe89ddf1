"""The config's typed models: one pydantic model per section, each key with its type, default, range and one
line of meaning. New keys go here (a field on the section's model); the flat table of keys (config/table.py),
the config reference and the loader all read them from these models.

    cfg = load_config("configs/sines.yaml")   # a Config
    cfg.train.steps                           # typed attribute access
    cfg["train"]["steps"]                     # the same value: sections also read and write like dicts

Values are checked strictly (no text for numbers, no booleans for integers; an integer is taken for a float).
"""
import math
import re
from collections.abc import Mapping
from typing import Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic_core import core_schema
from typing_extensions import Annotated

from gan_sru.registry import (
    DISCRIMINATORS,
    GENERATORS,
    STRATEGIES,
    Registry,
    load_builtin_networks,
)


class Registered:
    """Field metadata: the value must be a name in `registry` (filled by gan_sru.models and user modules)."""

    def __init__(self, registry: Registry):
        self.registry = registry

    def __get_pydantic_core_schema__(self, source, handler):
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def check(self, value):
        load_builtin_networks()
        if value not in self.registry:
            raise ValueError(f"not a registered {self.registry.kind}")
        return value


class Matching:
    """Field metadata: the whole string must match `pattern`."""

    def __init__(self, pattern: str):
        self.pattern = re.compile(pattern)

    def __get_pydantic_core_schema__(self, source, handler):
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def check(self, value):
        if not self.pattern.fullmatch(value):
            raise ValueError(f"does not match {self.pattern.pattern}")
        return value


def _unique(values):
    if len(set(values)) != len(values):
        raise ValueError("without repeats")
    return values


def _terms(values):
    """Loss terms: mappings with text keys, a non-empty 'name' string and, if given, a finite numeric weight."""
    for i, item in enumerate(values):
        if not isinstance(item, dict) or not all(isinstance(k, str) and k for k in item):
            raise ValueError(f"entry {i} is not a mapping with text keys")
        if not isinstance(item.get("name"), str) or not item["name"]:
            raise ValueError(f"entry {i} has no 'name' string")
        weight = item.get("weight", 0.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise ValueError(f"entry {i}: weight {weight!r} is not a finite number")
    return [dict(item) for item in values]


Text = Annotated[str, StringConstraints(min_length=1)]  # a non-empty string
Columns = Annotated[list[Text], Field(min_length=1), AfterValidator(_unique)]  # column names, at least one
Terms = Annotated[list, AfterValidator(_terms)]  # [{name: ..., weight: ..., options}]
RunName = Annotated[str, Matching(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")]
Duration = Annotated[str, Matching(r"(?:[0-9]+(?:\.[0-9]+)?[hms])+")]  # 90s, 15m, 1h, 1h30m


def key(default, doc, **constraints):
    """A config key: its default, one line of meaning, and pydantic constraints (ge=1, gt=0, ...)."""
    return Field(default, description=doc, **constraints)


def section(cls):
    """A sub-section field, filled with its defaults when the file leaves it out."""
    return Field(default_factory=cls)


class Section(BaseModel):
    """A config section. Also reads and writes like the nested dict configs were (`s["key"]`, `s.get(k)`,
    `k in s`, `s[k] = v`, keys/items, == a dict); assignments are not re-validated, as with a dict."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    def __getitem__(self, name):
        if name not in type(self).model_fields:
            raise KeyError(name)
        return getattr(self, name)

    def __setitem__(self, name, value):
        if name not in type(self).model_fields:
            raise KeyError(name)
        setattr(self, name, value)

    def __contains__(self, name):
        return name in type(self).model_fields

    def __iter__(self):
        return iter(type(self).model_fields)

    def __len__(self):
        return len(type(self).model_fields)

    def get(self, name, default=None):
        return getattr(self, name) if name in type(self).model_fields else default

    def keys(self):
        return list(type(self).model_fields)

    def values(self):
        return [getattr(self, k) for k in type(self).model_fields]

    def items(self):
        return [(k, getattr(self, k)) for k in type(self).model_fields]

    def update(self, other=(), **more):
        for k, v in {**dict(other), **more}.items():
            self[k] = v

    def __eq__(self, other):
        if isinstance(other, BaseModel):
            return type(self) is type(other) and self.model_dump() == other.model_dump()
        if isinstance(other, Mapping):
            return self.model_dump() == plain(other)
        return NotImplemented

    __hash__ = None


def plain(value):
    """A config, section or nested mapping -> plain nested dicts (for JSON, YAML, comparisons)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    return value


class DataConfig(Section):
    """data: where the sequences come from and how they are cut, cleaned and split."""

    source: Literal["sines", "sines_varlen", "factors", "lorenz96", "sines_classes", "file"] = key(
        "sines", "built-in sines (TimeGAN protocol), sines of random lengths, a wide latent-factor process "
        "(factors), the Lorenz-96 system, labelled sines (sines_classes), or a file")
    path: Optional[Text] = key(None, "data file (.csv, .csv.gz, .parquet, .npy, .npz), folder or glob pattern, when "
                                     "source is file; relative to the working folder")
    max_file_bytes: int = key(4 * 2**30, "largest data file read, in bytes; larger ones are refused", ge=1)
    num_sequences: int = key(10000, "number of built-in sequences", ge=1)
    seq_len: int = key(24, "built-in data: length; sines_varlen: longest length", ge=2)
    min_len: int = key(8, "sines_varlen: shortest length (lengths drawn U{min_len..seq_len})", ge=2)
    num_features: int = key(5, "number of built-in features", ge=1)
    csv_id_column: Optional[Text] = key("id", "tables: column holding the sequence id (long format), used where a "
                                              "file has it; null: each file is one sequence")
    csv_time_column: Optional[Text] = key("time", "tables: column holding the time (numbers or ISO dates) that orders "
                                                  "the rows, used where a file has it; null: row order")
    csv_feature_columns: Optional[Columns] = key(None, "tables: feature columns; null: all others (numeric)")
    attributes: Optional[Columns] = key(None, "tables: per-sequence attribute columns that condition the GAN; "
                                              "sines_classes: null means [class]")
    categorical: Optional[Columns] = key(None, "tables: per-step categorical feature columns (Gumbel-softmax); "
                                               "sines_classes: null means [state]")
    max_categories: int = key(50, "most distinct values a categorical column may hold", ge=2)
    num_classes: int = key(3, "sines_classes: number of classes", ge=2)
    missing: Literal["error", "drop", "interpolate"] = key(
        "error", "missing values: refuse them, drop the sequences (windows) holding any, or interpolate in time")
    window: Optional[int] = key(None, "file data: cut sequences into sliding windows of this length; null: keep "
                                      "them whole", ge=2)
    window_stride: int = key(1, "file data: step between window starts", ge=1)
    num_buckets: int = key(3, "number of length buckets (quantiles of the lengths)", ge=1)
    holdout_fraction: float = key(0.1, "share of sequences held out as real data for evaluate", ge=0, lt=1)
    holdout_split: Literal["random", "blocks"] = key(
        "random", "held-out share: random sequences, or contiguous blocks no training window overlaps")
    holdout_blocks: int = key(5, "with blocks: how many contiguous held-out runs", ge=1)


class GeneratorConfig(Section):
    """model.generator: the generator network; null sizes come from the data (gan_sru/sizes.py)."""

    name: Annotated[str, Registered(GENERATORS)] = key("sru", "generator architecture (gan_sru/models/generators.py)")
    noise_dim: Optional[int] = key(None, "noise features per time step; null: from the data", ge=1)
    static_noise_dim: Optional[int] = key(None, "noise features drawn once per sequence, fed at every step; null: "
                                                "from the data", ge=0)
    hidden_size: Optional[int] = key(None, "SRU hidden size; null: from the data", ge=1)
    num_layers: Optional[int] = key(None, "stacked SRU layers; null: from the data", ge=1)
    bidirectional: bool = key(False, "bidirectional SRU layers")
    oscillators: bool = key(False, "also feed a bank of sin/cos inputs with per-sequence random phases "
                                   "(static_noise_dim of them)")
    oscillator_tuning: bool = key(False, "with oscillators: per-sequence frequencies, scaled by a learned map of "
                                         "the per-sequence input")
    oscillator_grid: Literal["auto", "linear", "log"] = key(
        "auto", "with oscillators: the bank's frequencies, linear or log-spaced; auto: from the longest length")


class DiscriminatorConfig(Section):
    """model.discriminator: the discriminator network."""

    name: Annotated[str, Registered(DISCRIMINATORS)] = key(
        "sru_bi", "bidirectional SRU, or a network you register (gan_sru/models/discriminators.py)")
    hidden_size: Optional[int] = key(None, "sru_bi: hidden size per direction; null: from the data", ge=1)
    projection: bool = key(False, "runs with data.attributes: projection discriminator instead of attributes "
                                  "joined to every step")
    spectral: bool = key(False, "with projection: also a head on each feature's magnitude spectrum")
    num_layers: int = key(1, "stacked layers", ge=1)
    shift: float = key(0.0, "D reads each sequence from a random start within this share of its length, real and "
                            "generated alike (translation augmentation); 0: off", ge=0.0, lt=0.5)


class ModelConfig(Section):
    """model: the two networks."""

    generator: GeneratorConfig = section(GeneratorConfig)
    discriminator: DiscriminatorConfig = section(DiscriminatorConfig)


class TrainConfig(Section):
    """train: the optimisation, the loss terms, checkpoints and logs."""

    steps: int = key(2000, "generator updates", ge=1)
    budget: Optional[Duration] = key(None, "wall-time budget such as 90s, 15m, 1h or 1h30m; null: train.steps")
    peer_timeout: Duration = key("5m", "data-parallel runs: longest wait for the other ranks at a step's "
                                       "all-reduce before every rank ends with an error (exit status 124)")
    max_memory_bytes: int = key(16 * 2**30, "largest training memory the early estimate allows, in bytes; a "
                                            "bigger model or batch is refused before anything is allocated", ge=1)
    terms: Optional[Terms] = key(None, "the generator's extra loss terms, each {name, weight, options}; null: "
                                       "from the recipe")
    batch_size: int = key(128, "sequences per batch", ge=1)
    strategy: Literal[STRATEGIES] = key("detached", "how the fake batch is shared by the D and G steps")
    lr: float = key(0.001, "Adam learning rate of G and D (the recipe: 0.002 from 48 steps)", gt=0)
    beta2: float = key(0.999, "Adam beta2", ge=0, lt=1)
    g_ema: float = key(0.995, "decay of the moving average of G's weights used for sampling; 0: off", ge=0, lt=1)
    grad_clip: Optional[float] = key(None, "clip gradients to this global norm; null: no clipping", gt=0)
    gumbel_tau_start: float = key(1.0, "categorical features: Gumbel-softmax temperature at step 0", gt=0)
    gumbel_tau_end: float = key(0.3, "categorical features: temperature at train.steps (exponential decay)", gt=0)
    attribute_loss_weight: float = key(1.0, "runs with data.attributes: weight of the auxiliary attribute "
                                            "classifier's loss (AC-GAN); 0: off", ge=0)
    select: Literal["none", "discriminative"] = key(
        "none", "checkpoint selection by TimeGAN's post-hoc classifier; none: the newest checkpoint")
    select_num: int = key(1000, "checkpoint selection: sequences compared at each checkpoint", ge=4)
    select_remeasure: bool = key(True, "checkpoint selection: score a new best again on other sequences and keep "
                                       "the mean")
    checkpoint_every: int = key(250, "steps between checkpoints", ge=1)
    sample_every: int = key(250, "steps between sample pictures", ge=1)
    log_every: int = key(25, "steps between log lines", ge=1)
    keep_checkpoints: int = key(3, "newest checkpoints kept on disk (and the selected one)", ge=1)


class TrackingConfig(Section):
    """tracking: MLflow experiment tracking (gan_sru/tracking.py), off unless a URI is set or train has --track."""

    uri: Optional[Text] = key(None, "MLflow tracking URI (sqlite:///runs/mlruns.db, http://host:5000); null: off "
                                    "unless --track, then $MLFLOW_TRACKING_URI or run_dir/mlruns.db")
    experiment: Text = key("gan-sru", "MLflow experiment the run is logged under")


class Config(Section):
    """A whole resolved config: the run's name, seed and folder and the sections."""

    name: RunName = key("sines", "run name; the run folder is run_dir/name")
    seed: int = key(0, "seed of the data, the split, the batches and the weights", ge=0, le=4294967295)
    run_dir: Text = key("runs", "parent folder of run folders")
    data: DataConfig = section(DataConfig)
    model: ModelConfig = section(ModelConfig)
    train: TrainConfig = section(TrainConfig)
    tracking: TrackingConfig = section(TrackingConfig)
