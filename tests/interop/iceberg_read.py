#!/usr/bin/env python3
"""Read an Iceberg table with engines nobody here wrote: pyiceberg and DuckDB.

tests/iceberg_interop.rs uses this to prove that our tables are Iceberg tables: it runs our
CLI, then reads the same table here and compares the rows (and pyiceberg's planned files) with
our own answers.  Both engines are installed from the package registry (.ci/requirements-iceberg.txt);
DuckDB's extensions are loaded from the duckdb_ext packages, never downloaded.

One read:

    iceberg_read.py --engine pyiceberg|duckdb --metadata <metadata.json | table dir | s3://…>
                    [--filter <pyiceberg row_filter>] [--sql-where <DuckDB WHERE clause>]
                    [--snapshot-id N] [--plan-files]

prints {"rows": [...], "files": [...]} ("files" with --plan-files, pyiceberg only) and exits 1
with the engine's error on stderr when the table cannot be read.

Several reads in one process (python and DuckDB start once):

    iceberg_read.py --batch reads.json

where reads.json is a JSON list of {"engine", "metadata", "filter"?, "sql_where"?,
"snapshot_id"?, "plan_files"?}, or of {"sql", "tables"} (a DuckDB query over several tables,
"tables" mapping each name in the query to its metadata), or of {"script": [statements]} (DuckDB
as a reference engine: the statements run in order on a fresh in-memory database, and the result
is {"results": [...]} with one {"rows"} or {"error"} per statement); prints a JSON list with one
result per read, in order: the object above, or {"error": "<message>"}.  Exit 0 unless the batch
file itself is bad.

A table directory is resolved through metadata/version-hint.text by both engines.

Values are rendered from their Arrow type, the same way on both engines (and by the Rust test
for our own results), so rows compare as JSON:
  bool, ints                 JSON booleans / integers
  float (32 bit)             the shortest decimal that round-trips as float32, as a JSON number
  double                     JSON number; NaN / Infinity / -Infinity as strings
  decimal                    exact string with the scale's digits ("10.50")
  date                       "2024-01-01"
  time                       "10:00:00.123456000" (always 9 fractional digits)
  timestamp                  "2024-01-01T10:00:00.000001000"; with a zone, + "+00:00" (UTC)
  string                     string
  binary, fixed              lower-case hex
  struct                     object by field name; list: array; map: array of [key, value]
Rows are sorted by their JSON text.  S3: HP_S3_ENDPOINT (http://host:port), AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION (defaults: the test server's keys, us-east-1).
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import math
import os
import struct
import sys
from typing import Any
from urllib.parse import urlparse

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)


# --- rendering -------------------------------------------------------------------------------


def _nanos_per_unit(unit: str) -> int:
    return {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}[unit]


def _render_timestamp(value: int, unit: str, with_zone: bool) -> str:
    nanos = value * _nanos_per_unit(unit)
    seconds, frac = divmod(nanos, 1_000_000_000)
    text = (EPOCH + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:09d}"
    return text + "+00:00" if with_zone else text


def _render_time(value: int, unit: str) -> str:
    nanos = value * _nanos_per_unit(unit)
    seconds, frac = divmod(nanos, 1_000_000_000)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h:02d}:{m:02d}:{s:02d}.{frac:09d}"


def _render_float(value: float | None, single: bool) -> Any:
    if value is None:
        return None
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if single:
        exact = struct.unpack("<f", struct.pack("<f", value))[0]
        for digits in range(1, 10):
            shortest = float(f"{exact:.{digits}g}")
            if struct.unpack("<f", struct.pack("<f", shortest))[0] == exact:
                return shortest
    return value


def render_array(arr) -> list:
    """The values of one Arrow array (not chunked), rendered as documented above."""
    import pyarrow as pa
    import pyarrow.types as t

    ty = arr.type
    valid = arr.is_valid().to_pylist() if arr.null_count else None

    def masked(values: list) -> list:
        if valid is None:
            return values
        return [v if ok else None for v, ok in zip(values, valid)]

    if t.is_dictionary(ty):
        return render_array(arr.dictionary_decode())
    if t.is_null(ty):
        return [None] * len(arr)
    if t.is_timestamp(ty):
        ints = arr.cast(pa.int64()).to_pylist()
        zone = ty.tz is not None
        return [None if v is None else _render_timestamp(v, ty.unit, zone) for v in ints]
    if t.is_time(ty):
        ints = arr.cast(pa.int64() if t.is_time64(ty) else pa.int32()).to_pylist()
        return [None if v is None else _render_time(v, ty.unit) for v in ints]
    if t.is_date32(ty):
        ints = arr.cast(pa.int32()).to_pylist()
        return [None if v is None else (EPOCH_DATE + dt.timedelta(days=v)).isoformat() for v in ints]
    if t.is_date64(ty):
        ints = arr.cast(pa.int64()).to_pylist()
        return [None if v is None else (EPOCH_DATE + dt.timedelta(milliseconds=v)).isoformat() for v in ints]
    if t.is_decimal(ty):
        return [None if v is None else format(v, "f") for v in arr.to_pylist()]
    if t.is_floating(ty):
        single = not t.is_float64(ty)
        return [_render_float(v, single) for v in arr.to_pylist()]
    if t.is_binary(ty) or t.is_large_binary(ty) or t.is_fixed_size_binary(ty) or t.is_binary_view(ty):
        return [None if v is None else v.hex() for v in arr.to_pylist()]
    if t.is_struct(ty):
        names = [ty.field(i).name for i in range(ty.num_fields)]
        children = [render_array(arr.field(i)) for i in range(ty.num_fields)]
        rows = [dict(zip(names, values)) for values in zip(*children)] if names else [{}] * len(arr)
        return masked(rows)
    if t.is_map(ty):
        entries = render_array(arr.values)
        offsets = arr.offsets.to_pylist()
        key, item = ty.key_field.name, ty.item_field.name
        rows = [[[e[key], e[item]] for e in entries[offsets[i] : offsets[i + 1]]] for i in range(len(arr))]
        return masked(rows)
    if t.is_list(ty) or t.is_large_list(ty):
        values = render_array(arr.values)
        offsets = arr.offsets.to_pylist()
        return masked([values[offsets[i] : offsets[i + 1]] for i in range(len(arr))])
    if t.is_fixed_size_list(ty):
        values = render_array(arr.values)
        n = ty.list_size
        start = arr.offset * n
        return masked([values[start + i * n : start + (i + 1) * n] for i in range(len(arr))])
    # booleans, integers, strings (incl. large and view)
    return arr.to_pylist()


def render_table(table) -> list[dict]:
    table = table.combine_chunks()
    names = table.column_names
    columns = []
    for column in table.columns:
        chunk = column.chunks[0] if column.num_chunks == 1 else None
        columns.append(render_array(chunk) if chunk is not None else [])
    if not names:
        return [{} for _ in range(table.num_rows)]
    rows = [dict(zip(names, values)) for values in zip(*columns)]
    rows.sort(key=lambda r: json.dumps(r, sort_keys=True, ensure_ascii=False))
    return rows


# --- S3 ----------------------------------------------------------------------------------------


def s3_settings() -> dict:
    endpoint = os.environ.get("HP_S3_ENDPOINT") or os.environ.get("AWS_ENDPOINT") or ""
    return {
        "endpoint": endpoint,
        "key": os.environ.get("AWS_ACCESS_KEY_ID", "hp-test-key"),
        "secret": os.environ.get("AWS_SECRET_ACCESS_KEY", "hp-test-secret"),
        "region": os.environ.get("AWS_REGION", "us-east-1"),
    }


def pyiceberg_properties(location: str) -> dict:
    if not location.startswith("s3://"):
        return {}
    s3 = s3_settings()
    props = {
        "s3.access-key-id": s3["key"],
        "s3.secret-access-key": s3["secret"],
        "s3.region": s3["region"],
        "s3.force-virtual-addressing": "false",
    }
    if s3["endpoint"]:
        props["s3.endpoint"] = s3["endpoint"]
    return props


# --- engines -----------------------------------------------------------------------------------


def read_pyiceberg(read: dict) -> dict:
    from pyiceberg.table import StaticTable

    location = read["metadata"]
    table = StaticTable.from_metadata(location, properties=pyiceberg_properties(location))
    kwargs: dict = {}
    if read.get("filter"):
        kwargs["row_filter"] = read["filter"]
    if read.get("snapshot_id") is not None:
        snapshot_id = int(read["snapshot_id"])
        if table.snapshot_by_id(snapshot_id) is None:
            raise ValueError(f"no snapshot {snapshot_id} in {location}")
        kwargs["snapshot_id"] = snapshot_id
    scan = table.scan(**kwargs)
    result: dict = {"rows": render_table(scan.to_arrow())}
    if read.get("plan_files"):
        result["files"] = sorted(task.file.file_path for task in scan.plan_files())
    return result


_DUCKDB = None


def duckdb_extension_files() -> list[str]:
    import duckdb_ext

    files = []
    for root in duckdb_ext.__path__:
        files += glob.glob(os.path.join(root, "**", "*.duckdb_extension"), recursive=True)
    # parquet and avro before iceberg, which needs both
    order = {"parquet": 0, "avro": 1, "httpfs": 2, "iceberg": 3}
    return sorted(files, key=lambda f: (order.get(os.path.basename(f).split(".")[0], 9), f))


def duckdb_connection():
    """The process's DuckDB connection, with the extensions loaded (made once)."""
    global _DUCKDB
    if _DUCKDB is None:
        _DUCKDB = new_duckdb_connection()
    return _DUCKDB


