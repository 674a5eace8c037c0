"""Exceptions named after the Java ones Flink throws in the same situations, and the error a
failing user function is reported with."""

from __future__ import annotations

import os
import traceback
from typing import Any, NoReturn

from flinkwin.keys import user_key
from flinkwin.longs import LongOverflowError, located


class IllegalStateError(RuntimeError):
    """Flink's ``IllegalStateException``."""


class UnsupportedOperationError(RuntimeError):
    """Flink's ``UnsupportedOperationException``."""


class FlinkError(RuntimeError):
    """Flink's ``FlinkException``."""


class UnsupportedTimeCharacteristicError(RuntimeError):
    """Flink's ``UnsupportedTimeCharacteristicException``: an operation refused in the time
    characteristic asked for (an interval join in processing time)."""


class NullKeyError(ValueError):
    """Flink's ``NullPointerException`` "Assigned key must not be null!"
    (``KeyGroupRangeAssignment.assignToKeyGroup``): an element's key is null."""


class KeyTypeError(TypeError):
    """A key that its declared ``key_type`` cannot hold (PyFlink's coder of that type fails)."""


class PickledElementsError(TypeError):
    """A stream of pickled Python objects (a function without a declared output type) handed
    to Spark: a DataFrame or a sink would see pickle bytes, never the values."""


#: What to do with the late side output of a window join or coGroup (TaggedUnions of both
#: inputs, whose type no declaration changes).
TAGGED_UNION_FIX = (
    "they are TaggedUnions of both inputs' elements (is_one()/get_one(), is_two()/get_two()), "
    "which have no Spark type and cannot be declared one. Map them to typed values first, e.g. "
    "result.get_side_output(tag).map(lambda u: (1, u.get_one().k) if u.is_one() else "
    "(2, u.get_two().k), output_type=Types.TUPLE([Types.INT(), Types.STRING()])) and write "
    "that stream (toDF(), add_sink()); or read them as objects with add_sink(), print() or "
    "execute_and_collect()"
)


def pickled_elements_error(
    what: str, origin: str | None, fix: str | None = None
) -> PickledElementsError:
    """The error for ``what`` (``toDF()``, a sink...) over pickled elements produced by
    ``origin`` (an operator's name; None: unknown); ``fix``: what to do, when declaring an
    output type is not it."""
    producer = "the function that produces them" if origin is None else origin
    if fix is not None:
        return PickledElementsError(
            f"{what}: the elements of {producer} are Python objects Spark cannot read "
            f"(a DataFrame or a sink would hold pickle bytes): {fix}."
        )
    return PickledElementsError(
        f"{what}: the elements of {producer} are pickled Python objects (no output type was "
        "declared, as PyFlink's PICKLED_BYTE_ARRAY), which Spark cannot read: a DataFrame or "
        f"a sink would hold pickle bytes. Declare output_type= (or output_schema=) on "
        f"{producer}: PyFlink type information (Types.ROW_NAMED(['word', 'count'], "
        "[Types.STRING(), Types.LONG()]), Types.STRING()...), a DDL string ('word string, "
        "count long') or a StructType (for a side output: OutputTag(name, type_info)). "
        "execute_and_collect(), add_sink() and print() hand the objects back as emitted."
    )


class UserFunctionError(RuntimeError):
    """User code (window function, reduce/aggregate function, trigger, evictor, gap extractor)
    raised while the operator worked on ``key`` and ``window``. The user's exception, with its
    traceback, is ``__cause__`` (printed with this error)."""

    def __init__(self, message: str, key: Any = None, window: Any = None) -> None:
        super().__init__(message)
        self.key = key
        self.window = window

    def __reduce__(self) -> Any:
        return (type(self), (self.args[0], self.key, self.window))


#: Flink's ``WindowOperatorBuilder.trigger`` message, word for word.
MERGING_TRIGGER_MESSAGE = (
    "A merging window assigner cannot be used with a trigger that does not support merging."
    " To use it with session windows, give the trigger can_merge() returning True and"
    " on_merge(window, ctx), which re-registers the merged window's timers (see 'Triggers for"
    " merging windows' in docs/windows/triggers.md)."
)

#: flinkwin's own errors raised inside the operator: passed on as they are, never wrapped.
OPERATOR_ERRORS = (
    UserFunctionError, IllegalStateError, UnsupportedOperationError, NullKeyError, KeyTypeError
)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_function_error(exc: BaseException, key: Any, window: Any) -> UserFunctionError:
    """The error to raise (``from exc``) when user code failed on ``key`` and ``window``
    (None: before a window was known, e.g. while assigning windows). The message carries the
    user's own stack frames too: a Python worker's error reaches the Spark driver as text that
    shows only the last exception of a chain."""
    where = f"key {key!r}" + ("" if window is None else f", window {window!r}")
    frames = [
        frame for frame in traceback.extract_tb(exc.__traceback__)
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR)
    ]
    user_traceback = (
        "\nUser traceback (most recent call last):\n"
        + "".join(traceback.format_list(frames)).rstrip("\n") if frames else ""
    )
    return UserFunctionError(
        f"user function failed on {where}: {type(exc).__name__}: {exc}{user_traceback}",
        user_key(key),
        window,
    )


def raise_failure(exc: Exception, key: Any, window: Any) -> NoReturn:
    """Pass on ``exc``, raised by a call an operator made for ``key`` and ``window`` (None:
    before a window was known): a long overflow naming them, one of flinkwin's own errors as
    it is, anything else as :func:`user_function_error`. The operators' one way to do it, free
    until a call fails::

        except Exception as exc:
            raise_failure(exc, key, window)
    """
    if isinstance(exc, LongOverflowError):
        raise located(exc, key, window) from None
    if isinstance(exc, OPERATOR_ERRORS):
        raise exc
    raise user_function_error(exc, key, window) from exc
