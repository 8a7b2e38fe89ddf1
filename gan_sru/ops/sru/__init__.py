"""The SRU: `reference.py` (NumPy, the contract), `cpu.py` (numba kernel), `cuda.py` + `sru.cu` (CUDA kernels),
`layer.py` (the nnabla function `SRURecurrence`, its plain-ops twin `impl="ref"`, and the layer stack `sru`)."""
from .layer import IMPLS, SRURecurrence, sru, sru_recurrence

__all__ = ["IMPLS", "SRURecurrence", "sru", "sru_recurrence"]
