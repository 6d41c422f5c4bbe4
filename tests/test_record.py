"""wizard.record behaves as the frozen/mutable dataclass it replaces, and wizard.lazy_re as re.compile."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
import pkgutil
import re
import subprocess
import sys
from typing import Any, ClassVar

import pytest

import wizard
from wizard import lazy_re
from wizard.record import FrozenRecordError, asdict, field, fields, is_record, record, replace

pytestmark = pytest.mark.unit


@record
class Point:
    """A point."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str = field(default="", compare=False)
    KIND: ClassVar[str] = "point"


@record
class Point3(Point):
    z: int = 0


@record
class Bag:
    items: dict[str, int] = field(default_factory=dict, hash=False)
    name: str = "bag"


@record(frozen=False)
class Counter:
    seen: set[str] = field(default_factory=set)
    n: int = 0


@dataclasses.dataclass(frozen=True)
class DPoint:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str = dataclasses.field(default="", compare=False)


def test_construction_defaults_and_errors_match_a_dataclass() -> None:
    assert Point(1) == Point(x=1, y=0, tags=())
    assert Point(1, 2).y == 2 and Point(1, tags=("a",)).tags == ("a",)
    for make in (lambda c: c(), lambda c: c(1, 2, (), "", 5), lambda c: c(1, x=2), lambda c: c(1, w=2)):
        with pytest.raises(TypeError):
            make(DPoint)
        with pytest.raises(TypeError):
            make(Point)
    assert Point.KIND == "point" and "KIND" not in [f.name for f in fields(Point)]
    assert Point.__match_args__ == ("x", "y", "tags", "note")


def test_repr_eq_hash_match_a_dataclass() -> None:
    p, d = Point(1, 2, ("a",), "n"), DPoint(1, 2, ("a",), "n")
    assert repr(p) == repr(d).replace("DPoint", "Point")
    assert Point(1, note="a") == Point(1, note="b")  # compare=False
    assert hash(Point(1, note="a")) == hash(Point(1, note="b"))
    assert hash(Point(1, 2, ("t",))) == hash(DPoint(1, 2, ("t",))) and len({Point(1), Point(1), Point(2)}) == 2
    assert Point(1) != Point3(1)  # another class is never equal, as with dataclasses
    assert Point(1).__eq__(DPoint(1)) is NotImplemented
    assert hash(Bag({"a": 1})) == hash(Bag({"b": 2}))  # hash=False: left out of the hash, kept in eq
    assert Bag({"a": 1}) != Bag({"b": 2})


