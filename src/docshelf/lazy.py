"""numpy, imported where it is first used rather than where it is named.

A keyword search, `status`, `list`, `read` and `grep` never touch a vector, yet the store and the
embedding modules they import name numpy; its import is ~0.1 s of every such command (a third of
a keyword search from the command line). Modules that work on vectors write::

    if TYPE_CHECKING:
        import numpy as np
    else:
        from docshelf.lazy import numpy as np

so the type checker sees numpy itself and the first attribute read at run time imports it.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

__all__ = ["LazyModule", "numpy"]


class LazyModule(types.ModuleType):
    """A module that is imported on its first attribute read."""

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(self.__name__)
        # later reads find the module's names here and skip this method (hot loops use np.*)
        self.__dict__.update(module.__dict__)
        return getattr(module, name)


numpy = LazyModule("numpy")
