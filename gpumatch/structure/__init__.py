"""Dulmage–Mendelsohn decomposition and block triangular form, on GPUs and CPUs.

Public functions: :func:`dulmage_mendelsohn` (MATLAB ``dmperm``'s outputs,
0-based) and :func:`block_triangular_form` (square matrices).  Both build on
a maximum matching (:mod:`gpumatch.matching`), the alternating reachability
behind its König cover, and the strongly connected components of the square
part.  The driver is in ``_dm.py``; the components step in ``_scc.py``, with
its kernels as CUDA (``scc.cu``, launched by ``_scc_cuda.py``) and NumPy
twins (``_scc_numpy.py``).  :func:`check_dulmage_mendelsohn` and
:func:`check_block_triangular` verify a result (``_check.py``).
"""

from ._check import DMCertificate, check_block_triangular, check_dulmage_mendelsohn
from ._dm import BlockTriangularResult, DulmageMendelsohnResult, block_triangular_form, dulmage_mendelsohn

__all__ = ["dulmage_mendelsohn", "block_triangular_form", "DulmageMendelsohnResult", "BlockTriangularResult",
           "check_dulmage_mendelsohn", "check_block_triangular", "DMCertificate"]
