#!/usr/bin/env python3
"""Write the Delta Lake test fixtures under tests/data/delta and tests/data/delta_bad, and their
expected query answers under tests/data/expected/delta*/.

How to run (from the repository root; the venv lives OUTSIDE the repo):

    python3 -m venv /work/venv-fixtures
    /work/venv-fixtures/bin/pip install -r tests/data/requirements-fixtures.txt
    /work/venv-fixtures/bin/python tests/data/make_delta.py      # or make_fixtures.py for both formats

What it does:
  * deletes /tmp/hp-fixtures/delta*, writes every table there with the `deltalake` package
    (delta-rs), crafting by hand what delta-rs cannot write (deletion vectors, a generated
    column whose expression delta-rs cannot evaluate, a column-mapping rename);
  * computes the expected answers with deltalake (to_pyarrow_table(filters=...),
    file_uris(file_pruning_predicate=...)) and cross-checks them with deltalake's own
    DataFusion engine (DeltaTable.scan(predicate=SQL));
  * deletes tests/data/delta, tests/data/delta_bad, tests/data/expected/delta* and copies the
    tables there.

Delta file names contain uuids chosen inside delta-rs (Rust), so they change on every run;
the contents (rows, partition values, versions) are fixed.  Delta paths in the log are
relative, so nothing needs rebasing, except a deletion vector with storageType 'p' (none here).
"""

from __future__ import annotations

import base64
import datetime as dt
import glob
import json
import os
import shutil
import struct
import sys
import time
import urllib.parse
import uuid
import zlib

import deltalake
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from deltalake import DeltaTable, Field, Schema, write_deltalake
from deltalake.schema import PrimitiveType
from pyroaring import BitMap

sys.dont_write_bytecode = True  # no __pycache__ inside tests/data
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_common import (  # noqa: E402
    FIXTURE_ROOT,
    HERE,
    arrow_rows,
    check_sql,
    copy_table,
    json_value,
    strip_prefix,
    to_sql,
    to_where,
    write_json,
)

DELTA_ROOT = f"{FIXTURE_ROOT}/delta"
DELTA_BAD_ROOT = f"{FIXTURE_ROOT}/delta_bad"
GENERATOR = f"deltalake (delta-rs) {deltalake.__version__}, pyarrow {pa.__version__}"
D = dt.date
T = dt.datetime
UTC = dt.timezone.utc


# ============================================================================================
# helpers
# ============================================================================================

def log_path(table: str, version: int) -> str:
    return os.path.join(table, "_delta_log", f"{version:020d}.json")


