"""report.html: one self-contained page of an evaluation (gan_sru.report.html)."""
from .html import MIN_HOLDOUT, marginals_png, readings, sample_size_warning, write_html

__all__ = ["MIN_HOLDOUT", "marginals_png", "readings", "sample_size_warning", "write_html"]
