"""Iceberg table of N data files (day(ts) partitioned) for benches/foreign_iceberg.rs.

    python benches/iceberg_table.py create <table dir> <files> [files per manifest]
    python benches/iceberg_table.py plan <table dir> <day yyyy-mm-dd> <repeats>

`create` writes N one-row Parquet files with pyarrow (5 files per day from
2020-01-01) and registers them with pyiceberg's add_files, one manifest per
batch; `plan` times pyiceberg's own `plan_files()` for a one-day filter
(best of `repeats`, seconds, printed as JSON). Uses pyiceberg 0.12
(tests/data/requirements-fixtures.txt).
"""

import json
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import StaticTable
from pyiceberg.transforms import DayTransform
from pyiceberg.types import DoubleType, LongType, NestedField, TimestampType

FILES_PER_DAY = 5


def create(table_dir, n, per_manifest):
    if os.path.exists(table_dir):
        shutil.rmtree(table_dir)
    os.makedirs(table_dir)
    catalog_dir = tempfile.mkdtemp()
    catalog = SqlCatalog("bench", uri=f"sqlite:///{catalog_dir}/c.db", warehouse=f"file://{table_dir}")
    catalog.create_namespace("b")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "ts", TimestampType(), required=False),
        NestedField(3, "v", DoubleType(), required=False),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"))
    table = catalog.create_table("b.t", schema=schema, partition_spec=spec, location=table_dir)
    start = datetime(2020, 1, 1)
    arrow_schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.float64())])
    paths = []
    for i in range(n):
        day = start + timedelta(days=i // FILES_PER_DAY)
        ts = day + timedelta(hours=(i % FILES_PER_DAY) * 4)
        d = f"{table_dir}/data/ts_day={day.date().isoformat()}"
        os.makedirs(d, exist_ok=True)
        path = f"{d}/f{i:06d}.parquet"
        pq.write_table(pa.table({"id": [i], "ts": [ts], "v": [i * 0.5]}, schema=arrow_schema), path)
        paths.append(path)
    for k in range(0, n, per_manifest):
        table.add_files(paths[k : k + per_manifest])
    shutil.rmtree(catalog_dir)


def latest_metadata(table_dir):
    names = [n for n in os.listdir(f"{table_dir}/metadata") if n.endswith(".metadata.json")]
    return f"{table_dir}/metadata/" + max(names, key=lambda n: int(n.split("-")[0].lstrip("v").split(".")[0]))


def plan(table_dir, day, repeats):
    start = datetime.fromisoformat(day)
    expr = And(
        GreaterThanOrEqual("ts", start.isoformat()),
        LessThan("ts", (start + timedelta(days=1)).isoformat()),
    )
    best = None
    files = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        table = StaticTable.from_metadata(latest_metadata(table_dir))
        tasks = list(table.scan(row_filter=expr).plan_files())
        elapsed = time.perf_counter() - t0
        files = len(tasks)
        best = elapsed if best is None else min(best, elapsed)
    print(json.dumps({"seconds": best, "files": files}))


if __name__ == "__main__":
    if sys.argv[1] == "create":
        create(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 500)
    else:
        plan(sys.argv[2], sys.argv[3], int(sys.argv[4]))
