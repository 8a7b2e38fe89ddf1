"""Pictures: samples and evaluation results (`samples`), a run's training (`training`), and the helpers every
picture shares (`common`). Every function writes one PNG (``checkpoint_gif``: one GIF) and returns its path."""
from .samples import (  # noqa: F401
    MAX_FEATURE_PANELS,
    autocorrelation_plot,
    checkpoint_gif,
    correlation_heatmaps,
    nearest_distance_histogram,
    pca_scatter,
    pick_features,
    real_vs_fake,
    sample_grid,
    scores_bar,
    separability_bars,
    spread_sample,
)