def test_frozen_and_mutable() -> None:
    p = Point(1)
    with pytest.raises(FrozenRecordError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.x  # type: ignore[misc]
    c = Counter()
    c.seen.add("a")
    c.n += 1
    assert Counter().seen == set() and c == Counter({"a"}, 1)
    with pytest.raises(TypeError):
        hash(c)  # mutable and compared by value: unhashable, as a dataclass


def test_inheritance_factories_and_mutable_defaults() -> None:
    assert [f.name for f in fields(Point3)] == ["x", "y", "tags", "note", "z"]
    assert Point3(1, z=3).z == 3 and Point3(1, 2, (), "", 3) == Point3(x=1, y=2, z=3)
    a, b = Bag(), Bag()
    assert a.items == {} and a.items is not b.items
    with pytest.raises(ValueError):
        record(type("Bad", (), {"__annotations__": {"xs": "list[int]"}, "xs": []}))
    with pytest.raises(TypeError):
        record(type("Order", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))
    with pytest.raises(TypeError):
        @record(frozen=False)
        class Mixed(Point):
            pass


def test_replace_asdict_fields_is_record() -> None:
    p = Point3(1, tags=("a",), z=2)
    q = replace(p, y=5)
    assert q == Point3(1, 5, ("a",), "", 2) and p.y == 0 and type(q) is Point3
    with pytest.raises(TypeError):
        replace(p, w=1)
    nested = Bag({"k": 1}, name="n")
    assert asdict(nested) == {"items": {"k": 1}, "name": "n"}
    assert asdict(replace(p, tags=("a", "b"))) == dataclasses.asdict(DPoint(1, 0, ("a", "b"))) | {"z": 2}
    assert is_record(p) and is_record(Point3) and not is_record(DPoint(1)) and not is_record(1)
    with pytest.raises(TypeError):
        fields(DPoint)


def test_pickle_and_copy_round_trip() -> None:
    p = Point3(1, 2, ("t",), "n", 3)
    assert pickle.loads(pickle.dumps(p)) == p
    assert copy.deepcopy(p) == p and copy.copy(p) == p


def test_declaring_a_record_generates_no_code() -> None:
    """The point of wizard.record: no source text exec'd per class (dataclasses runs six per class)."""
    code = ("import builtins, sys\ncalls = []\nreal = builtins.exec\n"
            "builtins.exec = lambda src, *a: (calls.append(1) if isinstance(src, str) else None, real(src, *a))[1]\n"
            "import wizard.model\nbuiltins.exec = real\n"
            "print(len(calls), 'dataclasses' in sys.modules, 'inspect' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "False", "False"]


def _all_lazy_patterns() -> list[lazy_re.Pattern]:
    import gc

    for m in pkgutil.walk_packages(wizard.__path__, "wizard."):
        if m.name.endswith("__main__") or ".examples" in m.name or ".fleet.plugins" in m.name:
            continue
        importlib.import_module(m.name)
    return [o for o in gc.get_objects() if isinstance(o, lazy_re.Pattern)]


def test_every_pattern_in_the_wizard_compiles() -> None:
    """A lazy pattern no longer fails at import: compile each one here instead."""
    patterns = _all_lazy_patterns()
    assert len(patterns) > 200
    for p in patterns:
        assert isinstance(p.compiled, re.Pattern), p


def test_lazy_pattern_acts_as_re_compile() -> None:
    text = "gfx1100 and gfx90a; gfx942"
    for flags in (0, re.I | re.M):
        lazy, real = lazy_re.compile(r"gfx(\w+)", flags), re.compile(r"gfx(\w+)", flags)
        assert lazy._compiled is None
        m = lazy.search(text, 3)
        assert m is not None and m.group(1) == real.search(text, 3).group(1)  # type: ignore[union-attr]
        assert lazy._compiled is not None and lazy.search == lazy.compiled.search  # methods handed over
        calls: list[Any] = [("match", (text,)), ("fullmatch", ("gfx1",)), ("findall", (text,)),
                            ("sub", ("X", text)), ("subn", (lambda m: m.group(1), text)), ("split", (text,))]
        for name, args in calls:
            got, want = getattr(lazy, name)(*args), getattr(real, name)(*args)
            assert (got.group(0) if isinstance(got, re.Match) else got) == \
                (want.group(0) if isinstance(want, re.Match) else want), name
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
        assert lazy.flags == real.flags and lazy.pattern == real.pattern
    bad = lazy_re.compile("(")
    with pytest.raises(re.error):
        bad.search("x")


@record
class Normalised:
    names: tuple[str, ...] = ("a",)

    def __post_init__(self) -> None:
        if not self.names:
            raise ValueError("a non-empty list")
        object.__setattr__(self, "names", tuple(dict.fromkeys(self.names)))


def test_post_init_validates_and_normalises_as_a_dataclass() -> None:
    assert Normalised(("b", "b", "c")).names == ("b", "c")
    assert replace(Normalised(), names=("x", "x")).names == ("x",)
    with pytest.raises(ValueError):
        Normalised(())


def test_every_record_field_type_resolves() -> None:
    """field_types evaluates every record's annotations, those naming typing's types (Any, Sequence ...) in modules
    that import typing for the type checker only (wizard/record.py) included: the facts a fleet host sends back, the
    journal's step records and a plan file's params are rebuilt from them."""
    import gc

    from wizard.model import StepPlan
    from wizard.record import field_types

    _all_lazy_patterns()  # imports every module of the wizard
    # a step's contexts and the TUI's session hold live objects (the knowledge base, a pending run): never rebuilt
    # from text, their annotations name what their modules import for the type checker alone
    live = ("wizard.steps._common", "wizard.session")
    classes = {o for o in gc.get_objects()
               if isinstance(o, type) and is_record(o) and o.__module__.startswith("wizard") and o.__module__ not in live}
    assert len(classes) > 150
    for cls in classes:
        assert set(field_types(cls)) >= {f.name for f in fields(cls)}, cls
    assert field_types(StepPlan)["params"] == tuple[tuple[str, Any], ...]  # wizard.model names Any for mypy only
