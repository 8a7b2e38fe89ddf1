"""Operators: the SRU (reference, CPU, CUDA, the nnabla function and the layer) and the host-BLAS matmul."""