def new_duckdb_connection():
    """A DuckDB connection of its own (an INTERNAL error invalidates the one it happened on)."""
    import duckdb

    con = duckdb.connect(config={"allow_unsigned_extensions": "true", "autoinstall_known_extensions": "false",
                                 "autoload_known_extensions": "false"})
    files = duckdb_extension_files()
    if not any(os.path.basename(f).startswith("iceberg.") for f in files):
        raise RuntimeError(f"no iceberg.duckdb_extension under the duckdb_ext package (found {files})")
    for path in files:
        con.execute(f"LOAD '{path}'")
    s3 = s3_settings()
    if s3["endpoint"]:
        endpoint = urlparse(s3["endpoint"])
        use_ssl = "true" if endpoint.scheme == "https" else "false"
        con.execute(
            f"CREATE SECRET hp_s3 (TYPE s3, KEY_ID {_sql_string(s3['key'])}, SECRET {_sql_string(s3['secret'])}, "
            f"REGION {_sql_string(s3['region'])}, ENDPOINT {_sql_string(endpoint.netloc)}, "
            f"URL_STYLE 'path', USE_SSL {use_ssl})"
        )
    return con


def _sql_string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def read_duckdb(read: dict) -> dict:
    if read.get("plan_files"):
        raise ValueError("--plan-files is for pyiceberg only")
    con = duckdb_connection()
    args = [_sql_string(read["metadata"])]
    if read.get("snapshot_id") is not None:
        args.append(f"snapshot_from_id => {int(read['snapshot_id'])}")
    sql = f"SELECT * FROM iceberg_scan({', '.join(args)})"
    if read.get("sql_where"):
        sql += f" WHERE {read['sql_where']}"
    return {"rows": render_table(con.execute(sql).fetch_arrow_table())}


