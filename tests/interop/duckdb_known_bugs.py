#!/usr/bin/env python3
"""DuckDB 1.4.4's wrong answers, shown on tables whose metadata pyiceberg wrote.

tests/iceberg_interop.rs compares DuckDB's filtered reads of our tables with ours; where DuckDB
answers wrongly it must be DuckDB's doing, not our metadata's.  Each case here writes the same
kind of rows with pyiceberg (its own writer, its own metadata), reads them with pyiceberg
(`scan(row_filter)`, the truth, checked against the rows written) and with DuckDB's
`iceberg_scan … WHERE …`, and reports both:

    duckdb_known_bugs.py DIR

prints {"<case>": {"truth": n, "expected": n, "duckdb": n | "error: …", "where": "…"}}.

| case                   | table (pyiceberg)                               | DuckDB's mistake                  |
|------------------------|-------------------------------------------------|-----------------------------------|
| pre_1970_month         | month(ts), rows around 1970-01-01               | the month of a time before 1970   |
|                        |                                                 | rounded toward zero: the files of |
|                        |                                                 | December 1969 skipped             |
| coalesce_over_bounds   | (flag, hour(ts)), region a data column          | a function evaluated on the       |
| length_over_bounds     |                                                 | bounds as if monotonic, NULLs     |
|                        |                                                 | ignored: files skipped, or an     |
|                        |                                                 | INTERNAL error                    |
| is_null_with_deletes,  | position deletes written through pyiceberg's    | delete files skipped by their own |
| is_not_null_with_…     | manifest writer (Java's metrics)                | stats for IS [NOT] NULL: deleted  |
|                        |                                                 | rows come back                    |
| added_column_is_null   | a column added after the first append           | older files skipped for IS NULL   |
| manifest_over_2048_... | one append of 2,100 files, partitioned by       | a NULL partition value carried to |
|                        | (flag, id), flag NULL on every other row        | the entry 2048 rows later: files  |
|                        |                                                 | of flag = true skipped            |

The last is why our manifests hold at most 2048 entries (`manifest::io::MAX_MANIFEST_ENTRIES`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PYICEBERG_MAX_WORKERS", "1")

from iceberg_read import new_duckdb_connection  # noqa: E402


def catalog(root: str):
    from pyiceberg.catalog.sql import SqlCatalog

    os.makedirs(root, exist_ok=True)
    cat = SqlCatalog("known_bugs", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    cat.create_namespace_if_not_exists("b")
    return cat


def answer(table, row_filter: str, where: str, expected: int) -> dict:
    truth = table.scan(row_filter=row_filter).to_arrow().num_rows
    try:
        con = new_duckdb_connection()
        duckdb = con.execute(f"SELECT count(*) FROM iceberg_scan('{table.metadata_location}') WHERE {where}").fetchone()[0]
    except Exception as e:  # noqa: BLE001 - an engine error is an answer here
        duckdb = f"error: {type(e).__name__}: {str(e).splitlines()[0]}"
    return {"truth": truth, "expected": expected, "duckdb": duckdb, "where": where}


def times(n: int) -> list[dt.datetime]:
    """n times, 7 hours apart, from 40 days before 1970."""
    start = dt.datetime(1970, 1, 1) - dt.timedelta(days=40)
    return [start + dt.timedelta(hours=7 * i) for i in range(n)]


def pre_1970(cat, transform) -> tuple:
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, TimestampType

    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "ts", TimestampType()))
    name = f"b.pre_1970_{transform.__class__.__name__.lower()}"
    spec = PartitionSpec(PartitionField(2, 1000, transform, "ts_part"))
    table = cat.create_table(name, schema=schema, partition_spec=spec)
    ts = times(300)
    table.append(pa.table({"id": pa.array(range(300), pa.int64()), "ts": pa.array(ts, pa.timestamp("us"))}))
    lo, hi = dt.datetime(1969, 12, 25), dt.datetime(1970, 1, 2)
    expected = sum(1 for t in ts if lo <= t < hi)
    return cat.load_table(name), expected


def regions(n: int) -> list:
    return [[None, "München", "EU", ""][i % 4] for i in range(n)]


def with_region(cat) -> tuple:
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import HourTransform, IdentityTransform
    from pyiceberg.types import BooleanType, LongType, NestedField, StringType, TimestampType

    schema = Schema(
        NestedField(1, "id", LongType()),
        NestedField(2, "ts", TimestampType()),
        NestedField(3, "flag", BooleanType()),
        NestedField(4, "region", StringType()),
    )
    spec = PartitionSpec(
        PartitionField(3, 1000, IdentityTransform(), "flag"),
        PartitionField(2, 1001, HourTransform(), "ts_hour"),
    )
    table = cat.create_table("b.regions", schema=schema, partition_spec=spec)
    n = 2000
    base = dt.datetime(2024, 1, 1)
    table.append(pa.table({
        "id": pa.array(range(n), pa.int64()),
        "ts": pa.array([base + dt.timedelta(minutes=13 * i) for i in range(n)], pa.timestamp("us")),
        "flag": pa.array([i % 3 == 0 for i in range(n)]),
        "region": pa.array(regions(n), pa.string()),
    }))
    return cat.load_table("b.regions"), regions(n)


def with_position_deletes(cat):
    """Ten rows in one file: the four with a NULL region and two with 'EU' (ids 1, 2) deleted
    by a position delete file, so none with a NULL region and four with one are left."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyiceberg.schema import Schema
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, NestedField, StringType

    from pyiceberg_deletes import commit_row_delta, local_path, write_position_delete_file

    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))
    table = cat.create_table("b.deletes", schema=schema, properties={"write.delete.mode": "merge-on-read"})
    region = [None if i % 3 == 0 else "EU" for i in range(10)]
    table.append(pa.table({"id": pa.array(range(10), pa.int64()), "region": pa.array(region, pa.string())}))
    data = next(iter(table.scan().plan_files())).file.file_path
    ids = pq.read_table(local_path(data), columns=["id"]).column("id").to_pylist()
    deleted = [ids.index(i) for i in range(10) if region[i] is None or i in (1, 2)]
    delete_file = write_position_delete_file(
        f"{table.location()}/data/deletes-0.parquet", [(data, p) for p in deleted], Record()
    )
    commit_row_delta(table, Operation.DELETE, delete_files=[delete_file])
    return cat.load_table("b.deletes")