def read_log(table: str, version: int) -> list[dict]:
    with open(log_path(table, version), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_log(table: str, version: int, actions: list[dict]) -> None:
    path = log_path(table, version)
    assert not os.path.exists(path), path
    with open(path, "w", encoding="utf-8") as f:
        for a in actions:
            f.write(json.dumps(a, separators=(",", ":"), ensure_ascii=False) + "\n")


def rewrite_log(table: str, version: int, actions: list[dict]) -> None:
    os.remove(log_path(table, version))
    write_log(table, version, actions)


def versions(table: str) -> list[int]:
    return sorted(int(os.path.basename(p)[:20]) for p in glob.glob(f"{table}/_delta_log/*.json"))


def replay(table: str, upto: int | None = None) -> dict[str, dict]:
    """Plain JSON-log replay (all commits are kept, so no checkpoint is needed):
    returns path -> add action of the live logical files."""
    live: dict[str, dict] = {}
    for v in versions(table):
        if upto is not None and v > upto:
            break
        for a in read_log(table, v):
            if "remove" in a:
                live.pop(a["remove"]["path"], None)
            if "add" in a:
                live[a["add"]["path"]] = a["add"]
    return live


def commit_info(operation: str, params: dict | None = None) -> dict:
    return {"commitInfo": {"timestamp": int(time.time() * 1000), "operation": operation,
                           "operationParameters": params or {},
                           "engineInfo": "hidden-partitions tests/data/make_delta.py (hand-crafted commit)",
                           "clientVersion": "hand-crafted"}}


def json_to_py(v, typ: pa.DataType):
    if v is None:
        return None
    if pa.types.is_date(typ):
        return D.fromisoformat(v)
    if pa.types.is_timestamp(typ):
        x = T.fromisoformat(v)
        return x
    return v


def pa_filter(filt: list[dict], schema: pa.Schema):
    expr = None
    for f in filt:
        c, op = f["column"], f["op"]
        typ = schema.field(c).type
        fld = ds.field(c)
        if op == "is_null":
            e = fld.is_null()
        elif op == "is_not_null":
            e = fld.is_valid()
        elif op in ("in", "not_in"):
            e = fld.isin(pa.array([json_to_py(v, typ) for v in f["value"]], typ))
            if op == "not_in":
                e = ~e
        else:
            val = pa.scalar(json_to_py(f["value"], typ), typ)
            e = {"=": fld == val, "!=": fld != val, "<": fld < val, "<=": fld <= val,
                 ">": fld > val, ">=": fld >= val}[op]
        expr = e if expr is None else (expr & e)
    return expr


def file_selection(dtab: DeltaTable, filt: list[dict], where: str, schema: pa.Schema) -> tuple[list[str], str]:
    """deltalake's own file selection: file_uris with the SQL WHERE text; if delta-rs cannot
    evaluate that text, with the equivalent tuple filters."""
    if not where:
        return dtab.file_uris(), "DeltaTable.file_uris()"
    try:
        return dtab.file_uris(file_pruning_predicate=where), "DeltaTable.file_uris(file_pruning_predicate=<WHERE text>)"
    except Exception as e:  # noqa: BLE001
        err = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    tuples = []
    for f in filt:
        typ = schema.field(f["column"]).type
        if f["op"] in ("is_null", "is_not_null", "starts_with"):
            raise RuntimeError(f"no tuple form for {f} after: {err}")
        op = {"in": "in", "not_in": "not in"}.get(f["op"], f["op"])
        val = [json_to_py(v, typ) for v in f["value"]] if op in ("in", "not in") else json_to_py(f["value"], typ)
        tuples.append((f["column"], op, val))
    return (dtab.file_uris(file_pruning_predicate=tuples),
            f"DeltaTable.file_uris(file_pruning_predicate={tuples!r}) -- the WHERE text failed in delta-rs: {err}")


def sql_types_of(schema: pa.Schema) -> dict[str, str]:
    out = {}
    for f in schema:
        t = f.type
        if pa.types.is_timestamp(t):
            out[f.name] = "timestamptz" if t.tz else "timestamp"
        elif pa.types.is_date(t):
            out[f.name] = "date"
        elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            out[f.name] = "string"
        else:
            out[f.name] = str(t)
    return out


def delta_query(table: str, name: str, columns: list[str], filt: list[dict], version: int | None = None,
                note: str | None = None, order_by: str = "id") -> dict:
    dtab = DeltaTable(table, version=version) if version is not None else DeltaTable(table)
    full = dtab.to_pyarrow_table()
    schema = full.schema
    types = sql_types_of(schema)
    where = to_where(filt, types)
    expr = pa_filter(filt, schema)
    result = dtab.to_pyarrow_table(columns=columns, filters=expr) if expr is not None \
        else dtab.to_pyarrow_table(columns=columns)
    files, how = file_selection(dtab, filt, where, schema)
    q = {"name": name, "sql": to_sql(columns, filt, types, order_by=order_by),
         "columns": columns, "filter": filt}
    if version is not None:
        q["version"] = version
        q["sql_note"] = "time travel: run the SQL against the table as of this version"
    if note:
        q["note"] = note
    q.update({
        "rows": arrow_rows(result, columns, order_by),
        "row_count": result.num_rows,
        "files_selected": len(files),
        "files": sorted(strip_prefix(f, table) for f in files),
        "computed_by": "deltalake: DeltaTable.to_pyarrow_table(columns, filters=<pyarrow expression>); "
                       f"files from {how}",
    })
    # Cross-check 1: the SQL text means the same over the same rows (DataFusion python).
    check_sql(full, q, order_by)
    # Cross-check 2: delta-rs's own DataFusion engine with the WHERE text.
    got = pa.table(dtab.scan(columns=columns, predicate=where or None))
    scan_rows = arrow_rows(got, columns, order_by)
    if scan_rows == q["rows"]:
        q["cross_checked_by"] = "deltalake DeltaTable.scan(columns, predicate=<WHERE text>): same rows"
    else:
        q["deltalake_scan_disagrees"] = scan_rows
    return q


def scan_query(table: str, name: str, columns: list[str], filt: list[dict], version: int | None = None,
               note: str | None = None, order_by: str = "id") -> dict:
    """For tables to_pyarrow_table cannot read correctly (deletion vectors, column mapping):
    the answer comes from deltalake's DataFusion engine (DeltaTable.scan)."""
    dtab = DeltaTable(table, version=version) if version is not None else DeltaTable(table)
    full = pa.table(dtab.scan())
    types = sql_types_of(full.schema)
    where = to_where(filt, types)
    result = pa.table(dtab.scan(columns=columns, predicate=where or None))
    files, how = file_selection(dtab, filt, where, full.schema)
    q = {"name": name, "sql": to_sql(columns, filt, types, order_by=order_by),
         "columns": columns, "filter": filt}
    if version is not None:
        q["version"] = version
        q["sql_note"] = "time travel: run the SQL against the table as of this version"
    if note:
        q["note"] = note
    q.update({
        "rows": arrow_rows(result, columns, order_by),
        "row_count": result.num_rows,
        "files_selected": len(files),
        "files": sorted(strip_prefix(f, table) for f in files),
        "computed_by": "deltalake: DeltaTable.scan(columns, predicate=<the SQL WHERE text>) (delta-rs "
                       f"DataFusion engine); files from {how}",
    })
    check_sql(full, q, order_by)
    return q


def describe(table: str) -> dict:
    dtab = DeltaTable(table)
    proto = dtab.protocol()
    md = dtab.metadata()
    live = replay(table)
    return {
        "version": dtab.version(),
        "protocol": {"minReaderVersion": proto.min_reader_version, "minWriterVersion": proto.min_writer_version,
                     "readerFeatures": proto.reader_features, "writerFeatures": proto.writer_features},
        "partition_columns": md.partition_columns,
        "configuration": md.configuration,
        "schema": json.loads(dtab.schema().to_json()),
        "log_files": sorted(os.listdir(os.path.join(table, "_delta_log"))),
        "live_add_actions": [
            {k: a.get(k) for k in ("path", "partitionValues", "size", "stats", "deletionVector") if k in a}
            | {"path_on_disk": urllib.parse.unquote(a["path"])}
            for _, a in sorted(live.items())],
    }


def finish(table_local: str, name: str, queries: list[dict], extra: dict | None = None, bad: bool = False):
    sub = "delta_bad" if bad else "delta"
    dst = os.path.join(HERE, sub, name)
    copy_table(table_local, dst)
    doc = {"format": "delta", "table": f"{sub}/{name}", "original_location": table_local,
           "generated_by": GENERATOR,
           "note": "'files' are paths relative to the table root as they are on disk (add.path "
                   "URL-decoded once); live_add_actions show add.path exactly as in the log"}
    if not bad:
        doc["table"] = f"{sub}/{name}"
        doc["description"] = describe(table_local)
    if extra:
        doc.update(extra)
    doc["queries"] = queries
    write_json(os.path.join(HERE, "expected", sub, f"{name}.json"), doc)


# ============================================================================================
# delta/strings
# ============================================================================================

STRING_VALUES = ["a{b", "Serbia/srb%", "100%25", "hello world", "日本語", "🎵🎶", "a<b>c|d", "a=b", "a:b",
                 "'quote'", '"dq"', "", None, "trailing ", "a\\b", "#hash", "x?y", "plain"]


def make_strings() -> None:
    table = f"{DELTA_ROOT}/strings"
    rows = [{"id": i, "p": v, "v": f"row{i}"} for i, v in enumerate(STRING_VALUES)]
    schema = pa.schema([("id", pa.int64()), ("p", pa.string()), ("v", pa.string())])
    write_deltalake(table, pa.Table.from_pylist(rows, schema=schema), partition_by=["p"])
    # second commit: more rows into some existing and one new partition
    more = [{"id": 100, "p": "a{b", "v": "more"}, {"id": 101, "p": None, "v": "more"},
            {"id": 102, "p": "Serbia/srb%", "v": "more"}, {"id": 103, "p": "new/one", "v": "more"}]
    write_deltalake(table, pa.Table.from_pylist(more, schema=schema), partition_by=["p"], mode="append")
    cols = ["id", "p", "v"]
    queries = [delta_query(table, "all_rows", cols, [])]
    for v in STRING_VALUES:
        if v is None or v == "":
            continue
        queries.append(delta_query(table, f"p_eq_[{v}]", cols, [{"column": "p", "op": "=", "value": v}]))
    queries.append(delta_query(table, "p_is_null", cols, [{"column": "p", "op": "is_null"}], note=(
        "the PROTOCOL says an empty-string partition value means NULL: rows written with p='' "
        "(directory 'p=', partitionValues {\"p\": \"\"}) read back as NULL through to_pyarrow_table. "
        "See deltalake_scan_disagrees / files for what delta-rs's other code paths do.")))
    # What the protocol says the file selection for IS NULL is: null AND "" partition values.
    live = replay(table)
    q = queries[-1]
    q["files_protocol"] = sorted(urllib.parse.unquote(a["path"]) for a in live.values()
                                 if a["partitionValues"]["p"] in (None, ""))
    q["files_selected_protocol"] = len(q["files_protocol"])
    q["note"] += (" deltalake's file_uris(p IS NULL) skips the p='' file (files_selected), while "
                  "files_protocol lists what the protocol rule selects.")
    queries.append(delta_query(table, "p_in_list", cols, [{"column": "p", "op": "in",
                                                           "value": ["a=b", "hello world", "🎵🎶", "nope"]}]))
    queries.append(delta_query(table, "p_range", cols, [{"column": "p", "op": ">=", "value": "a"},
                                                        {"column": "p", "op": "<", "value": "b"}]))
    queries.append(delta_query(table, "all_rows_version_0", cols, [], version=0))
    finish(table, "strings", queries)


# ============================================================================================
# delta/dated : DATE + INT partitions, pre-1970 dates, checkpoint, commits after it
# ============================================================================================

def make_dated() -> None:
    table = f"{DELTA_ROOT}/dated"
    schema = pa.schema([("id", pa.int64()), ("d", pa.date32()), ("n", pa.int32()), ("v", pa.string())])

    def put(rows, mode="append"):
        write_deltalake(table, pa.Table.from_pylist(rows, schema=schema), partition_by=["d", "n"], mode=mode)

    put([{"id": 1, "d": D(2024, 1, 1), "n": 1, "v": "a"},
         {"id": 2, "d": D(2024, 1, 1), "n": 2, "v": "b"},
         {"id": 3, "d": D(1969, 12, 31), "n": 0, "v": "c"}], mode="error")        # v0
    put([{"id": 4, "d": D(1960, 5, 5), "n": -1, "v": "d"},
         {"id": 5, "d": D(1900, 1, 1), "n": 7, "v": "e"}])                       # v1
    put([{"id": 6, "d": D(2024, 2, 29), "n": None, "v": "f"},
         {"id": 7, "d": None, "n": 3, "v": "g"}])                                # v2
    put([{"id": 8, "d": D(1970, 1, 1), "n": 0, "v": "h"}])                      # v3
    DeltaTable(table).create_checkpoint()                                        # checkpoint at v3
    put([{"id": 9, "d": D(2024, 1, 1), "n": 1, "v": "i"}])                      # v4
    DeltaTable(table).delete("id = 4")                                           # v5: removes the 1960 file
    put([{"id": 10, "d": D(1969, 12, 31), "n": 0, "v": "j"},
         {"id": 11, "d": D(1950, 1, 1), "n": -5, "v": "k"}])                    # v6
    assert DeltaTable(table).version() == 6
    cols = ["id", "d", "n", "v"]
    Q = lambda name, filt, **kw: delta_query(table, name, cols, filt, **kw)  # noqa: E731
    queries = [
        Q("all_rows", []),
        Q("d_eq_1969_12_31", [{"column": "d", "op": "=", "value": "1969-12-31"}]),
        Q("d_before_1970", [{"column": "d", "op": "<", "value": "1970-01-01"}]),
        Q("d_ge_2024", [{"column": "d", "op": ">=", "value": "2024-01-01"}]),
        Q("d_is_null", [{"column": "d", "op": "is_null"}]),
        Q("n_eq_0", [{"column": "n", "op": "=", "value": 0}]),
        Q("n_negative", [{"column": "n", "op": "<", "value": 0}]),
        Q("n_is_null", [{"column": "n", "op": "is_null"}]),
        Q("d_2024_01_01_and_n_1", [{"column": "d", "op": "=", "value": "2024-01-01"},
                                   {"column": "n", "op": "=", "value": 1}]),
        Q("v_eq_c_data_column", [{"column": "v", "op": "=", "value": "c"}]),
        Q("all_rows_version_3_checkpoint", [], version=3),
        Q("all_rows_version_4", [], version=4),
    ]
    finish(table, "dated", queries, extra={
        "history": {"0": "create + write ids 1-3", "1": "append ids 4-5", "2": "append ids 6-7 (NULL n, NULL d)",
                    "3": "append id 8; then create_checkpoint() -> 00000000000000000003.checkpoint.parquet "
                         "+ _last_checkpoint", "4": "append id 9 (same partition as id 1)",
                    "5": "DELETE id = 4 (removes the d=1960-05-05 file)", "6": "append ids 10-11"},
    })


# ============================================================================================
# delta/generated : generated partition columns
# ============================================================================================

def make_generated() -> None:
    table = f"{DELTA_ROOT}/generated"
    # day is generated by delta-rs itself (it evaluates CAST(ts AS DATE) with DataFusion);
    # month is written with plain values and its expression is added to the schema afterwards,
    # because delta-rs evaluates date_format(ts, 'yyyy-MM') with DataFusion's to_char and
    # produces the literal text 'yyyy-MM' (Spark semantics differ).
    schema = Schema([
        Field("id", PrimitiveType("long")),
        Field("ts", PrimitiveType("timestamp_ntz")),
        Field("v", PrimitiveType("double")),
        Field("month", PrimitiveType("string")),
        Field("day", PrimitiveType("date"), metadata={"delta.generationExpression": "CAST(ts AS DATE)"}),
    ])
    DeltaTable.create(table, schema, partition_by=["month", "day"])
    asch = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.float64()), ("month", pa.string())])

    def put(rows):
        for r in rows:
            r["month"] = None if r["ts"] is None else r["ts"].strftime("%Y-%m")
        write_deltalake(table, pa.Table.from_pylist(rows, schema=asch), mode="append")

    put([{"id": 1, "ts": T(2024, 1, 1, 0, 0, 0), "v": 1.0},
         {"id": 2, "ts": T(2024, 1, 1, 23, 59, 59, 999999), "v": 2.0},
         {"id": 3, "ts": T(2024, 1, 2, 0, 0, 0), "v": 3.0},
         {"id": 4, "ts": T(2024, 2, 29, 12, 0, 0), "v": 4.0}])
    put([{"id": 5, "ts": T(1969, 12, 31, 23, 59, 59), "v": 5.0},
         {"id": 6, "ts": T(1960, 5, 5, 5, 5, 5), "v": 6.0},
         {"id": 7, "ts": None, "v": 7.0},
         {"id": 8, "ts": T(1970, 1, 1, 0, 0, 0), "v": 8.0}])
    # add the generation expression of `month` to the schema in the version-0 metaData action
    actions = read_log(table, 0)
    for a in actions:
        if "metaData" in a:
            s = json.loads(a["metaData"]["schemaString"])
            for f in s["fields"]:
                if f["name"] == "month":
                    f["metadata"]["delta.generationExpression"] = "date_format(ts, 'yyyy-MM')"
            a["metaData"]["schemaString"] = json.dumps(s, separators=(",", ":"))
        if "protocol" in a:
            assert "generatedColumns" in a["protocol"]["writerFeatures"], a
        if "commitInfo" in a:
            a["commitInfo"]["operationParameters"].pop("metadata", None)
            a["commitInfo"]["hand_edited"] = ("schemaString: delta.generationExpression added to column "
                                              "'month' after the data was written")
    rewrite_log(table, 0, actions)
    # consistency of the data with both expressions
    full = DeltaTable(table).to_pyarrow_table()
    for r in full.to_pylist():
        assert r["day"] == (None if r["ts"] is None else r["ts"].date()), r
        assert r["month"] == (None if r["ts"] is None else r["ts"].strftime("%Y-%m")), r
    cols = ["id", "ts", "v", "month", "day"]
    Q = lambda name, filt, **kw: delta_query(table, name, cols, filt, **kw)  # noqa: E731
    queries = [
        Q("all_rows", []),
        Q("ts_ge_2024_01_02", [{"column": "ts", "op": ">=", "value": "2024-01-02T00:00:00"}],
          note="a reader that knows the generation expressions can prune by day >= 2024-01-02 and "
               "month >= '2024-01'; deltalake's own file_uris only prunes on the partition columns"),
        Q("ts_on_2024_01_01", [{"column": "ts", "op": ">=", "value": "2024-01-01T00:00:00"},
                               {"column": "ts", "op": "<", "value": "2024-01-02T00:00:00"}]),
        Q("ts_before_epoch", [{"column": "ts", "op": "<", "value": "1970-01-01T00:00:00"}]),
        Q("ts_eq", [{"column": "ts", "op": "=", "value": "1969-12-31T23:59:59"}]),
        Q("ts_is_null", [{"column": "ts", "op": "is_null"}]),
        Q("ts_gt_sub_millisecond", [{"column": "ts", "op": ">", "value": "2024-01-01T23:59:59.999500"}],
          note="Delta stats truncate timestamps to milliseconds: the file holding id 2 "
               "(ts 23:59:59.999999) has maxValues.ts '2024-01-01 23:59:59.999'; a reader that trusts "
               "max < literal would wrongly skip it"),
        Q("day_eq_partition_column", [{"column": "day", "op": "=", "value": "2024-01-01"}]),
        Q("month_eq_partition_column", [{"column": "month", "op": "=", "value": "1969-12"}]),
    ]
    finish(table, "generated", queries, extra={"generation_expressions": {
        "day": "CAST(ts AS DATE)  (written by delta-rs, value computed by delta-rs)",
        "month": "date_format(ts, 'yyyy-MM')  (added by hand to the schema; values computed by the script "
                 "with Spark semantics: 'yyyy-MM' of the timestamp_ntz)"}})


