"""Evaluation pictures: each is written, readable, of the promised pixel size."""
import imageio.v3 as iio
import matplotlib.pyplot as plt
import numpy as np
import pytest

from gan_sru import metrics, plots
from gan_sru.plots import training as plots_training


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    t = np.arange(24)[None, :, None]
    real = ((np.sin(rng.uniform(0.1, 0.5, (40, 1, 3)) * t) + 1) / 2).astype(np.float32)
    fake = rng.rand(40, 24, 3).astype(np.float32)
    return real, fake


def read(path):
    image = iio.imread(path)
    assert image.dtype == np.uint8
    return image


def colour_counts(image):
    """Pixels that are clearly blue (real) and clearly orange (generated)."""
    r, b = image[:, :600, 0].astype(int), image[:, :600, 2].astype(int)  # left of the legend
    return int(np.sum(b > r + 40)), int(np.sum(r > b + 80))


def test_sample_grid_size_and_content(tmp_path, data):
    seqs = [s[:n] for s, n in zip(data[0], range(8, 28))]  # variable lengths
    path = plots.sample_grid(seqs, tmp_path / "sub" / "grid.png", "samples", max_items=9, size=(640, 480))
    assert path == str(tmp_path / "sub" / "grid.png")
    image = read(path)
    assert image.shape[:2] == (480, 640)
    assert np.mean(image[..., :3] < 250) > 0.01  # something was drawn


def test_real_vs_fake_shows_both_colours(tmp_path, data):
    image = read(plots.real_vs_fake(*data, tmp_path / "rvf.png"))
    assert image.shape[:2] == (400, 1200)
    blue, orange = colour_counts(image)
    assert blue > 500 and orange > 500
    only_real = read(plots.real_vs_fake(data[0], data[0][:0], tmp_path / "real_only.png", features=[1]))
    assert colour_counts(only_real)[1] < 50  # no generated lines: (almost) no orange


def test_pca_scatter_and_autocorrelation_plot(tmp_path, data):
    real_proj, fake_proj = metrics.pca_projection(*data)
    assert read(plots.pca_scatter(real_proj, fake_proj, tmp_path / "pca.png")).shape[:2] == (600, 600)
    acf = plots.autocorrelation_plot(metrics.autocorrelation(data[0], 10), metrics.autocorrelation(data[1], 10),
                                     tmp_path / "acf.png", size=(500, 300))
    assert read(acf).shape[:2] == (300, 500)


def test_separability_bars_draw_generated_and_floor_and_the_generated_alone(data, tmp_path):
    real, fake = data
    gen, floor = metrics.separability(real, fake), metrics.separability(real, real[::-1])
    both = read(plots.separability_bars(gen, floor, tmp_path / "sep.png"))
    assert both.shape[:2] == (420, 800)
    blue, orange = colour_counts(both)
    assert orange > 500 and blue > 0  # uniform noise against sines: the generated bars are long
    alone = read(plots.separability_bars(gen, None, tmp_path / "sep_alone.png", size=(600, 300)))
    assert alone.shape[:2] == (300, 600) and colour_counts(alone)[0] < blue


