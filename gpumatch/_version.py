"""The version of gpumatch: the one place it is written.

``pyproject.toml`` reads it for the package metadata (setuptools' dynamic
version), and :data:`gpumatch.__version__` imports it.  Bump it together
with a new section of ``CHANGELOG.md``.
"""

__version__ = "0.7.7"