# ============================================================================================
# delta/dv : deletion vectors (crafted: delta-rs rewrites files instead of writing DVs)
# ============================================================================================

Z85_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def z85_encode(data: bytes) -> str:
    assert len(data) % 4 == 0
    out = []
    for i in range(0, len(data), 4):
        (n,) = struct.unpack(">I", data[i:i + 4])
        chunk = []
        for _ in range(5):
            n, r = divmod(n, 85)
            chunk.append(Z85_CHARS[r])
        out.append("".join(reversed(chunk)))
    return "".join(out)


def z85_decode(s: str) -> bytes:
    out = bytearray()
    for i in range(0, len(s), 5):
        n = 0
        for ch in s[i:i + 5]:
            n = n * 85 + Z85_CHARS.index(ch)
        out += struct.pack(">I", n)
    return bytes(out)


MAGIC = 1681511377


def dv_payload(positions: list[int]) -> bytes:
    """magic (u32 LE) + 64-bit 'portable' RoaringTreemap: bucket count (u64 LE), then per bucket
    key (u32 LE) + 32-bit portable roaring bitmap.  Row indexes here are < 2^32: one bucket."""
    assert all(0 <= p < 2**32 for p in positions)
    bm = BitMap(positions)
    return struct.pack("<I", MAGIC) + struct.pack("<Q", 1) + struct.pack("<I", 0) + bm.serialize()


