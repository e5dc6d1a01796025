"""Delta table of N data files (partitioned by a date `d` and a key `k`, one row per file) for benches/foreign_delta.rs.

    python benches/delta_table.py create <table dir> <files>
    python benches/delta_table.py plan <table dir> <day yyyy-mm-dd> <repeats>

`create` writes N one-row files with deltalake (5 files per day from
2020-01-01, `k` = 0…4, 100 files per commit), a checkpoint after the last of those
commits, then three one-file commits after it (so reading the table replays
a checkpoint and JSON commits, as a table in use does); `plan` times
deltalake's own `DeltaTable(dir).file_uris(file_pruning_predicate="d = DATE '<day>'")`,
opening the table each time (best of `repeats`, seconds, printed as JSON).
"""

import json
import os
import shutil
import sys
import time
from datetime import date, timedelta

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

FILES_PER_DAY = 5
PER_COMMIT = 100
AFTER_CHECKPOINT = 3


def rows(start, count):
    ids = list(range(start, start + count))
    days = [date(2020, 1, 1) + timedelta(days=i // FILES_PER_DAY) for i in ids]
    keys = [i % FILES_PER_DAY for i in ids]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "d": pa.array(days, pa.date32()),
            "k": pa.array(keys, pa.int32()),
            "v": pa.array([float(i) for i in ids]),
        }
    )


def create(table_dir, n):
    if os.path.exists(table_dir):
        shutil.rmtree(table_dir)
    main = n - AFTER_CHECKPOINT
    written = 0
    while written < main:
        count = min(PER_COMMIT, main - written)
        batch = rows(written, count)
        write_deltalake(table_dir, batch, partition_by=["d", "k"], mode="append")
        written += count
    DeltaTable(table_dir).create_checkpoint()
    for i in range(AFTER_CHECKPOINT):
        write_deltalake(table_dir, rows(main + i, 1), partition_by=["d", "k"], mode="append")
    table = DeltaTable(table_dir)
    print(json.dumps({"version": table.version(), "files": len(table.file_uris())}))


def plan(table_dir, day, repeats):
    best = None
    files = None
    for _ in range(repeats):
        t = time.perf_counter()
        table = DeltaTable(table_dir)
        files = table.file_uris(file_pruning_predicate=f"d = DATE '{day}'")
        elapsed = time.perf_counter() - t
        best = elapsed if best is None else min(best, elapsed)
    print(json.dumps({"seconds": best, "files": len(files)}))


if __name__ == "__main__":
    if sys.argv[1] == "create":
        create(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "plan":
        plan(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
