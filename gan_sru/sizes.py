"""Size rules: the model sizes a config leaves null, chosen from the data's width and length.

A user should not have to guess a hidden size for 28 features. Every size key whose config value is null
gets the rule's value once the data is loaded (train/steps.GanSteps applies them), and the run folder's
config.yaml records the resolved numbers, so sampling, export and resume read concrete sizes. A size set in
the config is kept as it is.

    C features, L the longest training length:
    generator.hidden_size        clip(4 C, 48, 256), rounded up to a multiple of 16
    generator.noise_dim          clip(C, 2, 64): a channel of per-step noise per feature, as data whose
                                 features each carry noise of their own need
    generator.static_noise_dim   clip(C // 2, 8, 32): per-sequence traits (phases, levels, regimes)
    generator.num_layers         2 at every length: a third layer at 128 and 256 steps scored within the seeds' spread
                                 (docs/results/2026-12-07-g-depth.md)
    discriminator.hidden_size    clip(3 C, 48, 192), rounded up to a multiple of 16

With oscillators (generator.oscillators), generator.oscillator_grid "auto" follows the length too: the linear
grid pi (j + 1) / L, j < S (S = static_noise_dim), while its shortest period 2 L / S is at most
LINEAR_GRID_MAX_PERIOD (4) steps, else the log grid (periods from 2 L down to 3.3 steps), which reaches the
short seasons of long windows that the linear grid cannot.
"""
import copy

LINEAR_GRID_MAX_PERIOD = 4.0  # steps: the linear oscillator grid serves while its shortest period is this short

SIZE_KEYS = ("model.generator.hidden_size", "model.generator.noise_dim", "model.generator.static_noise_dim",
             "model.generator.num_layers", "model.discriminator.hidden_size")


def _clip(x, lo, hi):
    return int(min(max(x, lo), hi))


def _round_up(x, multiple):
    return int(-(-x // multiple) * multiple)


def rule_sizes(num_features):
    """The rules' sizes for C = num_features: {dotted key: int} over SIZE_KEYS. No size follows the length (a
    third G layer at 128 and 256 steps scored within the seeds' spread, docs/results/2026-12-07-g-depth.md)."""
    C = int(num_features)
    return {
        "model.generator.hidden_size": _round_up(_clip(4 * C, 48, 256), 16),
        "model.generator.noise_dim": _clip(C, 2, 64),
        "model.generator.static_noise_dim": _clip(C // 2, 8, 32),
        "model.generator.num_layers": 2,
        "model.discriminator.hidden_size": _round_up(_clip(3 * C, 48, 192), 16),
    }


def rule_oscillator_grid(static_noise_dim, max_len):
    """The oscillator grid for "auto": "linear" while the linear grid's shortest period, 2 max_len /
    static_noise_dim, is at most LINEAR_GRID_MAX_PERIOD steps, else "log" (short periods in long windows)."""
    S = max(int(static_noise_dim), 1)
    return "linear" if 2.0 * int(max_len) / S <= LINEAR_GRID_MAX_PERIOD else "log"


def apply_size_rules(cfg, num_features, max_len):
    """A copy of the resolved config `cfg` with every null size key set by ``rule_sizes`` and an "auto"
    oscillator grid by ``rule_oscillator_grid``; others kept."""
    from gan_sru.config import assign, value_at

    out = copy.deepcopy(cfg)
    for key, value in rule_sizes(num_features).items():
        if value_at(out, key) is None:
            assign(out, key, value)
    gcfg = out.model.generator
    if gcfg.oscillator_grid == "auto":
        gcfg.oscillator_grid = rule_oscillator_grid(gcfg.static_noise_dim, max_len)
    return out