def decode_dv_payload(payload: bytes) -> list[int]:
    (magic,) = struct.unpack_from("<I", payload, 0)
    assert magic == MAGIC
    (n,) = struct.unpack_from("<Q", payload, 4)
    off, out = 12, []
    for _ in range(n):
        (key,) = struct.unpack_from("<I", payload, off)
        off += 4
        bm = BitMap.deserialize(payload[off:])
        off += len(bm.serialize())
        out += [(key << 32) | x for x in bm]
    return out


def write_dv_file(table: str, prefix: str, dv_uuid: uuid.UUID, dvs: list[list[int]]) -> list[dict]:
    """One DV file with several DVs: version byte 1, then per DV: size (u32 BE), payload,
    CRC-32 of payload (u32 BE).  Returns the descriptors ('u' storage)."""
    rel_dir = os.path.join(table, prefix) if prefix else table
    os.makedirs(rel_dir, exist_ok=True)
    buf = bytearray(b"\x01")
    descs = []
    for positions in dvs:
        payload = dv_payload(positions)
        offset = len(buf)
        buf += struct.pack(">I", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload) & 0xFFFFFFFF)
        descs.append({"storageType": "u", "pathOrInlineDv": prefix + z85_encode(dv_uuid.bytes),
                      "offset": offset, "sizeInBytes": len(payload), "cardinality": len(positions)})
    with open(os.path.join(rel_dir, f"deletion_vector_{dv_uuid}.bin"), "wb") as f:
        f.write(bytes(buf))
    return descs


