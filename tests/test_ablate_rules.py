"""bench/ablate.py switches each ranking rule off by replacing what implements it. A rule that moved
or went would be "switched off" by setting an attribute nothing reads (the question-weight rule's
patch outlived its function by one commit): its row would then read as a rule that earns nothing.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from docshelf.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def _ablate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ablate", ROOT / "bench" / "ablate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ablate", module)
    spec.loader.exec_module(module)
    return module


ABLATE = _ablate()


@pytest.mark.parametrize("name", list(ABLATE.RULES))
def test_each_rule_switches_off_something_that_exists(name: str) -> None:
    rule = ABLATE.RULES[name]
    assert rule.patches() or rule.settings, name
    for obj, attr, _ in rule.patches():
        assert hasattr(obj, attr), f"{name}: {getattr(obj, '__name__', obj)} has no {attr}"
    settings = Settings()
    for key in rule.settings:
        section, attr = key.split(".")
        assert hasattr(getattr(settings, section), attr), f"{name}: no setting {key}"


def test_a_switched_off_rule_is_restored_afterwards() -> None:
    import docshelf.search.fusion as fusion

    scale = fusion.lone_scale
    with ABLATE.switched_off("lone-hit coverage scale"):
        off = fusion.lone_scale
    assert scale(0.1) < off(0.1) == 1.0
    assert fusion.lone_scale is scale


def test_each_named_test_exists() -> None:
    """A rule that stays for a user-visible case names the test that searches for it."""
    defined = {
        m for f in (ROOT / "tests").rglob("test_*.py") for m in re.findall(r"def (test_\w+)", f.read_text())
    }
    for rule, test in ABLATE.NAMED.items():
        assert rule in ABLATE.RULES, rule
        assert test.split("[")[0] in defined, (rule, test)


def test_a_deleted_rule_is_not_run_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = next(iter(ABLATE.GONE))
    monkeypatch.setattr(sys, "argv", ["ablate.py", "run", "--work", str(tmp_path), "--bible", str(tmp_path)])
    monkeypatch.setattr(sys, "argv", [*sys.argv, "--rules", gone, "--results", str(tmp_path / "r.json")])
    with pytest.raises(SystemExit, match="deleted"):
        ABLATE.main()
    assert not (tmp_path / "r.json").exists()
