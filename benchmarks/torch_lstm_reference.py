"""PyTorch's CPU nn.LSTM (oneDNN) at the SRU benchmark's shapes, for scale: an outside reference.

Not part of `make bench`'s environment (the project's venv has no PyTorch); run it with any Python that
has torch, e.g. `python3.11 -m venv /tmp/t && /tmp/t/bin/pip install torch && /tmp/t/bin/python
benchmarks/torch_lstm_reference.py`. Same protocol as benchmarks/sru_speed.py: one layer, hidden = input
= D, forward + backward of sum(h), float32, median of 5 after 2 warm-up runs. Prints one line a shape.
"""
import time

import torch

SHAPES = [(32, 32, 256), (64, 32, 256), (128, 32, 512), (100, 64, 512)]


def main():
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for L, B, D in SHAPES:
        lstm = torch.nn.LSTM(D, D)
        x = torch.randn(L, B, D, requires_grad=True)

        def run(lstm=lstm, x=x):
            y, _ = lstm(x)
            y.sum().backward()

        for _ in range(2):
            run()
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        print(f"nn.LSTM {L}x{B}x{D}: fwd+bwd median {sorted(times)[2] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