def query_duckdb(read: dict) -> dict:
    """Run read["sql"] with each of read["tables"] (name: metadata) as a view over iceberg_scan."""
    con = duckdb_connection()
    for name, metadata in read["tables"].items():
        con.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM iceberg_scan({_sql_string(metadata)})')
    return {"rows": render_table(con.execute(read["sql"]).fetch_arrow_table())}


def script_duckdb(read: dict) -> dict:
    """Run read["script"] on a fresh in-memory DuckDB: one result per statement."""
    import duckdb

    con = duckdb.connect()
    results = []
    for sql in read["script"]:
        try:
            cursor = con.execute(sql)
            table = cursor.fetch_arrow_table() if cursor.description else None
            results.append({"rows": render_table(table) if table is not None else []})
        except Exception as e:  # noqa: BLE001 - an engine error is an answer here
            results.append({"error": f"{type(e).__name__}: {e}"})
    return {"results": results}


ENGINES = {"pyiceberg": read_pyiceberg, "duckdb": read_duckdb}


def run(read: dict) -> dict:
    if "script" in read:
        return script_duckdb(read)
    if "sql" in read:
        return query_duckdb(read)
    engine = ENGINES.get(read.get("engine", ""))
    if engine is None:
        raise ValueError(f"unknown engine {read.get('engine')!r}: expected one of {sorted(ENGINES)}")
    if not read.get("metadata"):
        raise ValueError("a read needs 'metadata' (a metadata.json, a table directory or a URL)")
    return engine(read)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", choices=sorted(ENGINES))
    parser.add_argument("--metadata")
    parser.add_argument("--filter")
    parser.add_argument("--sql-where")
    parser.add_argument("--snapshot-id", type=int)
    parser.add_argument("--plan-files", action="store_true")
    parser.add_argument("--batch", help="a JSON file with a list of reads")
    args = parser.parse_args()
    if args.batch:
        with open(args.batch, encoding="utf-8") as f:
            reads = json.load(f)
        if not isinstance(reads, list):
            print(f"{args.batch}: expected a JSON list of reads", file=sys.stderr)
            return 2
        results = []
        for read in reads:
            try:
                results.append(run(read))
            except Exception as e:  # noqa: BLE001 - every engine error is an answer here
                results.append({"error": f"{type(e).__name__}: {e}"})
        print(json.dumps(results, ensure_ascii=False))
        return 0
    if not args.engine or not args.metadata:
        parser.error("--engine and --metadata are required (or --batch FILE)")
    read = {
        "engine": args.engine,
        "metadata": args.metadata,
        "filter": args.filter,
        "sql_where": args.sql_where,
        "snapshot_id": args.snapshot_id,
        "plan_files": args.plan_files,
    }
    try:
        result = run(read)
    except Exception as e:  # noqa: BLE001
        print(f"{args.engine} could not read {args.metadata}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
