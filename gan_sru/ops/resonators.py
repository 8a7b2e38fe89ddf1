"""A bank of stochastic resonators: stationary complex AR(1) processes driven by noise, in plain nnabla ops, and
their NumPy reference.

    z_0 = e_0,   z_t = lambda z_(t-1) + sqrt(1 - |lambda|^2) e_t        (t >= 1), per unit j
    lambda_j = rho_j exp(i theta_j),  rho_j = exp(-exp(nu_j)),  e_t ~ CN(0, 1): two real N(0, 1) channels
    out = [Re z, Im z]                                                  (L, B, 2 H), unit variance

z starts in its stationary law (CN(0, 1)) and stays in it, so a window looks like one cut from the middle of a
long series. An SRU cell is a leaky integrator: its recurrence has real poles only, so it can smooth noise but
not ring. Quasi-periodic structure that drifts in phase and amplitude (a business cycle, a daily load curve,
a damped oscillation) is the output of a recurrence with complex poles; this bank gives G such processes at
learned frequencies theta and coherence times 1 / (1 - rho), as inputs that its SRU gates and mixes. With rho
near 1 a unit is a random-phase sinusoid of Rayleigh amplitude, with rho small it is white noise.

Because the recurrence is linear and time-invariant, its output is a causal convolution: z = T (s e), T_j the
(L, L) lower-triangular Toeplitz matrix of lambda_j^k, s the input scale (1 at t = 0, sqrt(1 - rho^2) after).
T is built from the parameters with elementwise ops and applied with one batched matmul, so the bank is plain
nnabla ops (differentiable in nu and theta by nnabla, exportable, the same on CPU and CUDA); its cost is
O(H L^2 B), small next to the SRU's matmuls up to a few hundred steps.
"""
import nnabla as nn
import nnabla.functions as F
import numpy as np

LOWEST_PERIOD = 3.0  # the grid's shortest period in steps (theta 2 pi / 3)


def resonator_grid(size, max_len):
    """Initial (theta (size,), nu (size,)): frequencies log-spaced from a period of twice the longest length to
    LOWEST_PERIOD steps; each unit's coherence time 1 / (1 - rho) starts at 4 of its periods (capped at 4
    windows), a ringing that the data can shorten or lengthen."""
    lowest = np.pi / max(max_len, 2)
    top = max(2 * np.pi / LOWEST_PERIOD, lowest)
    theta = np.geomspace(lowest, top, size) if size > 1 else np.array([lowest])
    coherence = np.minimum(4 * 2 * np.pi / theta, 4 * max_len)
    rho = 1.0 - 1.0 / coherence
    return theta.astype(np.float32), np.log(-np.log(rho)).astype(np.float32)


def _lag_matrix(L):
    """(L, L) t - s at and below the diagonal, 0 above; and the lower-triangular mask."""
    t = np.arange(L)
    lag = t[:, None] - t[None, :]
    return np.maximum(lag, 0).astype(np.float32), (lag >= 0).astype(np.float32)


def resonators(eps, nu, theta):
    """eps (L, B, 2 H) standard normal (channels 0..H-1 the real parts, H..2H-1 the imaginary ones), nu and theta
    (H,) Variables -> (L, B, 2 H) [Re z, Im z] of the module docstring's recurrence, unit variance per channel."""
    L, B, H2 = eps.shape
    H = H2 // 2
    if H2 != 2 * H or nu.shape != (H,) or theta.shape != (H,):
        raise ValueError(f"resonators: eps {eps.shape} needs 2 H channels for nu {nu.shape} and theta "
                         f"{theta.shape} of shape (H,)")
    lag, tri = _lag_matrix(L)
    lag_v = nn.Variable.from_numpy_array(lag.reshape(1, L, L))
    tri_v = nn.Variable.from_numpy_array(tri.reshape(1, L, L))
    rate = F.reshape(F.exp(nu), (H, 1, 1))  # -log rho
    decay = F.exp(-F.broadcast(rate, (H, L, L)) * F.broadcast(lag_v, (H, L, L))) * F.broadcast(tri_v, (H, L, L))
    angle = F.broadcast(F.reshape(theta, (H, 1, 1)), (H, L, L)) * F.broadcast(lag_v, (H, L, L))
    tc, ts = decay * F.cos(angle), decay * F.sin(angle)  # (H, L, L): Re and Im of lambda^(t - s), t >= s
    # the input scale: 1 at t = 0 (the stationary start), sqrt(1 - rho^2) after
    gain = F.pow_scalar(1.0 - F.exp(-2.0 * F.exp(nu)) + 1e-12, 0.5)  # (H,)
    first = nn.Variable.from_numpy_array(np.eye(1, L, dtype=np.float32).reshape(1, L))  # 1 at t = 0
    scale = F.broadcast(first, (H, L)) + F.broadcast(F.reshape(gain, (H, 1)), (H, L)) * (1.0 - F.broadcast(first,
                                                                                                          (H, L)))
    e = F.transpose(eps, (2, 0, 1))  # (2H, L, B)
    scale_b = F.broadcast(F.reshape(scale, (H, L, 1)), (H, L, B))
    er = F.slice(e, start=(0, 0, 0), stop=(H, L, B)) * scale_b
    ei = F.slice(e, start=(H, 0, 0), stop=(2 * H, L, B)) * scale_b
    zr = F.batch_matmul(tc, er) - F.batch_matmul(ts, ei)  # (H, L, B)
    zi = F.batch_matmul(ts, er) + F.batch_matmul(tc, ei)
    return F.transpose(F.concatenate(zr, zi, axis=0), (1, 2, 0))


def resonators_ref(eps, nu, theta):
    """NumPy reference of ``resonators``: the recurrence itself, step by step, in complex float64."""
    eps = np.asarray(eps, np.float64)
    L, B, H2 = eps.shape
    H = H2 // 2
    rho = np.exp(-np.exp(np.asarray(nu, np.float64)))
    lam = rho * np.exp(1j * np.asarray(theta, np.float64))
    e = eps[:, :, :H] + 1j * eps[:, :, H:]
    z = np.empty((L, B, H), complex)
    z[0] = e[0]
    for t in range(1, L):
        z[t] = lam * z[t - 1] + np.sqrt(1 - rho ** 2) * e[t]
    return np.concatenate([z.real, z.imag], axis=2)


def resonator_bank(eps, max_len):
    """eps (L, B, 2 H) standard normal -> (L, B, 2 H): ``resonators`` with learned nu and theta (parameters
    "resonator_nu", "resonator_theta" under the current scope, started at ``resonator_grid``)."""
    H = eps.shape[2] // 2
    theta0, nu0 = resonator_grid(H, max_len)
    nu = nn.parameter.get_parameter_or_create("resonator_nu", (H,), nu0)
    theta = nn.parameter.get_parameter_or_create("resonator_theta", (H,), theta0)
    return resonators(eps, nu, theta)