def test_scores_bar_accepts_metric_results(tmp_path):
    scores = {"discriminative": {"mean": 0.2, "std": 0.05, "scores": [0.15, 0.25]},
              "predictive": {"mae": 0.1}, "mmd2": 0.01}
    assert read(plots.scores_bar(scores, tmp_path / "scores.png")).shape[:2] == (400, 700)
    with pytest.raises(ValueError, match="expected a number or a dict"):
        plots.scores_bar({"bad": {"x": 1}}, tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


@pytest.mark.parametrize("series, height", [(1, 300), (3, 560)])
def test_training_curves_size_follows_rows(tmp_path, series, height):
    curves = {f"loss_{i}": (np.arange(50) * 25, np.random.RandomState(i).rand(50)) for i in range(series)}
    assert read(plots_training.training_curves(curves, tmp_path / "curves.png")).shape[:2] == (height, 1000)


def test_curves_from_monitors_reads_the_series_files_that_hold_lines(tmp_path):
    assert plots_training.curves_from_monitors(str(tmp_path), tmp_path / "none.png") is None
    (tmp_path / "d_loss.series.txt").write_text("")  # created, nothing logged yet
    assert plots_training.curves_from_monitors(str(tmp_path), tmp_path / "none.png") is None
    (tmp_path / "g_loss.series.txt").write_text("".join(f"{s} {1 / (s + 1):.4f}\n" for s in range(0, 100, 10)))
    path = plots_training.curves_from_monitors(str(tmp_path), tmp_path / "losses.png")
    assert read(path).shape[:2] == (300, 1000)  # one panel: g_loss


def test_selection_curve_marks_the_selected_step_and_has_the_promised_size(tmp_path):
    history = [(250, 0.4), (500, 0.1), (750, 0.3)]
    plain = read(plots_training.selection_curve(history, None, tmp_path / "plain.png"))
    marked = read(plots_training.selection_curve(history, 500, tmp_path / "marked.png"))
    assert plain.shape[:2] == marked.shape[:2] == (400, 800)
    green = np.array([44, 160, 44])  # tab:green, the selected step's star and its legend
    assert not np.any(np.all(plain[:, :, :3] == green, axis=-1))
    assert np.sum(np.all(marked[:, :, :3] == green, axis=-1)) > 20
    both = read(plots_training.selection_curve(history, 500, tmp_path / "both.png", remeasured={500: (0.02, 0.18)}))
    purple = np.array([148, 103, 189])  # tab:purple, the remeasured step's bar between its two measurements
    assert not np.any(np.all(marked[:, :, :3] == purple, axis=-1))
    assert np.sum(np.all(both[:, :, :3] == purple, axis=-1)) > 20


def test_checkpoint_gif_has_one_frame_per_checkpoint(tmp_path, data):
    frames = [(0, data[1][:4]), (250, data[1][4:9]), (500, data[0][:6]), (750, list(data[0][:3]))]
    path = plots.checkpoint_gif(frames, tmp_path / "training.gif", fps=4, max_items=4, size=(320, 240))
    images = iio.imread(path, index=None)
    assert images.shape[:3] == (4, 240, 320)
    assert iio.immeta(path)["duration"] == 250
    assert not np.array_equal(images[0], images[2])
    with pytest.raises(ValueError, match="no frames"):
        plots.checkpoint_gif([], tmp_path / "empty.gif")


def test_no_figure_is_left_open(tmp_path, data):
    plots.sample_grid(data[0], tmp_path / "a.png")
    plots.checkpoint_gif([(0, data[0][:2])], tmp_path / "a.gif")
    assert plt.get_fignums() == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.gif", "a.png"]  # no temporary files left


def test_real_vs_fake_draws_windows_from_all_over_a_long_series(tmp_path):
    # 200 windows of a rising series in their order, window i flat at level i: the first 50 sit in the bottom
    # quarter of its range, a spread sample reaches the top (generated lines over the whole range fix the axis)
    windows = np.repeat(np.arange(200.0)[:, None, None], 8, axis=1)
    image = read(plots.real_vs_fake(windows, windows[::4], tmp_path / "rvf.png"))
    rows = lambda mask: np.flatnonzero(mask.any(axis=1))  # noqa: E731
    r, b = image[:, :600, 0].astype(int), image[:, :600, 2].astype(int)  # left of the legend
    blue, orange = rows(b - r > 30), rows(r - b > 50)
    assert (blue.max() - blue.min()) > 0.8 * (orange.max() - orange.min())
    assert plots.spread_sample(list(range(10)), 20) == list(range(10))
    drawn = plots.spread_sample(list(range(1000)), 16)
    assert len(set(drawn)) == 16 and drawn == sorted(drawn) and drawn[-1] - drawn[0] > 500
    assert plots.spread_sample(list(range(1000)), 16) == drawn  # the same sample for every picture
