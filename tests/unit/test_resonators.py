"""The stochastic resonators (gan_sru/ops/resonators.py): the plain-ops bank against the recurrence stepped in
NumPy, its gradients against finite differences of that reference, the stationary law it claims (unit variance
from the first step, lag covariances rho^k cos(k theta)), its grid, and G with the bank."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from conftest import fresh_generator, generator_output

from gan_sru.networks import noise_shapes, sample_noise
from gan_sru.ops.resonators import LOWEST_PERIOD, resonator_grid, resonators, resonators_ref


def _bank(eps, nu, theta, need_grad=False):
    e = nn.Variable.from_numpy_array(eps, need_grad=need_grad)
    n = nn.Variable.from_numpy_array(nu, need_grad=need_grad)
    t = nn.Variable.from_numpy_array(theta, need_grad=need_grad)
    return e, n, t, resonators(e, n, t)


def test_bank_equals_the_recurrence_stepped_in_numpy():
    rng = np.random.default_rng(0)
    L, B, H = 17, 3, 5
    eps = rng.standard_normal((L, B, 2 * H)).astype(np.float32)
    nu = rng.uniform(-4, 0.5, H).astype(np.float32)  # rho from 0.19 to 0.98
    theta = rng.uniform(0, np.pi, H).astype(np.float32)
    *_, y = _bank(eps, nu, theta)
    y.forward()
    np.testing.assert_allclose(y.d, resonators_ref(eps, nu, theta), atol=2e-5)


def test_gradients_match_finite_differences_of_the_reference():
    """d sum(w * out) / d (eps, nu, theta): nnabla's backward through the Toeplitz construction against central
    differences of the float64 NumPy recurrence."""
    rng = np.random.default_rng(1)
    L, B, H = 9, 2, 3
    eps = rng.standard_normal((L, B, 2 * H))
    nu = np.array([-3.0, -1.0, 0.2])
    theta = np.array([0.3, 1.1, 2.5])
    w = rng.standard_normal((L, B, 2 * H))
    e, n, t, y = _bank(eps.astype(np.float32), nu.astype(np.float32), theta.astype(np.float32), need_grad=True)
    loss = F.sum(y * nn.Variable.from_numpy_array(w.astype(np.float32)))
    loss.forward()
    for v in (e, n, t):
        v.grad.zero()
    loss.backward()

    def numeric(array, index, h=1e-6):
        up, down = array.copy(), array.copy()
        up[index] += h
        down[index] -= h
        args = {"eps": eps, "nu": nu, "theta": theta}
        name = next(k for k, v in args.items() if v is array)
        f = lambda a: float(np.sum(w * resonators_ref(**dict(args, **{name: a}))))  # noqa: E731
        return (f(up) - f(down)) / (2 * h)

    for j in range(H):
        assert n.g[j] == pytest.approx(numeric(nu, j), rel=2e-3, abs=2e-3)
        assert t.g[j] == pytest.approx(numeric(theta, j), rel=2e-3, abs=2e-3)
    for index in [(0, 0, 0), (4, 1, 2), (8, 0, 5), (3, 1, 4)]:
        assert e.g[index] == pytest.approx(numeric(eps, index), rel=2e-3, abs=2e-3)


def test_each_channel_is_stationary_with_unit_variance_and_the_lag_covariances_of_lambda():
    """z starts in its stationary law: Var(Re z_t) = Var(Im z_t) = 1 at every t, first step included, and
    Cov(Re z_t, Re z_(t+k)) = rho^k cos(k theta) (unit-variance channels of a CN(0, 2) complex AR(1))."""
    rng = np.random.default_rng(2)
    L, B = 40, 20000
    nu = np.array([np.log(-np.log(0.9)), np.log(-np.log(0.5))], np.float32)
    theta = np.array([0.6, 2.0], np.float32)
    *_, y = _bank(rng.standard_normal((L, B, 4)).astype(np.float32), nu, theta)
    y.forward()
    z = y.d.astype(np.float64)
    var = z.var(axis=1)  # (L, 4)
    assert np.abs(var - 1).max() < 0.06
    rho = np.exp(-np.exp(nu.astype(np.float64)))
    for j in range(2):
        for k in (1, 3, 6):
            cov = np.mean(z[10:L - k, :, j] * z[10 + k:, :, j])
            assert cov == pytest.approx(rho[j] ** k * np.cos(k * theta[j]), abs=0.03)


def test_grid_spans_twice_the_window_to_the_lowest_period_and_starts_damped():
    theta, nu = resonator_grid(14, 128)
    assert theta[0] == pytest.approx(np.pi / 128) and theta[-1] == pytest.approx(2 * np.pi / LOWEST_PERIOD)
    np.testing.assert_allclose(np.diff(np.log(theta)), np.log(theta[1] / theta[0]), rtol=1e-4)  # log-spaced
    rho = np.exp(-np.exp(nu))
    assert np.all(rho < 1) and np.all(rho > 0.9)
    assert resonator_grid(1, 24)[0] == pytest.approx([np.pi / 24])


def test_shapes_are_checked():
    with pytest.raises(ValueError, match=r"resonators: eps \(4, 2, 5\) needs 2 H channels"):
        _bank(np.zeros((4, 2, 5), np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32))


def test_generator_takes_two_noise_channels_per_resonator_and_the_plain_ops_sru_agrees():
    """model.generator.resonators = R adds 2 R step-noise channels (after the output noise's) whose bank output G
    reads; the generator's fused SRU and its plain-ops twin (what export serialises) agree with the bank in."""
    gcfg = {"name": "sru", "noise_dim": 3, "static_noise_dim": 4, "hidden_size": 16, "num_layers": 2,
            "bidirectional": False, "weight_c": False, "layer_norm": False, "dropout": 0.0, "highway_bias": 0.0,
            "time_feature": True, "output_activation": "sigmoid", "oscillators": True, "output_noise_dim": 2,
            "resonators": 5}
    assert noise_shapes(gcfg, 12, 4)["step"] == (12, 4, 3 + 2 + 10)
    noise = sample_noise(gcfg, 12, 4, np.random.default_rng(0))
    fused = generator_output(fresh_generator(gcfg, 12, 4, 6, seed=3), noise)
    with nn.parameter_scope("G"):
        assert nn.get_parameters(grad_only=False)["resonator_theta"].shape == (5,)
    ref = generator_output(fresh_generator(gcfg, 12, 4, 6, seed=3, impl="ref"), noise)
    np.testing.assert_allclose(fused, ref, atol=2e-5)
    moved = dict(noise, step=noise["step"].copy())
    moved["step"][:, :, -1] += 1.0  # the last resonator's drive
    assert np.abs(generator_output(fresh_generator(gcfg, 12, 4, 6, seed=3), moved) - fused).max() > 1e-4
