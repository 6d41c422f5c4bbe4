"""rocm-wizard: get PyTorch working on AMD GPUs under Linux."""

__version__ = "0.1.0"