def inline_dv(positions: list[int]) -> dict:
    payload = dv_payload(positions)
    padded = payload + b"\x00" * (-len(payload) % 4)
    return {"storageType": "i", "pathOrInlineDv": z85_encode(padded), "sizeInBytes": len(payload),
            "cardinality": len(positions)}


def read_dv(table: str, desc: dict) -> list[int]:
    """Independent decoder following PROTOCOL.md, used to validate the crafted files."""
    if desc["storageType"] == "i":
        return decode_dv_payload(z85_decode(desc["pathOrInlineDv"])[:desc["sizeInBytes"]])
    p = desc["pathOrInlineDv"]
    prefix, enc = p[:-20], p[-20:]
    u = uuid.UUID(bytes=z85_decode(enc))
    path = os.path.join(table, prefix, f"deletion_vector_{u}.bin")
    data = open(path, "rb").read()
    assert data[0] == 1
    off = desc.get("offset", 1)
    (size,) = struct.unpack_from(">I", data, off)
    assert size == desc["sizeInBytes"]
    payload = data[off + 4: off + 4 + size]
    (crc,) = struct.unpack_from(">I", data, off + 4 + size)
    assert crc == zlib.crc32(payload) & 0xFFFFFFFF
    return decode_dv_payload(payload)


def dv_add_remove(add: dict, new_dv: dict | None, now: int) -> list[dict]:
    """remove the logical file (path + its current DV) and add it back with new_dv."""
    remove = {"path": add["path"], "deletionTimestamp": now, "dataChange": True,
              "extendedFileMetadata": True, "partitionValues": add["partitionValues"], "size": add["size"]}
    if add.get("deletionVector"):
        remove["deletionVector"] = add["deletionVector"]
    stats = json.loads(add["stats"])
    stats["tightBounds"] = False
    new_add = {"path": add["path"], "partitionValues": add["partitionValues"], "size": add["size"],
               "modificationTime": add["modificationTime"], "dataChange": True,
               "stats": json.dumps(stats, separators=(",", ":")), "deletionVector": new_dv}
    return [{"remove": remove}, {"add": new_add}]


