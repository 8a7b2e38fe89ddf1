"""Pictures of wide data: one axis per feature, a readable subset of wide data, the correlation picture."""
import imageio.v3 as iio
import numpy as np
import pytest

from gan_sru import metrics, plots


def blue_rows(image, left, right):
    """Rows of image[:, left:right] holding clearly blue (real) pixels."""
    part = image[:, left:right].astype(int)
    return np.flatnonzero(np.any(part[..., 2] > part[..., 0] + 40, axis=1))


def test_each_feature_gets_its_own_axis(tmp_path):
    rng = np.random.RandomState(0)
    real = rng.rand(20, 24, 5)
    real[:, :, 1] = 1000 + 1000 * real[:, :, 1]  # other units: on a shared axis feature 0 would be a flat line
    image = iio.imread(plots.real_vs_fake(real, real[:0], tmp_path / "rvf.png"))
    assert image.shape[:2] == (400, 1200)
    for panel in (0, 1):  # the blue lines span most of each panel's height
        rows = blue_rows(image, 240 * panel + 60, 240 * panel + 220)
        assert rows.max() - rows.min() > 0.5 * 400, panel


def test_wide_data_shows_the_highest_variance_features():
    rng = np.random.RandomState(1)
    scale = np.ones(28)
    scale[[3, 7, 11, 12, 19, 20, 25, 27]] = 5.0
    real = rng.randn(10, 24, 28) * scale
    assert plots.pick_features(real) == [3, 7, 11, 12, 19, 20, 25, 27]
    assert plots.pick_features(real[:, :, :6]) == list(range(6))


@pytest.mark.parametrize("C, size", [(5, (1200, 400)), (8, (1200, 650)), (28, (1200, 650))])
def test_real_vs_fake_sizes(tmp_path, C, size):
    rng = np.random.RandomState(C)
    path = plots.real_vs_fake(rng.rand(10, 24, C), rng.rand(10, 24, C), tmp_path / "rvf.png")
    assert iio.imread(path).shape[:2] == size[::-1]


@pytest.mark.parametrize("C", [5, 28])
def test_correlation_heatmaps(tmp_path, C):
    rng = np.random.RandomState(C)
    real = rng.randn(50, 24, C) @ rng.randn(C, C)
    corr = metrics.correlation_matrix(real)
    same = plots.correlation_heatmaps(corr, corr, tmp_path / "same.png")
    other = plots.correlation_heatmaps(corr, metrics.correlation_matrix(rng.randn(50, 24, C)), tmp_path / "other.png")
    a, b = iio.imread(same), iio.imread(other)
    assert a.shape[:2] == (540, 1500) and b.shape[:2] == (540, 1500)
    third = slice(1000, 1400)  # the difference panel: white for equal matrices, coloured otherwise

    def coloured(img):  # share of strongly coloured (not grey or white) pixels
        return np.mean(np.ptp(img[60:500, third, :3].astype(int), axis=2) > 60)

    assert coloured(a) < 0.01 and coloured(b) > 0.05
