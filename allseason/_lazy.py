"""Names imported on first use (PEP 562), one mechanism for every package that has them.

A module hands :func:`lazy_names` a table (public name → the module that defines it, relative
as in its own imports) and gets back its module-level ``__getattr__`` and ``__dir__``. Used where an
eager import would cost every process: ``import allseason`` (numba, scipy, every room),
``allseason.kernels`` (numba), ``allseason.api`` (the agent and scipy's special functions).
For mypy the package also imports the same names under ``TYPE_CHECKING``;
tests/house/test_lazy_names.py checks that both lists hold the same names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str,
    namespace: dict[str, Any],
    homes: Mapping[str, str],
    *,
    submodules: bool = False,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for the names in ``homes``.

    Parameters
    ----------
    package
        The module's ``__name__`` (named in the error of an unknown attribute).
    namespace
        The module's ``globals()``: a name, once imported, is stored there, so the next
        lookup is an ordinary attribute read.
    homes
        Public name → the module defining it, relative to the module's ``__package__`` as its
        own ``from .x import`` would be (``".api"``).
    submodules
        Whether any other attribute that is not a dunder is tried as a submodule
        (``allseason.api``, ``allseason.kernels.lints``) before raising ``AttributeError``.
    """
    anchor = namespace["__package__"]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is not None:
            value = getattr(importlib.import_module(home, anchor), name)
            namespace[name] = value
            return value
        if submodules and not name.startswith("__"):
            try:
                return importlib.import_module(f".{name}", package)
            except ModuleNotFoundError as e:
                if e.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
