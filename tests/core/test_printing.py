"""``print()`` writes each element as PyFlink does, per declared type: Java's ``toString`` of
the Java value Flink holds (maps in ``java.util.HashMap`` order, ``Float``/``Double.toString``,
``java.sql.Time``, ``Instant``, signed ``byte[]``), PyFlink's own ``+I[a,1]`` for a Row-typed
stream and Python's ``str`` for pickled values. The Java expectations below were printed by
OpenJDK 17 (``new HashMap<>(size)`` filled in order, as Flink's ``MapSerializer`` does)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from flinkwin import Row, Types
from flinkwin.spark.nested import value_converter
from flinkwin.spark.printing import java_double, java_float, java_string, printer
from flinkwin.spark.row_encoder import RowEncoder, SchemaMismatchError
from flinkwin.spark.schema import VALUE_METADATA


def _map(keys: list, key_type: object) -> str:
    return java_string({k: i for i, k in enumerate(keys)}, Types.MAP(key_type, Types.INT()))


@pytest.mark.parametrize(
    ("keys", "key_type", "java"),
    [
        (["banana", "apple", "cherry", "hello", "world", "x", "yy", "Zebra", "été"],
         Types.STRING(),
         "{banana=0, yy=6, apple=1, cherry=2, world=4, Zebra=7, x=5, hello=3, été=8}"),
        # nine keys in one bucket: the bin is "treeified", which resizes a small table
        ([0, 16, 32, 48, 64, 80, 96, 112, 128], Types.INT(),
         "{0=0, 32=2, 64=4, 96=6, 128=8, 16=1, 48=3, 80=5, 112=7}"),
        ([-1, 5, 1000000, -70000, 17], Types.INT(), "{-1=0, 17=4, 5=1, -70000=3, 1000000=2}"),
        ([-1, 5, 10000000000, -70000, 17], Types.LONG(),
         "{-1=0, 10000000000=2, 17=4, 5=1, -70000=3}"),
        ([1.5, -0.0, 2.0, 1e300], Types.DOUBLE(), "{1.5=0, -0.0=1, 2.0=2, 1.0E300=3}"),
        ([1.5, 2.25, 3.0], Types.FLOAT(), "{1.5=0, 2.25=1, 3.0=2}"),
        ([True, False], Types.BOOLEAN(), "{false=1, true=0}"),
    ],
    ids=["strings", "colliding-ints", "ints", "longs", "doubles", "floats", "booleans"],
)
def test_maps_print_in_java_hash_map_order(keys: list, key_type: object, java: str) -> None:
    assert _map(keys, key_type) == java


def test_a_map_that_grows_its_table_prints_in_java_order() -> None:
    keys = [f"k{j * 7}" for j in range(40)]
    assert _map(keys, Types.STRING()) == (
        "{k91=13, k70=10, k77=11, k98=14, k35=5, k56=8, k14=2, k161=23, k182=26, k140=20, "
        "k189=27, k266=38, k147=21, k224=32, k168=24, k245=35, k105=15, k126=18, k203=29, "
        "k0=0, k84=12, k42=6, k63=9, k21=3, k7=1, k28=4, k49=7, k196=28, k273=39, k154=22, "
        "k231=33, k175=25, k252=36, k112=16, k133=19, k210=30, k259=37, k217=31, k238=34, "
        "k119=17}"
    )


def test_floating_point_prints_as_java() -> None:
    assert [java_float(v) for v in (0.1, 1e10, 3.4028235e38, 1e-5, 123456.7)] == [
        "0.1", "1.0E10", "3.4028235E38", "1.0E-5", "123456.7"
    ]
    assert [java_double(v) for v in (1e7, 0.001, 1e-4, 123.0, -2e20)] == [
        "1.0E7", "0.001", "1.0E-4", "123.0", "-2.0E20"
    ]
    # a FLOAT value reaches Python as the float32's exact double, Java prints the float32
    assert java_string(0.10000000149011612, Types.FLOAT()) == "0.1"
    assert java_string(0.10000000149011612, Types.DOUBLE()) == "0.10000000149011612"


def test_float_columns_of_an_undeclared_stream_print_as_java_floats() -> None:
    # a DataFrame's own rows print as Java's Row.toString: a float column is a Java Float
    # there (RideCleansing's coordinates: -73.9947f prints -73.9947, not the float32's double)
    schema = StructType([
        StructField("id", LongType()), StructField("lon", FloatType()),
        StructField("d", DoubleType()),
        StructField("s", StructType([StructField("x", FloatType())])),
        StructField("a", ArrayType(FloatType())),
        StructField("m", MapType(StringType(), FloatType())),
    ])
    lon, lat, tenth = -73.99469757080078, 40.75062561035156, 0.10000000149011612
    row = Row(id=3, lon=lon, d=0.1, s=Row(x=lat), a=[tenth], m={"k": tenth})
    assert printer(None, False, schema)(row) == (
        "+I[3, -73.9947, 0.1, +I[40.750626], [0.1], {k=0.1}]"
    )
    without_floats = StructType([StructField("id", LongType()), StructField("d", DoubleType())])
    assert printer(None, False, without_floats)(Row(id=1, d=0.1)) == "+I[1, 0.1]"


def test_times_and_bytes_print_as_java() -> None:
    assert java_string(datetime.time(10, 0, 0, 500000), Types.SQL_TIME()) == "10:00:00"
    assert java_string(datetime.datetime(2024, 1, 1, 10), Types.SQL_TIMESTAMP()) == (
        "2024-01-01 10:00:00.0"
    )
    utc = datetime.timezone.utc
    assert [
        java_string(datetime.datetime(2023, 11, 14, 22, 13, 20, micros, tzinfo=utc),
                    Types.INSTANT())
        for micros in (500000, 0, 123)
    ] == ["2023-11-14T22:13:20.500Z", "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.000123Z"]
    assert java_string(b"\x01\xff\x7f\x80", Types.PRIMITIVE_ARRAY(Types.BYTE())) == (
        "[1, -1, 127, -128]"
    )


def test_nested_values_print_as_java_to_string() -> None:
    info = Types.TUPLE([
        Types.STRING(), Types.ROW([Types.INT(), Types.DOUBLE()]),
        Types.MAP(Types.STRING(), Types.LIST(Types.LONG())), Types.BOOLEAN(),
    ])
    value = ("a", Row.of(["f0", "f1"], [1, 1e7]), {"b": [1, 2], "a": []}, None)
    assert java_string(value, info) == "(a,+I[1, 1.0E7],{a=[], b=[1, 2]},null)"
    assert printer(info, False)(value) == "(a,+I[1, 1.0E7],{a=[], b=[1, 2]},null)"
    assert printer(Types.LIST(Types.STRING()), False)(["x", None]) == "[x, null]"
    assert printer(Types.BIG_DEC(), False)(decimal.Decimal("1.50")) == "1.50"


def test_row_typed_streams_print_as_pyflink_formats_rows() -> None:
    """PyFlink's ``_align_output_type`` maps a Row-typed stream to
    ``'{}[{}]'.format(row.get_row_kind(), ','.join(str(v) for v in row))`` before printing."""
    row_printer = printer(Types.ROW([Types.STRING(), Types.DOUBLE(), Types.ROW([Types.INT()])]),
                          False)
    assert row_printer(Row.of(["f0", "f1", "f2"], ["a", 1e7, Row.of(["f0"], [3])])) == (
        "+I[a,10000000.0,Row(f0=3)]"
    )
    named = printer(Types.ROW_NAMED(["m", "n"], [Types.MAP(Types.STRING(), Types.INT()),
                                                 Types.BOOLEAN()]), False)
    assert named(Row.of(["m", "n"], [{"x": 1}, None])) == "+I[{'x': 1},None]"


@dataclasses.dataclass
class Count:
    word: str
    n: int


def test_pickled_values_print_as_python_str() -> None:
    show = printer(None, True)
    assert [show(v) for v in (Count("a", 2), "text", {1, 2}, ("a", [1]))] == [
        "Count(word='a', n=2)", "text", "{1, 2}", "('a', [1])"
    ]
    assert printer(Types.PICKLED_BYTE_ARRAY(), False)(Count("b", 1)) == "Count(word='b', n=1)"


def test_whole_value_outputs_are_the_returned_value() -> None:
    """Under ``Types.MAP`` a returned dict is the map itself, not a record matched by field
    names (which failed with "missing field(s) ['value']")."""
    schema = StructType([
        StructField("value", MapType(StringType(), IntegerType()), True, dict(VALUE_METADATA))
    ])
    encoder = RowEncoder(schema, "UTC", "process output")
    (array,) = encoder.arrays([{"hello": 2}, {}, None])
    assert array.to_pylist() == [[("hello", 2)], [], None]
    strings = StructType([StructField("value", StringType(), True, dict(VALUE_METADATA))])
    (words,) = RowEncoder(strings, "UTC", "map output").arrays(["a", "b"])
    assert words.to_pylist() == ["a", "b"]
    with pytest.raises(SchemaMismatchError, match="declared string"):
        RowEncoder(strings, "UTC", "map output").arrays([("a",)])
    assert pa.types.is_map(array.type)


def test_typed_values_take_pyflink_python_types() -> None:
    from pyspark.sql.types import ArrayType, BinaryType, ByteType, DecimalType

    assert value_converter(DecimalType(38, 0), Types.BIG_INT())(decimal.Decimal(12)) == 12
    assert type(value_converter(DecimalType(38, 0), Types.BIG_INT())(decimal.Decimal(12))) is int
    assert value_converter(BinaryType(), None)(bytearray(b"ab")) == b"ab"
    signed = value_converter(ArrayType(ByteType()), Types.PRIMITIVE_ARRAY(Types.BYTE()))
    assert signed([1, -1]) == b"\x01\xff"
    nested = value_converter(MapType(StringType(), ArrayType(DecimalType(38, 0))),
                             Types.MAP(Types.STRING(), Types.LIST(Types.BIG_INT())))
    assert nested([("a", [decimal.Decimal(1), None])]) == {"a": [1, None]}


def test_one_field_outputs_encode_as_through_their_rows() -> None:
    """The one-field schemas' shortcut (plain scalars, whole values) gives the arrays, and the
    errors, that going through ``to_row`` for each value gives."""
    from pyspark.sql.types import BooleanType, DoubleType, LongType

    def through_rows(encoder: RowEncoder, values: list) -> object:
        try:
            rows = [encoder.to_row(v) for v in values]
            return encoder._array(0, [r[0] for r in rows], rows).to_pylist()
        except SchemaMismatchError as exc:
            return str(exc)

    def encoded(encoder: RowEncoder, values: list) -> object:
        try:
            (array,) = encoder.arrays(values)
            return array.to_pylist()
        except SchemaMismatchError as exc:
            return str(exc)

    cases = {
        LongType(): [[1, -2, None, True], [3, 2**63], [1, 2.0], [1, 2.5], [1, "x"], [], [(4,)],
                     [{"total": 5}], [float("nan")]],
        DoubleType(): [[1.5, float("nan"), None, 2], [1.0, "y"]],
        StringType(): [["a", None, "é"], ["a", 1]],
        BooleanType(): [[True, False, None], [True, 2]],
    }
    for dtype, value_lists in cases.items():
        for metadata in ({}, dict(VALUE_METADATA)):
            schema = StructType([StructField("total", dtype, True, metadata)])
            encoder = RowEncoder(schema, "UTC", "reduce output")
            for values in value_lists:
                assert repr(encoded(encoder, values)) == repr(through_rows(encoder, values))