def make_dv() -> None:
    table = f"{DELTA_ROOT}/dv"
    schema = pa.schema([("id", pa.int64()), ("cat", pa.string()), ("v", pa.string())])
    rows = [{"id": i, "cat": "a", "v": f"a{i}"} for i in range(10)] + \
           [{"id": i, "cat": "b", "v": f"b{i}"} for i in range(10, 15)]
    write_deltalake(table, pa.Table.from_pylist(rows, schema=schema), partition_by=["cat"],
                    configuration={"delta.enableDeletionVectors": "true"})
    proto = DeltaTable(table).protocol()
    assert "deletionVectors" in proto.reader_features and proto.min_reader_version == 3, proto
    live = replay(table)
    by_cat = {a["partitionValues"]["cat"]: a for a in live.values()}

    def positions(add: dict, ids: list[int]) -> list[int]:
        got = pq.read_table(os.path.join(table, urllib.parse.unquote(add["path"])), columns=["id"]).column("id").to_pylist()
        return sorted(got.index(i) for i in ids)

    # v1: one DV file at the table root holding two DVs (a: ids 1,3,7 at offset 1; b: id 12 after it)
    u1 = uuid.UUID("0c6cbaaf-5e04-4c9d-8959-1088814f58ef")
    da, db = write_dv_file(table, "", u1, [positions(by_cat["a"], [1, 3, 7]), positions(by_cat["b"], [12])])
    write_log(table, 1, [commit_info("DELETE", {"predicate": '["id IN (1, 3, 7, 12)"]'})]
              + dv_add_remove(by_cat["a"], da, int(time.time() * 1000)) + dv_add_remove(by_cat["b"], db, int(time.time() * 1000)))
    # v2: b's DV replaced by an inline DV (ids 12, 14)
    live = replay(table)
    by_cat = {a["partitionValues"]["cat"]: a for a in live.values()}
    write_log(table, 2, [commit_info("DELETE", {"predicate": '["id = 14"]'})]
              + dv_add_remove(by_cat["b"], inline_dv(positions(by_cat["b"], [12, 14])), int(time.time() * 1000)))
    # v3: a's DV replaced by one in a file under the random prefix 'x7/' (ids 1, 3, 7, 9)
    live = replay(table)
    by_cat = {a["partitionValues"]["cat"]: a for a in live.values()}
    u3 = uuid.UUID("d2c639aa-8816-431a-aaf6-d3fe2512ff61")
    (da3,) = write_dv_file(table, "x7", u3, [positions(by_cat["a"], [1, 3, 7, 9])])
    write_log(table, 3, [commit_info("DELETE", {"predicate": '["id = 9"]'})]
              + dv_add_remove(by_cat["a"], da3, int(time.time() * 1000)))

    # validate: own decoder, deltalake's deletion_vectors(), deltalake's scan()
    expected_deleted = {0: set(), 1: {1, 3, 7, 12}, 2: {1, 3, 7, 12, 14}, 3: {1, 3, 7, 9, 12, 14}}
    per_version = {}
    for v in range(4):
        live = replay(table, v)
        deleted_ids = set()
        for a in live.values():
            if a.get("deletionVector"):
                ids = pq.read_table(os.path.join(table, urllib.parse.unquote(a["path"])), columns=["id"]).column("id").to_pylist()
                deleted_ids |= {ids[p] for p in read_dv(table, a["deletionVector"])}
        assert deleted_ids == expected_deleted[v], (v, deleted_ids)
        got = pa.table(DeltaTable(table, version=v).scan())
        live_ids = sorted(got.column("id").to_pylist())
        assert live_ids == sorted(set(range(15)) - deleted_ids), (v, live_ids)
        per_version[v] = sorted(deleted_ids)
    masks = {}
    for batch in DeltaTable(table).deletion_vectors():
        b = pa.record_batch(batch)
        for fp, sel in zip(b.column("filepath").to_pylist(), b.column("selection_vector").to_pylist()):
            masks[strip_prefix(urllib.parse.unquote(fp.replace("file://", "")), table)] = \
                [i for i, keep in enumerate(sel) if not keep]
    # cross-check positions with deltalake's own DV decoding
    for a in replay(table).values():
        mine = read_dv(table, a["deletionVector"])
        theirs = masks[urllib.parse.unquote(a["path"])]
        assert mine == theirs, (a["path"], mine, theirs)

    cols = ["id", "cat", "v"]
    Q = lambda name, filt, **kw: scan_query(table, name, cols, filt, **kw)  # noqa: E731
    queries = [
        Q("all_rows", []),
        Q("cat_eq_a", [{"column": "cat", "op": "=", "value": "a"}]),
        Q("cat_eq_b", [{"column": "cat", "op": "=", "value": "b"}]),
        Q("id_ge_9", [{"column": "id", "op": ">=", "value": 9}]),
        Q("all_rows_version_0", [], version=0),
        Q("all_rows_version_1", [], version=1),
        Q("all_rows_version_2", [], version=2),
    ]
    finish(table, "dv", queries, extra={
        "deleted_ids_by_version": per_version,
        "deleted_positions_by_file": masks,
        "deletion_vectors": {
            "v1": "deletion_vector_0c6cbaaf-5e04-4c9d-8959-1088814f58ef.bin at the root, two DVs: "
                  "cat=a file at offset 1, cat=b file at the next offset (storageType 'u', no prefix)",
            "v2": "cat=b file: inline DV (storageType 'i', Z85 of magic+bitmap padded with zero bytes to a "
                  "multiple of 4; sizeInBytes is the unpadded length)",
            "v3": "cat=a file: x7/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin (storageType 'u' "
                  "with random prefix 'x7')"},
        "validated_with": "own decoder (read_dv in make_delta.py), deltalake DeltaTable.deletion_vectors() "
                          "and DeltaTable.scan() at every version",
    })


