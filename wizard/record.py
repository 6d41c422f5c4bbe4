"""Records: the wizard's typed value classes, declared like dataclasses and cheap to create.

``@record`` reads a class's annotations as ``@dataclass`` does and gives it ``__init__``, ``__repr__``,
``__eq__`` and (frozen, the default) ``__hash__`` plus read-only attributes. Unlike ``dataclasses`` it
generates no code: the methods are closures over the field table, so declaring a class costs tens of
microseconds instead of the ~1 ms of six ``exec`` calls, and importing this module pulls in nothing
(``dataclasses`` imports ``inspect``, ``ast`` and ``tokenize``). With ~150 value classes on the way to
``detect`` and the TUI's first screen, that is the difference between starting in 2x a bare
interpreter and 4x (``python benchmarks/detect_speed.py``).

    @record
    class Gpu:
        name: str | None = None
        sources: tuple[Evidence, ...] = ()

    @record(frozen=False)
    class Counter:
        seen: set[str] = field(default_factory=set)

``replace``, ``fields``, ``asdict`` and ``is_record`` are the functions the rest of the code uses on
them. Type checkers see ``@record`` as a dataclass transform (PEP 681), so constructors, field types
and read-only attributes are checked as for ``@dataclass``.
"""

from __future__ import annotations

# typing is for the type checker only in the modules on the way to ``detect``: importing it is ~12% of a whole
# ``detect --json`` (callgrind: ~12 M of ~210 M instructions; ``python benchmarks/detect_speed.py``). Those modules
# say ``TYPE_CHECKING = False`` and import typing's names under ``if TYPE_CHECKING:`` (mypy reads that block as
# taken); their annotations are never evaluated (``from __future__ import annotations``), except by
# ``field_types`` below, which supplies typing's names (tests/test_cli.py::test_detect_imports_no_typing).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar, dataclass_transform, overload

    T = TypeVar("T")
else:
    def overload(fn: object) -> object:  # typing.overload: the type checker's alone
        return fn

    def dataclass_transform(**_: object) -> object:  # typing.dataclass_transform (PEP 681): the same
        return lambda cls: cls


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenRecordError(AttributeError):
    """Assigning to or deleting a field of a frozen record."""


class Field:
    """One field of a record: its name, its default (or factory), and whether eq and hash use it."""

    __slots__ = ("name", "default", "default_factory", "compare", "hash")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, compare: bool = True,
                 hash: bool | None = None) -> None:  # noqa: A002 - the dataclasses spelling
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.hash = compare if hash is None else hash

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | Any = MISSING, compare: bool = True,
          hash: bool | None = None) -> Any:  # noqa: A002
    """A field with a factory for its default, or left out of eq/hash (as ``dataclasses.field``)."""
    return Field(default, default_factory, compare, hash)


_FIELDS = "__record_fields__"


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


