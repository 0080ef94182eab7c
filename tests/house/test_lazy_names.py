"""The names a package imports on first use (allseason/_lazy.py) are the names mypy sees.

Each lazy package writes its names twice: a table for :func:`allseason._lazy.lazy_names` and
an import block under ``TYPE_CHECKING``. Here both are read (the table from the package, the
block from its source) and must give every name the same home; each name then resolves to the
object its home defines.
"""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest

LAZY = [("allseason", "_HOME"), ("allseason.kernels", "_HOME"), ("allseason.api", "_AGENT_NAMES")]


def _type_checking_imports(module) -> dict[str, str]:
    """Name -> relative module of every ``from .x import name`` under ``if TYPE_CHECKING:``."""
    tree = ast.parse(inspect.getsource(module))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom), ast.unparse(imp)
                for alias in imp.names:
                    found[alias.asname or alias.name] = "." * imp.level + (imp.module or "")
    return found


@pytest.mark.parametrize(("package", "table"), LAZY)
def test_the_lazy_table_is_the_type_checking_block(package, table):
    module = importlib.import_module(package)
    homes = getattr(module, table)
    assert homes, f"{package}.{table} is empty"
    assert _type_checking_imports(module) == dict(homes)


@pytest.mark.parametrize(("package", "table"), LAZY)
def test_every_lazy_name_resolves_to_its_homes_object(package, table):
    module = importlib.import_module(package)
    for name, home in getattr(module, table).items():
        expected = getattr(importlib.import_module(home, module.__package__), name)
        assert getattr(module, name) is expected, (package, name)
        assert name in dir(module)


def test_an_unknown_name_is_an_attribute_error_and_a_room_is_imported():
    import allseason
    import allseason.kernels as kernels

    with pytest.raises(AttributeError, match="has no attribute 'no_such_room'"):
        allseason.no_such_room  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_family'"):
        kernels.no_such_family  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        allseason.api.no_such_name  # noqa: B018
    assert allseason.sim.__name__ == "allseason.sim"
    assert kernels.types.__name__ == "allseason.kernels.types"