# ============================================================================================
# delta/cdf : the change data feed (delta.enableChangeDataFeed): _change_data files written by
# delta-rs' DELETE / UPDATE / MERGE, an OPTIMIZE, a column added mid-history
# ============================================================================================

def make_cdf() -> None:
    table = f"{DELTA_ROOT}/cdf"
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("part", pa.string()),
                        ("x", pa.float64()), ("d", pa.date32())])

    def rows(*r):
        return pa.Table.from_pylist([dict(zip(schema.names, v)) for v in r], schema=schema)

    write_deltalake(table, rows((1, "a", "p", 1.0, D(2024, 1, 1)), (2, "b", "p", 2.0, D(1969, 12, 31)),
                                (3, "c", "q", -0.0, None), (4, "d", "q", 4.0, D(2024, 2, 29))),
                    partition_by=["part"], configuration={"delta.enableChangeDataFeed": "true"})  # v0
    write_deltalake(table, rows((5, "e", "p", 5.0, None), (6, "f", "q", None, D(2000, 1, 1))), mode="append")  # v1
    DeltaTable(table).delete("id = 2")  # v2
    DeltaTable(table).update(predicate="id = 3", updates={"name": "'C'"})  # v3
    source = rows((4, "D", "q", 40.0, D(2024, 3, 1)), (7, "g", "p", 7.0, None))
    (DeltaTable(table).merge(source, "s.id = t.id", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())  # v4
    write_deltalake(table, rows((8, "h", "p", 8.0, None)), mode="append")  # v5
    DeltaTable(table).optimize.compact()  # v6 (dataChange: false)
    DeltaTable(table).alter.add_columns(Field("extra", PrimitiveType("string")))  # v7
    DeltaTable(table).update(predicate="id = 5", updates={"extra": "'new'"})  # v8
    dtab = DeltaTable(table)
    assert dtab.version() == 8, dtab.version()
    cdc = {v: sum("cdc" in a for a in read_log(table, v)) for v in versions(table)}
    assert all(cdc[v] for v in (2, 3, 4, 8)), cdc
    columns = [f.name for f in dtab.schema().fields]
    changes = []
    # load_cdf's start is inclusive; table_changes' FROM is exclusive.
    for start, end in [(0, 8), (3, 4), (6, 8), (8, 8)]:
        feed = pa.table(dtab.load_cdf(starting_version=start, ending_version=end).read_all())
        got = feed.to_pylist()
        got.sort(key=lambda r: (r["_commit_version"], r["id"], r["_change_type"]))
        changes.append({
            "from": None if start == 0 else start - 1, "to": end,
            "columns": columns + ["_change_type", "_commit_version"],
            "rows": [[json_value(r[c]) for c in columns] + [r["_change_type"], r["_commit_version"]] for r in got],
        })
    cols = columns
    queries = [delta_query(table, "all_rows", cols, [])]
    finish(table, "cdf", queries, extra={
        "cdc_files_per_version": {str(v): n for v, n in cdc.items()},
        "changes": changes,
        "changes_note": "rows of DeltaTable.load_cdf(starting_version, ending_version) sorted by "
                        "(_commit_version, id, _change_type); table_changes(t, from, to) must return "
                        "them, its FROM being exclusive",
    })


# ============================================================================================
# delta/column_mapping : mode 'name' (written by delta-rs) + a rename (crafted metaData commit)
# ============================================================================================

def make_column_mapping() -> None:
    table = f"{DELTA_ROOT}/column_mapping"
    schema = pa.schema([("id", pa.int64()), ("Country Code", pa.string()), ("Name", pa.string()),
                        ("d", pa.date32())])
    write_deltalake(table, pa.Table.from_pylist([
        {"id": 1, "Country Code": "RS", "Name": "Beograd", "d": D(2024, 1, 1)},
        {"id": 2, "Country Code": "RS", "Name": "Novi Sad", "d": D(1969, 12, 31)},
        {"id": 3, "Country Code": "JP", "Name": "東京", "d": D(2024, 1, 1)},
        {"id": 4, "Country Code": None, "Name": "nowhere", "d": None},
    ], schema=schema), partition_by=["Country Code", "d"],
        configuration={"delta.columnMapping.mode": "name"})
    write_deltalake(table, pa.Table.from_pylist([
        {"id": 5, "Country Code": "JP", "Name": "大阪", "d": D(1960, 5, 5)},
    ], schema=schema), mode="append")
    # v2 (crafted): rename logical column Name -> "full name"; physical name unchanged
    md = None
    for v in versions(table):
        for a in read_log(table, v):
            if "metaData" in a:
                md = a["metaData"]
    s = json.loads(md["schemaString"])
    physical = {}
    for f in s["fields"]:
        physical[f["name"]] = f["metadata"]["delta.columnMapping.physicalName"]
        if f["name"] == "Name":
            f["name"] = "full name"
    md = dict(md, schemaString=json.dumps(s, separators=(",", ":")))
    write_log(table, 2, [commit_info("RENAME COLUMN", {"oldColumnPath": "Name", "newColumnPath": "full name"}),
                         {"metaData": md}])
    cols = ["id", "Country Code", "full name", "d"]
    Q = lambda name, filt, **kw: scan_query(table, name, cols, filt, **kw)  # noqa: E731
    queries = [
        Q("all_rows", []),
        Q("country_rs", [{"column": "Country Code", "op": "=", "value": "RS"}]),
        Q("country_is_null", [{"column": "Country Code", "op": "is_null"}]),
        Q("d_before_1970", [{"column": "d", "op": "<", "value": "1970-01-01"}]),
        Q("renamed_full_name", [{"column": "full name", "op": "=", "value": "東京"}]),
        scan_query(table, "all_rows_version_1_before_rename", ["id", "Country Code", "Name", "d"], [], version=1),
    ]
    finish(table, "column_mapping", queries, extra={
        "physical_names": physical,
        "note_column_mapping": "Parquet files use the physical names (col-<uuid>) and carry field ids = "
                               "delta.columnMapping.id; partitionValues and stats are keyed by physical name; "
                               "delta-rs puts the files under random 2-character prefix directories; "
                               "version 2 is a hand-written metaData-only commit renaming Name -> 'full name'",
    })


# ============================================================================================
# delta_bad/missing_version
# ============================================================================================

def make_missing_version() -> None:
    table = f"{DELTA_BAD_ROOT}/missing_version"
    schema = pa.schema([("id", pa.int64()), ("p", pa.string())])
    for i, mode in enumerate(["error", "append", "append"]):
        write_deltalake(table, pa.Table.from_pylist([{"id": i, "p": f"p{i}"}], schema=schema),
                        partition_by=["p"], mode=mode)
    before = arrow_rows(DeltaTable(table).to_pyarrow_table(), ["id", "p"])
    os.remove(log_path(table, 1))
    try:
        DeltaTable(table).to_pyarrow_table()
        behaviour = "deltalake still opens it (!)"
    except Exception as e:  # noqa: BLE001
        behaviour = f"deltalake refuses: {type(e).__name__}: {str(e)[:300]}"
    finish(table, "missing_version", [], bad=True, extra={
        "removed": "_delta_log/00000000000000000001.json (versions 0 and 2 remain, no checkpoint)",
        "rows_before_removal": before,
        "deltalake_behaviour": behaviour,
        "expected": "a reader must fail with an error naming the missing version 1 (not silently skip it)",
    })


def make_only(names: list[str]) -> None:
    """Write only the named tables (e.g. `make_delta.py cdf`), leaving the others as they are."""
    for name in names:
        for p in (f"{DELTA_ROOT}/{name}", os.path.join(HERE, "delta", name)):
            if os.path.exists(p):
                shutil.rmtree(p)
        globals()[f"make_{name}"]()
        print(f"delta/{name} written")


def main() -> None:
    if len(sys.argv) > 1:
        make_only(sys.argv[1:])
        return
    for p in (DELTA_ROOT, DELTA_BAD_ROOT):
        if os.path.exists(p):
            shutil.rmtree(p)
    for sub in ("delta", "delta_bad", os.path.join("expected", "delta"), os.path.join("expected", "delta_bad")):
        if os.path.exists(os.path.join(HERE, sub)):
            shutil.rmtree(os.path.join(HERE, sub))
    make_strings()
    make_dated()
    make_generated()
    make_dv()
    make_column_mapping()
    make_cdf()
    make_missing_version()
    print("delta fixtures written")


if __name__ == "__main__":
    main()
