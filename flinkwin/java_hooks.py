"""Java-named methods of user classes.

A Flink user porting a Java program writes ``onTimer``, ``getKey``, ``createAccumulator``,
``onElement``...; flinkwin's operators, as PyFlink's, call ``on_timer``, ``get_key``,
``create_accumulator``, ``on_element``. A user subclass that defines the Java name of one of its
base's methods in its class body, and not the PyFlink name, gets the PyFlink name too, so the
method runs. PyFlink would ignore a Java-named optional method (an ``onTimer`` next to a
``process_element``) without a word, and its timers would fire into nothing. The Java names
also call the PyFlink-named methods of every subclass, flinkwin's built-ins included (a Java
trigger delegating to ``EventTimeTrigger``'s ``onElement``).

Java's signatures pass a ``Collector`` (``out``) to the methods that emit; flinkwin's, as
PyFlink's, return or yield their outputs. A method flinkwin calls (Java-named or not:
``process(self, key, context, elements, out)``) that needs more arguments than flinkwin passes
is refused when its class is defined, naming the method and the signature flinkwin calls.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, ClassVar


class JavaNamedHooks:
    """Base of the classes users subclass: each class lists in ``_java_hooks`` its methods'
    Java names (``{"onTimer": "on_timer"}``); a subclass's Java-named method is also its
    PyFlink-named one (module docstring)."""

    _java_hooks: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hooks: dict[str, str] = {}
        for base in reversed(cls.__mro__[1:]):
            hooks.update(vars(base).get("_java_hooks", {}))
        own = vars(cls)
        for java, python in hooks.items():
            if java in own and python not in own:
                method = own[java]
                _check_arguments(cls, java, method, getattr(cls, python, None), python)
                setattr(cls, python, method)
        # a PyFlink-named method taking Java's Collector fails as its class is defined too, not
        # at its first call in a Spark worker
        for name in _called_methods(cls, hooks):
            if name in own:
                _check_arguments(cls, name, own[name], _declared(cls, name), name)
        # the class declaring the names: callers may use them too (``trigger.onElement(...)``
        # of a Java trigger delegating to a built-in one)
        for java, python in own.get("_java_hooks", {}).items():
            if not hasattr(cls, java):
                setattr(cls, java, _calling(java, python))


def _called_methods(cls: type, hooks: Mapping[str, str]) -> set[str]:
    """The methods flinkwin calls on ``cls``'s instances: its bases' abstract ones and those
    with Java names."""
    names = set(hooks.values())
    for base in cls.__mro__[1:]:
        names.update(getattr(base, "__abstractmethods__", ()))
    return names


def _declared(cls: type, name: str) -> Any:
    """``name`` as flinkwin's own base classes declare it (None if none does)."""
    for base in cls.__mro__[1:]:
        if base.__module__.startswith("flinkwin.") and name in vars(base):
            return vars(base)[name]
    return None


def _calling(java: str, python: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, python)(*args, **kwargs)

    method.__name__ = method.__qualname__ = java
    method.__doc__ = f"Java's name of ``{python}``."
    return method


def _positional(function: Callable[..., Any]) -> tuple[int, int, bool] | None:
    """(required, accepted, takes *args) positional parameters after ``self``, or None when
    the signature cannot be read."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in parameters[1:]
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(1 for p in positional if p.default is p.empty)
    variadic = any(p.kind is p.VAR_POSITIONAL for p in parameters)
    return required, len(positional), variadic


def _check_arguments(cls: type, java: str, method: Any, base: Any, python: str) -> None:
    if not inspect.isfunction(method) or not inspect.isfunction(base):
        return
    mine, theirs = _positional(method), _positional(base)
    if mine is None or theirs is None or theirs[2]:
        return
    required, _, _ = mine
    _, accepted, _ = theirs
    if required > accepted:
        raise TypeError(
            f"{cls.__qualname__}.{java}{inspect.signature(method)} takes {required} "
            f"arguments, and flinkwin calls it as {python}{inspect.signature(base)} with "
            f"{accepted}: flinkwin's functions follow PyFlink's signatures, which have no "
            "Java Collector (`out`): return or yield the outputs instead"
        )


__all__ = ["JavaNamedHooks"]
