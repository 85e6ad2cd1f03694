"""gpumatch: maximum bipartite matching and maximum flow on GPUs (CuPy) and CPUs (NumPy)."""

__version__ = "0.1.0"
