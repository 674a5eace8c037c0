"""Probe (issue 32): what a stage's output rows cost in the Python worker after flinkwin has
built them, per row, on the two ways out of ``applyInPandasWithState``.

* ``frames``: the stage's rows as pandas frames (what a call returns unpacked), through a
  replay of PySpark 4.3's own output path (``pyspark/worker.py``, ``construct_record_batch``
  and its flush every ``maxRecordsPerBatch`` rows): the count frame, the state frame padded
  with one all-null row per output row, both concatenated with pandas, then
  ``PandasToArrowConversion``. Timed in parts.
* ``packed``: the same rows as one Arrow IPC stream per call (``flinkwin.spark.outputs``:
  ``_packed``), a one-row frame through the same replay, then ``unpack`` (the ``mapInArrow``
  after the stage) reading the record batches back.

The rows have the shape of the suite's early-firing workload (a tag, a string key, a long, a
timestamp, the result timestamp, nine nullable metric columns): ``--calls`` calls of
``--rows`` rows, as 16 key groups over 10 micro-batches emit ~1M results.

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_32_output_path.py --rows 6000 --calls 160
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql.conversion import PandasToArrowConversion
from pyspark.sql.types import (
    BinaryType,
    ByteType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from flinkwin.spark.outputs import METRIC_COLUMNS, PACKED_COLUMN, _packed, unpack

COUNT = StructType([StructField("dataCount", IntegerType()),
                    StructField("stateCount", IntegerType())])
STATE = StructType([StructField("properties", StringType()),
                    StructField("keyRowAsUnsafe", BinaryType()),
                    StructField("object", BinaryType()),
                    StructField("oldTimeoutTimestamp", LongType())])
NAMES = ["_fw_tag", "_fw_m0", "_fw_m1", "_fw_m2", "_fw_rts", *METRIC_COLUMNS]
TYPES = {"_fw_tag": ByteType(), "_fw_m0": StringType(), "_fw_m2": TimestampType()}
OUTPUT = StructType([StructField(n, TYPES.get(n, LongType())) for n in NAMES])
PACKED = StructType([StructField(PACKED_COLUMN, BinaryType())])


def table(rows: int, seed: int) -> pa.Table:
    """One call's rows as Arrow: results, then the metrics row."""
    rng = np.random.default_rng(seed)
    n = rows + 1
    absent = np.ones(n, dtype=bool)
    absent[-1] = False
    result = np.zeros(n, dtype=bool)
    result[:-1] = True
    arrays = [
        pa.array(np.where(result, 0, -1).astype(np.int8)),
        pa.array([f"user_{i:05d}" for i in rng.integers(0, 10_000, rows)] + [None]),
        pa.array(rng.integers(0, 10_000, n), mask=~result),
        pa.array(rng.integers(1_704_067_200_000_000, 1_704_070_800_000_000, n),
                 mask=~result).cast(pa.timestamp("us", tz="UTC")),
        pa.array(np.full(n, 1_704_070_799_999), mask=~result),
        *[pa.array(np.zeros(n, dtype=np.int64), mask=absent) for _ in METRIC_COLUMNS],
    ]
    return pa.Table.from_arrays(arrays, names=NAMES)


def frame(t: pa.Table) -> pd.DataFrame:
    return t.to_pandas(types_mapper={pa.int8(): pd.Int8Dtype(),
                                     pa.int64(): pd.Int64Dtype()}.get)


def state_pdf() -> pd.DataFrame:
    return pd.DataFrame.from_dict({"properties": ['{"timeout":0}'],
                                   "keyRowAsUnsafe": [b"k" * 16], "object": [b"o" * 200],
                                   "oldTimeoutTimestamp": [-1]})


def replay(outputs: list[pd.DataFrame], schema: StructType, limit: int,
           parts: dict[str, float]) -> list[pa.RecordBatch]:
    """PySpark 4.3's flush loop and ``construct_record_batch``, timed in parts."""
    batches = []

    def flush(pdfs: list[Any], n: int, states: list[Any], sn: int) -> None:
        m = max(1, max(n, sn))
        t0 = time.perf_counter()
        count = pd.DataFrame.from_dict({"dataCount": [n] * m, "stateCount": [sn] * m})
        t1 = time.perf_counter()
        pdfs.append(pd.DataFrame(dict.fromkeys(schema.names), index=list(range(m - n))))
        states.append(pd.DataFrame(columns=list(STATE.names), index=list(range(m - sn))))
        data = pd.concat(pdfs, ignore_index=True)
        t2 = time.perf_counter()
        state = pd.concat(states, ignore_index=True)
        t3 = time.perf_counter()
        batches.append(PandasToArrowConversion.convert(
            [count, data, state],
            StructType([StructField("_0", COUNT), StructField("_1", schema),
                        StructField("_2", STATE)]),
            timezone="UTC", safecheck=False, arrow_cast=True, assign_cols_by_name=True,
            int_to_decimal_coercion_enabled=False))
        t4 = time.perf_counter()
        for k, v in (("count frame", t1 - t0), ("data concat", t2 - t1),
                     ("state frame padded and concatenated", t3 - t2),
                     ("to Arrow", t4 - t3)):
            parts[k] = parts.get(k, 0.0) + v

    pdfs: list[Any] = []
    states: list[Any] = []
    n = sn = 0
    for out in outputs:
        n += len(out)
        pdfs.append(out)
        if n > limit:
            flush(pdfs, n, states, sn)
            pdfs, states, n, sn = [], [], 0, 0
        states.append(state_pdf())
        sn += 1
    if n or sn:
        flush(pdfs, n, states, sn)
    return batches


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=6000)
    parser.add_argument("--calls", type=int, default=160)
    parser.add_argument("--limit", type=int, default=10_000, help="maxRecordsPerBatch")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)
    tables = [table(args.rows, i) for i in range(args.calls)]
    rows = sum(t.num_rows for t in tables)
    for r in range(args.repeat):
        frames = [frame(t) for t in tables]
        parts: dict[str, float] = {}
        t0 = time.perf_counter()
        replay(frames, OUTPUT, args.limit, parts)
        plain = time.perf_counter() - t0
        t0 = time.perf_counter()
        packed = [_packed(t) for t in tables]
        t1 = time.perf_counter()
        out = replay(packed, PACKED, args.limit, {})
        t2 = time.perf_counter()
        back = sum(b.num_rows for b in unpack(
            pa.record_batch([pa.array([blob], pa.binary())], names=[PACKED_COLUMN])
            for o in out for blob in o.column(1).field(0).to_pylist() if blob is not None))
        t3 = time.perf_counter()
        assert back == rows
        print(f"round {r + 1}: {rows:,} rows in {args.calls} calls")
        print(f"  frames: {plain:.3f} s = {plain / rows * 1e9:,.0f} ns/row  "
              + "  ".join(f"{k} {v / rows * 1e9:,.0f}" for k, v in parts.items()))
        total = t3 - t0
        print(f"  packed: {total:.3f} s = {total / rows * 1e9:,.0f} ns/row  "
              f"(IPC write {(t1 - t0) / rows * 1e9:,.0f}, PySpark's path "
              f"{(t2 - t1) / rows * 1e9:,.0f}, unpack {(t3 - t2) / rows * 1e9:,.0f})")


if __name__ == "__main__":
    main()
