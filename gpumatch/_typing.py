"""Type aliases used in the public signatures (for type checkers and the docs).

The package is typed (``py.typed``); these aliases keep the signatures
readable.  CuPy is optional, so its types are named in strings that a type
checker resolves only where CuPy is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeAlias, Union

import numpy as np
import numpy.typing as npt
import scipy.sparse

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    import cupy
    import cupyx.scipy.sparse

__all__ = ["Array", "Backend", "GraphLike", "IndexLike", "PermType", "SparseMatrix"]

#: Where a solver runs: ``"auto"`` (the GPU when CuPy finds one, else the compiled CPU engine),
#: ``"numba"`` (that engine), ``"cupy"`` or ``"numpy"`` (the vectorised reference twin of the GPU kernels).
Backend: TypeAlias = Literal["auto", "numpy", "cupy", "numba"]

#: scipy's matching format: ``"row"`` (for each column its row) or ``"column"`` (for each row its column).
PermType: TypeAlias = Literal["row", "column"]

#: A NumPy array, or a CuPy array for CuPy input.
Array: TypeAlias = Union[np.ndarray, "cupy.ndarray"]

#: A list of vertex ids: anything NumPy reads as integers, or a CuPy array.
IndexLike: TypeAlias = Union[npt.ArrayLike, "cupy.ndarray"]

#: A SciPy sparse matrix or array, or a cupyx sparse matrix.
SparseMatrix: TypeAlias = Union[scipy.sparse.spmatrix, "scipy.sparse.sparray", "cupyx.scipy.sparse.spmatrix"]

#: A graph as the solvers take it: a sparse matrix or array (SciPy or
#: cupyx; CSR, CSC or COO), or an ``(indptr, indices, shape)`` tuple of a
#: CSR pattern.
GraphLike: TypeAlias = Union[SparseMatrix, tuple[IndexLike, IndexLike, tuple[int, int]]]
