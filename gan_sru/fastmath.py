"""Elementwise math for numba kernels, shared by the SRU's CPU kernels (gan_sru/ops/sru/cpu.py) and the
evaluation GRU (gan_sru/metrics/gru.py): `tanh` and `sigmoid`, exact (libm) in float64 and a vectorisable
rational form in float32."""
import math

import numpy as np
from numba import njit, types
from numba.extending import overload

# Rational tanh for float32 (Eigen's minimax fit; max relative error 3.4e-7 against float64 tanh),
# built from mul/add/div only, so the unit loop vectorises; libm's exp/tanh would keep it scalar.
# Constants are float32 so float32 arithmetic is not promoted to float64; error_model="numpy" drops the
# per-division ZeroDivisionError branch that would otherwise keep every loop scalar.
_f = np.float32
_A0, _A1, _A2, _A3 = _f(-2.76076847742355e-16), _f(2.00018790482477e-13), _f(-8.60467152213735e-11), \
    _f(5.12229709037114e-08)
_A4, _A5, _A6 = _f(1.48572235717979e-05), _f(6.37261928875436e-04), _f(4.89352455891786e-03)
_B0, _B1, _B2, _B3 = _f(1.19825839466702e-06), _f(1.18534705686654e-04), _f(2.26843463243900e-03), \
    _f(4.89352518554385e-03)
_CLAMP = _f(7.90531110763549805)
_HALF = _f(0.5)


@njit(inline="always", fastmath=True, error_model="numpy")
def _tanh_fast(x):
    x = min(max(x, -_CLAMP), _CLAMP)
    x2 = x * x
    p = ((((((_A0 * x2 + _A1) * x2 + _A2) * x2 + _A3) * x2 + _A4) * x2 + _A5) * x2 + _A6) * x
    q = ((_B0 * x2 + _B1) * x2 + _B2) * x2 + _B3
    return p / q


def tanh(x):
    """tanh chosen when typing: the rational form for float32, libm for float64 (exact, for FD checks).
    A compile-time choice keeps libm calls out of the float32 loops, which would stop vectorisation."""


@overload(tanh, inline="always")
def _tanh_typed(x):
    if x == types.float32:
        return lambda x: _tanh_fast(x)
    return lambda x: math.tanh(x)


@njit(inline="always", error_model="numpy")
def sigmoid(a):
    return _HALF * tanh(_HALF * a) + _HALF