def with_added_column(cat) -> tuple:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    schema = Schema(NestedField(1, "id", LongType()))
    table = cat.create_table("b.added", schema=schema)
    table.append(pa.table({"id": pa.array(range(5), pa.int64())}))
    with table.update_schema() as update:
        update.add_column("note", StringType())
    table = cat.load_table("b.added")
    table.append(pa.table({"id": pa.array(range(5, 8), pa.int64()), "note": pa.array(["a", None, "b"], pa.string())}))
    return cat.load_table("b.added"), 6


def with_many_files(cat):
    """2,100 files in one manifest: one per (flag, id), flag NULL for even ids."""
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import BooleanType, LongType, NestedField

    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "flag", BooleanType()))
    spec = PartitionSpec(
        PartitionField(2, 1000, IdentityTransform(), "flag"),
        PartitionField(1, 1001, IdentityTransform(), "id"),
    )
    table = cat.create_table("b.many", schema=schema, partition_spec=spec)
    ids = list(range(1, 2101))
    table.append(pa.table({
        "id": pa.array(ids, pa.int64()),
        "flag": pa.array([None if i % 2 == 0 else True for i in ids], pa.bool_()),
    }))
    return cat.load_table("b.many"), len(ids) // 2


def main() -> int:
    from pyiceberg.transforms import MonthTransform

    root = os.path.abspath(sys.argv[1])
    cat = catalog(root)
    out = {}
    window = ("ts >= '1969-12-25T00:00:00' AND ts < '1970-01-02T00:00:00'",
              "ts >= TIMESTAMP '1969-12-25 00:00:00' AND ts < TIMESTAMP '1970-01-02 00:00:00'")
    table, expected = pre_1970(cat, MonthTransform())
    out["pre_1970_month"] = answer(table, *window, expected)
    table, region = with_region(cat)
    none = sum(1 for r in region if r is None)
    out["coalesce_over_bounds"] = answer(table, "region IS NULL", "coalesce(region, 'none') = 'none'", none)
    longer = sum(1 for r in region if r is not None and len(r) > 5)
    out["length_over_bounds"] = answer(table, "region = 'München'", "length(region) > 5", longer)
    table = with_position_deletes(cat)
    out["is_null_with_deletes"] = answer(table, "region IS NULL", "region IS NULL", 0)
    out["is_not_null_with_deletes"] = answer(table, "region IS NOT NULL", "region IS NOT NULL", 4)
    table, expected = with_added_column(cat)
    out["added_column_is_null"] = answer(table, "note IS NULL", "note IS NULL", expected)
    table, expected = with_many_files(cat)
    out["manifest_over_2048_entries"] = answer(table, "flag = true", "flag = true", expected)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