def _collect(cls: type) -> tuple[Field, ...]:
    by_name: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get(_FIELDS, ()):
            by_name[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        if isinstance(value, Field):
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        elif value is not MISSING and isinstance(value, (list, dict, set)):
            raise ValueError(f"{cls.__name__}.{name}: mutable default {type(value).__name__}: use field(default_factory=...)")
        by_name.pop(name, None)
        by_name[name] = f
    out = tuple(by_name.values())
    seen_default = False
    for f in out:
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError(f"{cls.__name__}: non-default field {f.name!r} follows a default field")
        seen_default = seen_default or has_default
    return out


def _init(cls: type, table: tuple[Field, ...]) -> Callable[..., None]:
    names = tuple(f.name for f in table)
    known = frozenset(names)
    count = len(names)
    defaults = {f.name: f.default for f in table if f.default is not MISSING}
    factories = {f.name: f.default_factory for f in table if f.default_factory is not MISSING}
    title = cls.__qualname__
    post_init = hasattr(cls, "__post_init__")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > count:
            raise TypeError(f"{title}() takes {count} positional arguments but {len(args)} were given")
        values = self.__dict__
        values.update(zip(names, args))
        for key, value in kwargs.items():
            if key not in known:
                raise TypeError(f"{title}() got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{title}() got multiple values for argument {key!r}")
            values[key] = value
        if len(values) < count:
            missing = []
            for name in names:
                if name in values:
                    continue
                if name in defaults:
                    values[name] = defaults[name]
                elif name in factories:
                    values[name] = factories[name]()
                else:
                    missing.append(name)
            if missing:
                values.clear()
                raise TypeError(f"{title}() missing required argument(s): {', '.join(map(repr, missing))}")
        if post_init:
            self.__post_init__()  # validation, as a dataclass's (it may object.__setattr__ a normalised value)

    return __init__


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    return lambda obj: tuple([obj.__dict__[n] for n in names])


def _methods(cls: type, table: tuple[Field, ...], frozen: bool) -> None:
    """Give ``cls`` the methods ``@dataclass(frozen=...)`` would, keeping any its body defines."""
    own = cls.__dict__
    names = tuple(f.name for f in table)
    compared = _values(tuple(f.name for f in table if f.compare))
    hashed = _values(tuple(f.name for f in table if f.hash))

    def __repr__(self: Any) -> str:
        inner = ", ".join([f"{name}={self.__dict__[name]!r}" for name in names])
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return compared(self) == compared(other)

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    def __setattr__(self: Any, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self: Any, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    explicit_hash = not ("__hash__" not in own or (own["__hash__"] is None and "__eq__" in own))
    new: dict[str, Any] = {"__init__": _init(cls, table), "__repr__": __repr__, "__eq__": __eq__}
    if frozen:
        new.update(__setattr__=__setattr__, __delattr__=__delattr__)
        if not explicit_hash:
            new["__hash__"] = __hash__
    elif not explicit_hash:
        new["__hash__"] = None  # mutable and compared by value: unhashable, as a dataclass
    for name, value in new.items():
        if name in own and name != "__hash__":
            if name in ("__setattr__", "__delattr__"):
                raise TypeError(f"{cls.__name__}: a frozen record cannot define {name}")
            continue
        setattr(cls, name, value)


def _make(cls: type[T], frozen: bool) -> type[T]:
    for base in cls.__mro__[1:-1]:
        if _FIELDS in base.__dict__ and getattr(base, "__record_frozen__") != frozen:
            raise TypeError(f"{cls.__name__}: cannot mix frozen and mutable records in one hierarchy")
    table = _collect(cls)
    setattr(cls, _FIELDS, table)
    setattr(cls, "__record_frozen__", frozen)
    if "__match_args__" not in cls.__dict__:
        setattr(cls, "__match_args__", tuple(f.name for f in table))
    _methods(cls, table, frozen)
    return cls


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, frozen: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(cls: type[T] | None = None, /, *, frozen: bool = True) -> type[T] | Callable[[type[T]], type[T]]:
    """Make ``cls`` a record (frozen unless ``frozen=False``)."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)


def is_record(obj: Any) -> bool:
    """Whether ``obj`` is a record class or an instance of one."""
    return hasattr(obj if isinstance(obj, type) else type(obj), _FIELDS)


def fields(obj: Any) -> tuple[Field, ...]:
    """The fields of a record class or instance, in declaration order (base classes first)."""
    table = getattr(obj if isinstance(obj, type) else type(obj), _FIELDS, None)
    if table is None:
        raise TypeError(f"not a record: {obj!r}")
    return table  # type: ignore[no-any-return]


def field_types(cls: type) -> dict[str, Any]:
    """A record class's field types, its annotations evaluated (``typing.get_type_hints``). A module may name
    typing's types for the type checker only (see ``TYPE_CHECKING`` above): those names come from typing here,
    unless a module of the class's hierarchy defines the same name itself."""
    import sys
    import typing

    own: set[str] = set()
    for base in cls.__mro__:
        module = sys.modules.get(base.__module__)
        if module is not None:
            own.update(vars(module))
    names = {n: getattr(typing, n) for n in typing.__all__ if n not in own}
    return typing.get_type_hints(cls, localns=names)


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record ``obj`` with ``changes`` applied (unknown names raise TypeError)."""
    values = {f.name: obj.__dict__[f.name] for f in fields(obj)}
    unknown = changes.keys() - values.keys()
    if unknown:
        raise TypeError(f"{type(obj).__qualname__} has no field(s) {', '.join(sorted(unknown))}")
    values.update(changes)
    return type(obj)(**values)


def asdict(obj: Any) -> dict[str, Any]:
    """A record as a dict, records inside it (also in lists, tuples and dicts) turned into dicts too."""
    return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj)}


def _plain(value: Any) -> Any:
    if is_record(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value) if not hasattr(value, "_fields") else \
            type(value)(*(_plain(v) for v in value))
    if isinstance(value, dict):
        return type(value)((_plain(k), _plain(v)) for k, v in value.items())
    return value


__all__ = ["record", "field", "Field", "fields", "replace", "asdict", "is_record", "FrozenRecordError", "MISSING"]
