"""Repository-wide collection rules (pytest's rootdir conftest).

``gpumatch/nx`` is the NetworkX backend and imports NetworkX, an optional
dependency (the ``networkx`` extra).  Without NetworkX, ``--doctest-modules``
could not import those modules, so they are not collected; the backend's
tests (``tests/test_networkx.py``) skip themselves.
"""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("networkx") else ["gpumatch/nx"]
