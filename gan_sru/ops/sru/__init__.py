"""The SRU: `reference.py` (NumPy, the contract), `cpu.py` (numba kernel), `cuda.py` + `sru.cu` (CUDA kernels),
`layer.py` (the nnabla function `SRURecurrence`, its plain-ops twin `impl="ref"`, and the layer stack `sru`).

The layer's names are imported on first use (PEP 562), so that `reference`, `cuda` and `bandwidth` import
without nnabla: on a GPU machine where nnabla-ext-cuda cannot be installed, the kernels still run and are
tested through CuPy."""
__all__ = ["IMPLS", "SRURecurrence", "sru", "sru_recurrence"]


def __getattr__(name):
    if name in __all__:
        from . import layer
        return getattr(layer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
