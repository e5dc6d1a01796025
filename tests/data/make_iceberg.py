#!/usr/bin/env python3
"""Write the Apache Iceberg test fixtures under tests/data/iceberg and tests/data/iceberg_bad,
and their expected query answers under tests/data/expected/iceberg*/.

How to run (from the repository root; the venv lives OUTSIDE the repo):

    python3 -m venv /work/venv-fixtures
    /work/venv-fixtures/bin/pip install -r tests/data/requirements-fixtures.txt
    /work/venv-fixtures/bin/python tests/data/make_iceberg.py      # or make_fixtures.py for both formats

What it does:
  * deletes /tmp/hp-fixtures/iceberg*, writes every table there with pyiceberg
    (SqlCatalog backed by /tmp/hp-fixtures/_iceberg_catalog/catalog.db, NOT in tests/data),
    so that every absolute path inside the metadata starts with /tmp/hp-fixtures/... ;
  * computes the expected answers with pyiceberg (scan(...).to_arrow(), plan_files());
  * deletes tests/data/iceberg, tests/data/iceberg_bad, tests/data/expected/iceberg*
    and copies the table directories there.

Deterministic: fixed values; uuid.uuid4 is replaced by a seeded generator so file names,
snapshot ids and table uuids are the same on every run (only the wall-clock timestamps
in metadata differ).  PYICEBERG_MAX_WORKERS=1 keeps the uuid order stable (and CPU low).
"""

from __future__ import annotations

import os
import random
import uuid

# --- determinism: must run before pyiceberg is imported -----------------------------------
_RNG = random.Random(0x1CEBE56)


def _det_uuid4() -> uuid.UUID:
    return uuid.UUID(int=_RNG.getrandbits(128), version=4)


uuid.uuid4 = _det_uuid4  # type: ignore[assignment]
os.environ["PYICEBERG_MAX_WORKERS"] = "1"

import datetime as dt  # noqa: E402
import decimal  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pyiceberg  # noqa: E402
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.conversions import to_bytes  # noqa: E402
from pyiceberg.expressions import (  # noqa: E402
    AlwaysTrue,
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    NotEqualTo,
    NotIn,
    NotNull,
    StartsWith,
)
from pyiceberg.io.pyarrow import _dataframe_to_data_files  # noqa: E402
from pyiceberg.manifest import (  # noqa: E402
    DATA_FILE_TYPE,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table import StaticTable  # noqa: E402
from pyiceberg.table.snapshots import Operation  # noqa: E402
from pyiceberg.transforms import (  # noqa: E402
    BucketTransform,
    DayTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.typedef import Record  # noqa: E402
from pyiceberg.types import (  # noqa: E402
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)

sys.dont_write_bytecode = True  # no __pycache__ inside tests/data
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_common import (  # noqa: E402
    FIXTURE_ROOT,
    check_sql,
    local_path,
    HERE,
    arrow_rows,
    copy_table,
    json_value,
    reset_dir,
    strip_prefix,
    to_sql,
    write_json,
)

ICE_ROOT = f"{FIXTURE_ROOT}/iceberg"
ICE_BAD_ROOT = f"{FIXTURE_ROOT}/iceberg_bad"
CATALOG_DIR = f"{FIXTURE_ROOT}/_iceberg_catalog"
GENERATOR = f"pyiceberg {pyiceberg.__version__}, pyarrow {pa.__version__}"

# Keeps the fixtures small: pyiceberg deletes metadata.json files older than the last 2
# previous versions after each commit (the metadata-log then names only the kept ones).
PRUNE_OLD_METADATA = {"write.metadata.delete-after-commit.enabled": "true",
                      "write.metadata.previous-versions-max": "2"}

D = dt.date
T = dt.datetime
UTC = dt.timezone.utc
Dec = decimal.Decimal


# ============================================================================================
# helpers
# ============================================================================================

def make_catalog() -> SqlCatalog:
    reset_dir(CATALOG_DIR)
    cat = SqlCatalog(
        "fixtures",
        uri=f"sqlite:///{CATALOG_DIR}/catalog.db",
        warehouse=f"file://{CATALOG_DIR}/warehouse",
    )
    cat.create_namespace("fx")
    return cat


def ice_expr(filt: list[dict]):
    exprs = []
    for f in filt:
        c, op, v = f["column"], f["op"], f.get("value")
        exprs.append({
            "=": lambda: EqualTo(c, v), "!=": lambda: NotEqualTo(c, v),
            "<": lambda: LessThan(c, v), "<=": lambda: LessThanOrEqual(c, v),
            ">": lambda: GreaterThan(c, v), ">=": lambda: GreaterThanOrEqual(c, v),
            "in": lambda: In(c, v), "not_in": lambda: NotIn(c, v),
            "is_null": lambda: IsNull(c), "is_not_null": lambda: NotNull(c),
            "starts_with": lambda: StartsWith(c, v),
        }[op]())
    if not exprs:
        return AlwaysTrue()
    e = exprs[0]
    for x in exprs[1:]:
        e = And(e, x)
    return e


def type_name(t) -> str:
    s = str(t)
    return {"timestamp": "timestamp", "timestamptz": "timestamptz"}.get(s, s)


def schema_json(schema: Schema) -> list[dict]:
    return [{"field_id": f.field_id, "name": f.name, "type": str(f.field_type), "required": f.required}
            for f in schema.fields]


def sql_types(schema: Schema) -> dict[str, str]:
    return {f.name: type_name(f.field_type) for f in schema.fields}


def snapshot_schema(tbl, snapshot_id: int | None) -> Schema:
    if snapshot_id is None:
        return tbl.schema()
    snap = tbl.metadata.snapshot_by_id(snapshot_id)
    return tbl.metadata.schema_by_id(snap.schema_id)


def rel(path: str, location: str) -> str:
    return strip_prefix(path, location)


def iceberg_query(tbl, location: str, name: str, columns: list[str], filt: list[dict],
                  snapshot_id: int | None = None, note: str | None = None) -> dict:
    """Expected answer computed by pyiceberg itself."""
    kwargs = {"row_filter": ice_expr(filt), "selected_fields": tuple(columns)}
    if snapshot_id is not None:
        kwargs["snapshot_id"] = snapshot_id
    scan = tbl.scan(**kwargs)
    tasks = list(scan.plan_files())
    result = scan.to_arrow()
    q = {
        "name": name,
        "sql": to_sql(columns, filt, sql_types(snapshot_schema(tbl, snapshot_id))),
        "columns": columns,
        "filter": filt,
    }
    if snapshot_id is not None:
        q["snapshot_id"] = snapshot_id
        q["sql_note"] = "time travel: run the SQL against the table as of snapshot_id"
    if note:
        q["note"] = note
    q.update({
        "rows": arrow_rows(result, columns),
        "row_count": result.num_rows,
        "files_selected": len(tasks),
        "files": sorted(rel(t.file.file_path, location) for t in tasks),
        "delete_files": sorted({rel(d.file_path, location) for t in tasks for d in t.delete_files}),
        "computed_by": "pyiceberg: table.scan(row_filter, selected_fields).to_arrow(); files from plan_files()",
    })
    full = tbl.scan(**{k: v for k, v in kwargs.items() if k != "row_filter"}).to_arrow()
    check_sql(full, q)
    return q


def iceberg_rust_check(metadata_location: str, queries: list[dict]) -> None:
    """Independent reader: iceberg-rust (pyiceberg-core) as a DataFusion table provider runs each
    query's SQL text; its rows must equal the expected rows.  Needs file:// paths in the
    metadata (iceberg-rust rejects scheme-less paths), so it is used on deletes and v1 only."""
    import datafusion
    import pyiceberg_core
    from datafusion import SessionContext
    from pyiceberg_core.datafusion import IcebergDataFusionTable

    from importlib.metadata import version
    ctx = SessionContext()
    ctx.register_table("t", IcebergDataFusionTable(identifier=["fx", "t"], metadata_location=metadata_location,
                                                   file_io_properties={}))
    who = (f"iceberg-rust via pyiceberg-core {version('pyiceberg-core')} as a table provider in "
           f"DataFusion {datafusion.__version__} (python): same rows for the SQL text")
    del pyiceberg_core
    for q in queries:
        if "snapshot_id" in q:
            continue
        got = arrow_rows(ctx.sql(q["sql"]).to_arrow_table(), q["columns"])
        assert got == q["rows"], ("iceberg-rust disagrees", q["name"], got, q["rows"])
        q["cross_checked_by"] = who


def partition_json(spec: PartitionSpec, partition: Record) -> dict:
    return {f.name: json_value(partition[i]) for i, f in enumerate(spec.fields)}


def describe_table(tbl, location: str, all_entries: bool = False) -> dict:
    """Specs, schemas, snapshots with their manifests; the entries of every manifest of the
    current snapshot (of every snapshot when all_entries)."""
    md = tbl.metadata
    io = tbl.io
    specs = {s.spec_id: s for s in md.partition_specs}
    out = {
        "format_version": md.format_version,
        "location": md.location,
        "current_schema_id": md.current_schema_id,
        "schemas": [{"schema_id": s.schema_id, "fields": schema_json(s)} for s in md.schemas],
        "default_spec_id": md.default_spec_id,
        "partition_specs": [
            {"spec_id": s.spec_id,
             "fields": [{"field_id": f.field_id, "source_id": f.source_id, "name": f.name,
                         "transform": str(f.transform)} for f in s.fields]}
            for s in md.partition_specs],
        "properties": dict(md.properties),
        "current_snapshot_id": md.current_snapshot_id,
        "snapshots": [],
    }
    for snap in md.snapshots:
        s = {
            "snapshot_id": snap.snapshot_id,
            "parent_snapshot_id": snap.parent_snapshot_id,
            "sequence_number": snap.sequence_number,
            "operation": snap.summary.operation.value if snap.summary else None,
            "manifest_list": rel(snap.manifest_list, location),
            "manifests": [],
        }
        for m in snap.manifests(io):
            entries = []
            with_entries = all_entries or snap.snapshot_id == md.current_snapshot_id
            for e in (m.fetch_manifest_entry(io, discard_deleted=False) if with_entries else []):
                df = e.data_file
                ent = {
                    "status": e.status.name,
                    "snapshot_id": e.snapshot_id,
                    "sequence_number": e.sequence_number,
                    "file_sequence_number": e.file_sequence_number,
                    "content": DataFileContent(df.content).name,
                    "file_path": rel(df.file_path, location),
                    "partition": partition_json(specs[m.partition_spec_id], df.partition),
                    "record_count": df.record_count,
                }
                if df.content == DataFileContent.EQUALITY_DELETES:
                    ent["equality_ids"] = list(df.equality_ids)
                if df.content == DataFileContent.POSITION_DELETES and md.format_version >= 2:
                    ref = referenced_data_file(df)
                    ent["referenced_data_file"] = rel(ref, location) if ref else None
                entries.append(ent)
            s["manifests"].append({
                "path": rel(m.manifest_path, location),
                "content": ManifestContent(m.content).name,
                "partition_spec_id": m.partition_spec_id,
                "sequence_number": m.sequence_number,
                "min_sequence_number": m.min_sequence_number,
                "added_snapshot_id": m.added_snapshot_id,
                **({"entries": entries} if with_entries else {}),
            })
        out["snapshots"].append(s)
    return out


def metadata_files(table_dir: str) -> list[str]:
    return sorted(os.path.relpath(p, table_dir) for p in glob.glob(f"{table_dir}/metadata/*"))


def finish_table(tbl, name: str, location: str, queries: list[dict], extra: dict | None = None,
                 bad: bool = False, description: dict | None = None) -> None:
    """Copy the table into tests/data and write its expected-answers file."""
    local = local_path(location)
    sub = "iceberg_bad" if bad else "iceberg"
    dst = os.path.join(HERE, sub, name)
    copy_table(local, dst)
    doc = {
        "format": "iceberg",
        "table": f"{sub}/{name}",
        "original_location": location,
        "metadata_file": rel(tbl.metadata_location, location),
        "metadata_files": metadata_files(dst),
        "generated_by": GENERATOR,
        "note": "paths in 'files'/'delete_files'/manifests are relative to the table location; "
                "the metadata itself contains absolute paths under original_location",
        "schema": schema_json(tbl.schema()),
        "table_metadata": description or describe_table(tbl, location),
    }
    if extra:
        doc.update(extra)
    doc["queries"] = queries
    write_json(os.path.join(HERE, "expected", sub, f"{name}.json"), doc)


def arrow_schema(fields: list[tuple[str, pa.DataType, bool]]) -> pa.Schema:
    return pa.schema([pa.field(n, t, nullable=nullable) for n, t, nullable in fields])


# ============================================================================================
# iceberg/evolved
# ============================================================================================

def make_evolved(cat: SqlCatalog) -> None:
    location = f"{ICE_ROOT}/evolved"
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False),
        NestedField(4, "d", DateType(), required=False),
        NestedField(5, "amount", DecimalType(9, 2), required=False),
    )
    spec0 = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=MonthTransform(), name="ts_month"))
    tbl = cat.create_table("fx.evolved", schema=schema, location=location, partition_spec=spec0,
                           properties={"format-version": "2", **PRUNE_OLD_METADATA})
    snaps = {}

    # --- spec 0: month(ts); column still called "name" -------------------------------------
    a_schema = arrow_schema([("id", pa.int64(), False), ("name", pa.string(), True),
                             ("ts", pa.timestamp("us"), True), ("d", pa.date32(), True),
                             ("amount", pa.decimal128(9, 2), True)])
    batch_a = pa.Table.from_pylist([
        {"id": 1, "name": "alpha", "ts": T(2024, 1, 1, 10, 0, 0), "d": D(2024, 1, 1), "amount": Dec("10.50")},
        {"id": 2, "name": "alphabet", "ts": T(2024, 1, 15), "d": D(2024, 1, 15), "amount": Dec("20.00")},
        {"id": 3, "name": "beta", "ts": T(2024, 2, 1), "d": D(2024, 2, 1), "amount": Dec("-3.75")},
        {"id": 4, "name": "before-epoch", "ts": T(1969, 12, 31, 23, 59, 59), "d": D(1969, 12, 31), "amount": Dec("-1.25")},
        {"id": 5, "name": "sixties", "ts": T(1960, 5, 5, 12, 0, 0), "d": D(1960, 5, 5), "amount": Dec("0.01")},
        {"id": 6, "name": "no-ts", "ts": None, "d": None, "amount": None},
        {"id": 7, "name": None, "ts": T(2024, 1, 20, 8, 30, 0), "d": D(2024, 1, 20), "amount": Dec("7.00")},
    ], schema=a_schema)
    tbl.append(batch_a)
    snaps["append_spec0"] = tbl.current_snapshot().snapshot_id

    # --- rename name -> label (old files keep "name" in Parquet, same field id 2) ---------
    with tbl.update_schema() as u:
        u.rename_column("name", "label")

    # --- spec 1: day(ts), year(d) -----------------------------------------------------------
    with tbl.update_spec() as u:
        u.remove_field("ts_month")
        u.add_field("ts", DayTransform(), "ts_day")
        u.add_field("d", YearTransform(), "d_year")
    b_schema = arrow_schema([("id", pa.int64(), False), ("label", pa.string(), True),
                             ("ts", pa.timestamp("us"), True), ("d", pa.date32(), True),
                             ("amount", pa.decimal128(9, 2), True)])
    batch_b = pa.Table.from_pylist([
        {"id": 10, "label": "gamma", "ts": T(2024, 1, 2, 0, 0, 0), "d": D(2024, 1, 2), "amount": Dec("100.00")},
        {"id": 11, "label": "gamut", "ts": T(2024, 1, 2, 23, 59, 59, 999999), "d": D(2024, 1, 2), "amount": Dec("5.00")},
        {"id": 12, "label": "delta", "ts": T(1969, 12, 31, 0, 0, 0), "d": D(1969, 1, 1), "amount": Dec("5.01")},
        {"id": 13, "label": "epsilon", "ts": T(1970, 1, 1, 0, 0, 0), "d": D(1970, 1, 1), "amount": Dec("0.00")},
        {"id": 14, "label": None, "ts": None, "d": D(1959, 12, 31), "amount": Dec("-0.01")},
    ], schema=b_schema)
    tbl.append(batch_b)
    snaps["append_spec1"] = tbl.current_snapshot().snapshot_id

    # --- add a column (older files do not have it) ---------------------------------------
    with tbl.update_schema() as u:
        u.add_column("note", StringType())

    # --- spec 2: day(ts), year(d), bucket(4, id), truncate(3, label) ----------------------
    with tbl.update_spec() as u:
        u.add_field("id", BucketTransform(4), "id_bucket")
        u.add_field("label", TruncateTransform(3), "label_trunc")
    c_schema = arrow_schema([("id", pa.int64(), False), ("label", pa.string(), True),
                             ("ts", pa.timestamp("us"), True), ("d", pa.date32(), True),
                             ("amount", pa.decimal128(9, 2), True), ("note", pa.string(), True)])
    batch_c = pa.Table.from_pylist([
        {"id": 20, "label": "alpha2", "ts": T(2024, 1, 3, 12, 0, 0), "d": D(2024, 1, 3), "amount": Dec("1.00"), "note": "spec2"},
        {"id": 21, "label": "alpaca", "ts": T(2024, 1, 3, 13, 0, 0), "d": D(2024, 1, 3), "amount": Dec("2.00"), "note": "spec2"},
        {"id": 22, "label": "zeta", "ts": T(1969, 12, 31, 23, 59, 59, 500000), "d": D(1969, 12, 31), "amount": Dec("3.00"), "note": None},
        {"id": 23, "label": None, "ts": T(2024, 3, 1), "d": D(2024, 3, 1), "amount": Dec("4.00"), "note": "null label"},
        {"id": 24, "label": "日本語ラベル", "ts": T(2024, 3, 1, 1, 0, 0), "d": D(2024, 3, 1), "amount": Dec("99.99"), "note": "unicode"},
    ], schema=c_schema)
    tbl.append(batch_c)
    snaps["append_spec2"] = tbl.current_snapshot().snapshot_id

    # --- copy-on-write delete through pyiceberg: rewrites the 2024-01 file of spec 0 -------
    tbl.delete(EqualTo("id", 2))
    snaps["cow_delete_id_2"] = tbl.current_snapshot().snapshot_id

    cols = ["id", "label", "ts", "d", "amount", "note"]
    Q = lambda name, filt, **kw: iceberg_query(tbl, location, name, cols, filt, **kw)  # noqa: E731
    queries = [
        Q("all_rows", []),
        Q("ts_ge_2024_01_02", [{"column": "ts", "op": ">=", "value": "2024-01-02T00:00:00"}]),
        Q("ts_before_epoch", [{"column": "ts", "op": "<", "value": "1970-01-01T00:00:00"}]),
        Q("ts_last_day_before_epoch", [{"column": "ts", "op": ">=", "value": "1969-12-31T00:00:00"},
                                       {"column": "ts", "op": "<", "value": "1970-01-01T00:00:00"}]),
        Q("ts_eq_last_second_before_epoch", [{"column": "ts", "op": "=", "value": "1969-12-31T23:59:59"}]),
        Q("ts_day_2024_01_02", [{"column": "ts", "op": ">=", "value": "2024-01-02T00:00:00"},
                                {"column": "ts", "op": "<", "value": "2024-01-03T00:00:00"}]),
        Q("ts_is_null", [{"column": "ts", "op": "is_null"}]),
        Q("d_eq_1960_05_05", [{"column": "d", "op": "=", "value": "1960-05-05"}]),
        Q("d_before_1970", [{"column": "d", "op": "<", "value": "1970-01-01"}]),
        Q("d_in_1969", [{"column": "d", "op": ">=", "value": "1969-01-01"},
                        {"column": "d", "op": "<=", "value": "1969-12-31"}]),
        Q("label_eq_alpha_renamed_column", [{"column": "label", "op": "=", "value": "alpha"}]),
        Q("label_starts_with_alp", [{"column": "label", "op": "starts_with", "value": "alp"}]),
        Q("label_is_null", [{"column": "label", "op": "is_null"}]),
        Q("label_unicode", [{"column": "label", "op": "=", "value": "日本語ラベル"}]),
        Q("id_eq_21_bucket", [{"column": "id", "op": "=", "value": 21}]),
        Q("id_in_list", [{"column": "id", "op": "in", "value": [1, 2, 12, 22]}]),
        Q("amount_gt_5", [{"column": "amount", "op": ">", "value": "5.00"}]),
        Q("note_is_not_null_added_column", [{"column": "note", "op": "is_not_null"}]),
        Q("all_rows_before_cow_delete", [], snapshot_id=snaps["append_spec2"]),
        iceberg_query(tbl, location, "all_rows_at_first_snapshot", ["id", "name", "ts", "d", "amount"], [],
                      snapshot_id=snaps["append_spec0"],
                      note="pyiceberg time travel uses the SNAPSHOT's schema (schema-id 0: column 'name', "
                           "no 'note'), like Java"),
    ]
    finish_table(tbl, "evolved", location, queries, extra={"snapshots_by_step": snaps})


# ============================================================================================
# iceberg/deletes : merge-on-read position and equality deletes, crafted by hand
# ============================================================================================

# The position delete writing is shared with tests/interop/duckdb_known_bugs.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from pyiceberg_deletes import commit_row_delta, write_position_delete_file  # noqa: E402


def write_equality_delete_file(path: str, schema: Schema, eq_columns: list[str], rows: list[dict],
                               partition: Record) -> DataFile:
    fields = [schema.find_field(c) for c in eq_columns]
    arrow_fields = []
    for f in fields:
        at = {LongType(): pa.int64(), StringType(): pa.string(), IntegerType(): pa.int32()}[f.field_type]
        arrow_fields.append(pa.field(f.name, at, nullable=not f.required,
                                     metadata={"PARQUET:field_id": str(f.field_id)}))
    t = pa.Table.from_pylist(rows, schema=pa.schema(arrow_fields))
    os.makedirs(os.path.dirname(local_path(path)), exist_ok=True)
    pq.write_table(t, local_path(path))
    lower, upper, nulls, counts = {}, {}, {}, {}
    for f in fields:
        vals = [r[f.name] for r in rows]
        nn = [v for v in vals if v is not None]
        counts[f.field_id] = len(vals)
        nulls[f.field_id] = len(vals) - len(nn)
        if nn:
            lower[f.field_id] = to_bytes(f.field_type, min(nn))
            upper[f.field_id] = to_bytes(f.field_type, max(nn))
    return DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES,
        file_path=path, file_format=FileFormat.PARQUET, partition=partition,
        record_count=len(rows), file_size_in_bytes=os.path.getsize(local_path(path)),
        column_sizes=None, value_counts=counts, null_value_counts=nulls, nan_value_counts=None,
        lower_bounds=lower, upper_bounds=upper, key_metadata=None, split_offsets=None,
        equality_ids=[f.field_id for f in fields], sort_order_id=None,
    )


def referenced_data_file(df: DataFile) -> str | None:
    """referenced_data_file (field 143) exists only in pyiceberg's v3 data_file struct, so the
    v2 manifests written here never carry it: always None (kept for the rule's sake)."""
    names = [f.name for f in DATA_FILE_TYPE[2].fields]
    return df[names.index("referenced_data_file")] if "referenced_data_file" in names else None


def read_data_file_by_field_id(path: str, schema: Schema) -> pa.Table:
    """Read a Parquet data file and name its columns after the CURRENT schema, by field id."""
    t = pq.read_table(local_path(path))
    names = []
    for f in t.schema:
        fid = int(f.metadata[b"PARQUET:field_id"])
        names.append(schema.find_field(fid).name)
    return t.rename_columns(names)


def apply_deletes_by_hand(tbl, snapshot_id: int) -> tuple[pa.Table, list[dict]]:
    """Reference implementation of the v2 delete rules (spec 'Scan Planning'), used because
    pyiceberg refuses to read equality deletes.  Returns the live rows and, per data file,
    which delete files apply and which row positions they remove."""
    io = tbl.io
    schema = tbl.schema()
    snap = tbl.metadata.snapshot_by_id(snapshot_id)
    specs = tbl.metadata.specs()
    data, deletes = [], []
    for m in snap.manifests(io):
        for e in m.fetch_manifest_entry(io, discard_deleted=True):
            item = (m.partition_spec_id, e)
            (data if e.data_file.content == DataFileContent.DATA else deletes).append(item)
    pieces, report = [], []
    for spec_id, e in sorted(data, key=lambda x: x[1].data_file.file_path):
        df = e.data_file
        t = read_data_file_by_field_id(df.file_path, schema)
        keep = [True] * t.num_rows
        applied = []
        for d_spec, d in deletes:
            dfile = d.data_file
            same_partition = d_spec == spec_id and dfile.partition == df.partition
            if dfile.content == DataFileContent.POSITION_DELETES:
                if not (same_partition and d.sequence_number >= e.sequence_number):
                    continue
                if referenced_data_file(dfile) and referenced_data_file(dfile) != df.file_path:
                    continue
                pd = pq.read_table(local_path(dfile.file_path)).to_pylist()
                hit = [r["pos"] for r in pd if r["file_path"] == df.file_path]
                for p in hit:
                    keep[p] = False
                applied.append({"delete_file": dfile.file_path, "kind": "position", "positions": hit})
            else:
                global_delete = specs[d_spec].is_unpartitioned()
                if not ((same_partition or global_delete) and d.sequence_number > e.sequence_number):
                    continue
                eq_names = [schema.find_field(i).name for i in dfile.equality_ids]
                ed = read_data_file_by_field_id(dfile.file_path, schema).to_pylist()
                rows = t.select(eq_names).to_pylist()
                hit = []
                for i, r in enumerate(rows):
                    if any(all(r[c] == x[c] for c in eq_names) for x in ed):  # None == None: null-safe
                        if keep[i]:
                            hit.append(i)
                        keep[i] = False
                applied.append({"delete_file": dfile.file_path, "kind": "equality",
                                "equality_columns": eq_names, "positions": hit})
        pieces.append(t.filter(pa.array(keep)))
        report.append({"data_file": df.file_path, "data_sequence_number": e.sequence_number,
                       "partition": partition_json(specs[spec_id], df.partition),
                       "live_rows": sum(keep), "physical_rows": t.num_rows, "deletes_applied": applied})
    cols = [f.name for f in schema.fields]
    return pa.concat_tables([p.select(cols) for p in pieces]), report


def make_deletes(cat: SqlCatalog) -> None:
    location = f"file://{ICE_ROOT}/deletes"  # file:// URI location (like v1): iceberg-rust can read it
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType(), required=True),
        NestedField(3, "name", StringType(), required=False),
        NestedField(4, "val", IntegerType(), required=False),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
    tbl = cat.create_table("fx.deletes", schema=schema, location=location, partition_spec=spec,
                           properties={"format-version": "2", "write.delete.mode": "merge-on-read",
                                       **PRUNE_OLD_METADATA})
    asch = arrow_schema([("id", pa.int64(), False), ("cat", pa.string(), False),
                         ("name", pa.string(), True), ("val", pa.int32(), True)])
    snaps = {}

    # S1 (seq 1): data files A (cat=a, ids 1-5) and B (cat=b, ids 6-10)
    tbl.append(pa.Table.from_pylist([
        {"id": 1, "cat": "a", "name": None, "val": 10},
        {"id": 2, "cat": "a", "name": "n2", "val": 20},
        {"id": 3, "cat": "a", "name": "n9", "val": 30},   # same name as a b-row deleted by ED2: must survive
        {"id": 4, "cat": "a", "name": "n4", "val": 40},
        {"id": 5, "cat": "a", "name": "n5", "val": 50},
        {"id": 6, "cat": "b", "name": "n6", "val": 60},
        {"id": 7, "cat": "b", "name": "n7", "val": 70},
        {"id": 8, "cat": "b", "name": None, "val": 80},   # deleted by ED2's NULL row
        {"id": 9, "cat": "b", "name": "n9", "val": 90},
        {"id": 10, "cat": "b", "name": "n10", "val": 100},
    ], schema=asch))
    snaps["s1_append"] = tbl.current_snapshot().snapshot_id
    files = {t.file.partition[0]: t.file.file_path for t in tbl.scan().plan_files()}
    file_a, file_b = files["a"], files["b"]

    def pos_of(path: str, ids: list[int]) -> list[int]:
        got = pq.read_table(local_path(path), columns=["id"]).column("id").to_pylist()
        return [got.index(i) for i in ids]

    # S2 (seq 2): position deletes on A (ids 2, 4)
    pd1 = write_position_delete_file(f"{location}/data/cat=a/00001-pos-deletes.parquet",
                                     [(file_a, p) for p in pos_of(file_a, [2, 4])], Record("a"))
    snaps["s2_pos_delete"] = commit_row_delta(tbl, Operation.DELETE, delete_files=[pd1])

    # S3 (seq 3): equality deletes, partition a on id {5, 11}; partition b on name {'n9', NULL}
    ed1 = write_equality_delete_file(f"{location}/data/cat=a/00002-eq-deletes-id.parquet", schema, ["id"],
                                     [{"id": 5}, {"id": 11}], Record("a"))
    ed2 = write_equality_delete_file(f"{location}/data/cat=b/00003-eq-deletes-name.parquet", schema, ["name"],
                                     [{"name": "n9"}, {"name": None}], Record("b"))
    snaps["s3_eq_delete"] = commit_row_delta(tbl, Operation.DELETE, delete_files=[ed1, ed2])

    # S4 (seq 4): data file C (cat=a, ids 11-13): ED1 (seq 3) must NOT delete id 11
    tbl.append(pa.Table.from_pylist([
        {"id": 11, "cat": "a", "name": "n11", "val": 110},
        {"id": 12, "cat": "a", "name": None, "val": 120},
        {"id": 13, "cat": "a", "name": "n9", "val": 130},
    ], schema=asch))
    snaps["s4_append"] = tbl.current_snapshot().snapshot_id

    # S5 (seq 5): one commit adding data file D (cat=b, ids 20-22), a position delete on D
    # (same sequence number: applies) and an equality delete on id {20, 6} (applies to B,
    # not to D, whose sequence number is equal).
    new_d = pa.Table.from_pylist([
        {"id": 20, "cat": "b", "name": "n20", "val": 200},
        {"id": 21, "cat": "b", "name": "n21", "val": 210},
        {"id": 22, "cat": "b", "name": None, "val": 220},
    ], schema=asch)
    data_files = list(_dataframe_to_data_files(tbl.metadata, new_d, tbl.io))
    assert len(data_files) == 1
    file_d = data_files[0].file_path
    pd2 = write_position_delete_file(f"{location}/data/cat=b/00004-pos-deletes.parquet",
                                     [(file_d, p) for p in pos_of(file_d, [21])], Record("b"))
    ed3 = write_equality_delete_file(f"{location}/data/cat=b/00005-eq-deletes-id.parquet", schema, ["id"],
                                     [{"id": 20}, {"id": 6}], Record("b"))
    snaps["s5_row_delta"] = commit_row_delta(tbl, Operation.OVERWRITE, data_files=data_files,
                                             delete_files=[pd2, ed3])

    # ---- expected answers ------------------------------------------------------------------
    cols = ["id", "cat", "name", "val"]
    types = sql_types(schema)
    queries = []
    # pyiceberg can read S1 and S2 (position deletes only): check the hand rules against it.
    for key in ("s1_append", "s2_pos_delete"):
        q = iceberg_query(tbl, location, f"all_rows_at_{key}", cols, [], snapshot_id=snaps[key])
        hand, _ = apply_deletes_by_hand(tbl, snaps[key])
        assert arrow_rows(hand, cols) == q["rows"], (key, arrow_rows(hand, cols), q["rows"])
        queries.append(q)
    # From S3 on pyiceberg raises "PyIceberg does not yet support equality deletes".
    try:
        tbl.scan(snapshot_id=snaps["s3_eq_delete"]).to_arrow()
        raise AssertionError("pyiceberg unexpectedly read equality deletes; use it instead of the hand rules")
    except ValueError as e:
        assert "equality deletes" in str(e), e
    reports = {}
    expected_ids = {
        "s3_eq_delete": [1, 3, 6, 7, 10],
        "s4_append": [1, 3, 6, 7, 10, 11, 12, 13],
        "s5_row_delta": [1, 3, 7, 10, 11, 12, 13, 20, 22],
    }
    current = snaps["s5_row_delta"]
    for key in ("s3_eq_delete", "s4_append", "s5_row_delta"):
        hand, report = apply_deletes_by_hand(tbl, snaps[key])
        rows = arrow_rows(hand, cols)
        assert [r[0] for r in rows] == expected_ids[key], (key, rows)
        reports[key] = [{**r, "data_file": rel(r["data_file"], location),
                         "deletes_applied": [{**a, "delete_file": rel(a["delete_file"], location)}
                                             for a in r["deletes_applied"]]} for r in report]
        live_files = [r for r in report]
        q = {"name": f"all_rows_at_{key}", "sql": to_sql(cols, [], types), "columns": cols, "filter": [],
             "snapshot_id": snaps[key],
             "sql_note": "time travel: run the SQL against the table as of snapshot_id",
             "rows": rows, "row_count": len(rows),
             "files_selected": len(live_files),
             "files": sorted(rel(r["data_file"], location) for r in live_files),
             "delete_files": sorted({rel(a["delete_file"], location) for r in live_files for a in r["deletes_applied"]}),
             "computed_by": "script: apply_deletes_by_hand() (Iceberg v2 scan-planning rules); "
                            "pyiceberg raises on equality deletes"}
        if key == "s5_row_delta":
            q["name"] = "all_rows"
            del q["snapshot_id"], q["sql_note"]
        check_sql(hand, q)
        queries.append(q)

    # Filtered queries on the current snapshot (hand computed; files = those whose partition
    # and id bounds can match, which is what a partition/metrics pruner selects).
    hand, report = apply_deletes_by_hand(tbl, current)
    for name, filt, mask, file_ok in [
        ("cat_eq_b", [{"column": "cat", "op": "=", "value": "b"}],
         pc.equal(hand["cat"], "b"), lambda r, lo, hi: r["partition"]["cat"] == "b"),
        ("id_ge_10", [{"column": "id", "op": ">=", "value": 10}],
         pc.greater_equal(hand["id"], 10), lambda r, lo, hi: hi >= 10),
        ("name_is_null", [{"column": "name", "op": "is_null"}],
         pc.is_null(hand["name"]), lambda r, lo, hi: True),
        ("cat_a_id_le_5", [{"column": "cat", "op": "=", "value": "a"}, {"column": "id", "op": "<=", "value": 5}],
         pc.and_(pc.equal(hand["cat"], "a"), pc.less_equal(hand["id"], 5)),
         lambda r, lo, hi: r["partition"]["cat"] == "a" and lo <= 5),
    ]:
        sel = hand.filter(mask)
        chosen = []
        for r in report:
            ids = pq.read_table(local_path(r["data_file"]), columns=["id"]).column("id")
            lo, hi = pc.min(ids).as_py(), pc.max(ids).as_py()
            if file_ok(r, lo, hi):
                chosen.append(r)
        q = {
            "name": name, "sql": to_sql(cols, filt, types), "columns": cols, "filter": filt,
            "rows": arrow_rows(sel, cols), "row_count": sel.num_rows,
            "files_selected": len(chosen),
            "files": sorted(rel(r["data_file"], location) for r in chosen),
            "delete_files": sorted({rel(a["delete_file"], location) for r in chosen for a in r["deletes_applied"]}),
            "computed_by": "script: apply_deletes_by_hand() then the filter; files = data files whose "
                           "partition value and id min/max can match",
        }
        check_sql(hand, q)
        queries.append(q)
    iceberg_rust_check(tbl.metadata_location, queries)
    finish_table(tbl, "deletes", location, queries, description=describe_table(tbl, location, all_entries=True),
                 extra={"snapshots_by_step": snaps, "delete_application": reports})


# ============================================================================================
# iceberg/dv : format v3, deletion vectors (Puffin), crafted by hand
# ============================================================================================
#
# pyiceberg 0.12 reads v3 tables and deletion vectors but refuses to write v3 metadata
# (TableMetadataV3.model_dump_json raises, write_manifest / write_manifest_list know v1/v2
# only) and never writes delete files.  pyiceberg_writes_v3() lets its own catalog, snapshot
# producers and Avro writers write v3 for the duration of make_dv(): v3 manifests (data_file
# fields 142-145), v3 manifest lists (first_row_id, key-value `first-row-id`), table
# `next-row-id` and snapshot `first-row-id` / `added-rows` assigned as Java does (a data
# manifest without first_row_id gets the next row id, advanced by its added + existing rows;
# delete manifests get none).  Every patch is undone on exit and only acts on v3 tables.

import contextlib  # noqa: E402
import struct  # noqa: E402
import zlib  # noqa: E402

from pyiceberg.avro.codecs import AVRO_CODEC_KEY  # noqa: E402
from pyiceberg.avro.file import AvroFile, AvroOutputFile  # noqa: E402
from pyiceberg.manifest import (  # noqa: E402
    MANIFEST_ENTRY_SCHEMAS,
    MANIFEST_LIST_FILE_SCHEMAS,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestListWriter,
    ManifestListWriterV2,
    ManifestWriterV2,
    PartitionFieldSummary,
    _inherit_from_manifest,
)
from pyiceberg.table.deletion_vector import DeletionVector, _extract_vector_payload  # noqa: E402
from pyiceberg.table.update.snapshot import _FastAppendFiles  # noqa: E402

DV_SEED = 0xD7_0003  # make_dv draws its uuids from its own stream: the other tables' uuids do not move
PUFFIN_MAGIC = b"PFA1"
DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])
ROW_POSITION_FIELD_ID = 2147483645  # _pos
V2_DATA_FILE_NAMES = [f.name for f in DATA_FILE_TYPE[2].fields]
V3_DATA_FILE_NAMES = [f.name for f in DATA_FILE_TYPE[3].fields]
V2_MANIFEST_FILE_NAMES = [f.name for f in MANIFEST_LIST_FILE_SCHEMAS[2].fields]


def v3_field(record: Record, name: str):
    """A field of a v3-shaped data_file record (DataFile has properties for the v2 fields only)."""
    return record[V3_DATA_FILE_NAMES.index(name)]


def data_file_as_v3(df: DataFile) -> DataFile:
    """pyiceberg builds and reads DataFile records with the v2 struct; widen one to v3."""
    if len(df) == len(V3_DATA_FILE_NAMES):
        return df
    assert len(df) == len(V2_DATA_FILE_NAMES), df
    wide = DataFile.from_args(_table_format_version=3, **{n: df[i] for i, n in enumerate(V2_DATA_FILE_NAMES)})
    if "_spec_id" in df.__dict__:
        wide.spec_id = df.spec_id
    return wide


class ManifestWriterV3(ManifestWriterV2):
    @property
    def version(self):
        return 3

    def new_writer(self):
        return AvroOutputFile[ManifestEntry](
            output_file=self._output_file, file_schema=self._with_partition(3),
            record_schema=self._with_partition(3), schema_name="manifest_entry", metadata=self._meta)

    def prepare_entry(self, entry: ManifestEntry) -> ManifestEntry:
        entry = super().prepare_entry(entry)
        return ManifestEntry.from_args(
            _table_format_version=3, status=entry.status, snapshot_id=entry.snapshot_id,
            sequence_number=entry.sequence_number, file_sequence_number=entry.file_sequence_number,
            data_file=data_file_as_v3(entry.data_file))


class DeleteManifestWriterV3(ManifestWriterV3):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class ManifestListWriterV3(ManifestListWriterV2):
    """v2 rules for sequence numbers, plus first_row_id for data manifests (Java's V3Writer)."""

    def __init__(self, output_file, snapshot_id, parent_snapshot_id, sequence_number, compression,
                 first_row_id: int, known_first_row_ids: dict[str, int]):
        ManifestListWriter.__init__(self, format_version=3, output_file=output_file, meta={
            "snapshot-id": str(snapshot_id),
            "parent-snapshot-id": str(parent_snapshot_id) if parent_snapshot_id is not None else "null",
            "sequence-number": str(sequence_number),
            "first-row-id": str(first_row_id),
            "format-version": "3",
            AVRO_CODEC_KEY: compression,
        })
        self._commit_snapshot_id = snapshot_id
        self._sequence_number = sequence_number
        self.next_row_id = first_row_id
        self._known = known_first_row_ids  # manifest path -> first_row_id (pyiceberg reads lists as v2)

    def __enter__(self):
        self._writer = AvroOutputFile[ManifestFile](
            output_file=self._output_file, record_schema=MANIFEST_LIST_FILE_SCHEMAS[3],
            file_schema=MANIFEST_LIST_FILE_SCHEMAS[3], schema_name="manifest_file", metadata=self._meta)
        self._writer.__enter__()
        return self

    def prepare_manifest(self, manifest_file: ManifestFile) -> ManifestFile:
        m = super().prepare_manifest(manifest_file)
        first_row_id = None
        if m.content == ManifestContent.DATA:
            if m.manifest_path in self._known:
                first_row_id = self._known[m.manifest_path]
            else:
                assert m.added_snapshot_id == self._commit_snapshot_id, m.manifest_path
                first_row_id = self.next_row_id
                self.next_row_id += m.added_rows_count + m.existing_rows_count
                self._known[m.manifest_path] = first_row_id
        return ManifestFile.from_args(_table_format_version=3, first_row_id=first_row_id,
                                      **{n: m[i] for i, n in enumerate(V2_MANIFEST_FILE_NAMES)})


@contextlib.contextmanager
def pyiceberg_writes_v3():
    import pyiceberg.catalog.sql as sql_module
    import pyiceberg.table.update.snapshot as snapshot_module
    from pyiceberg.table.metadata import TableMetadataV3
    from pyiceberg.table.update import AddSnapshotUpdate
    from pyiceberg.typedef import IcebergBaseModel

    producer = snapshot_module._SnapshotProducer
    saved = (sql_module.new_table_metadata, snapshot_module.write_manifest, snapshot_module.write_manifest_list,
             producer._commit, TableMetadataV3.model_dump_json)
    orig_new_md, orig_write_manifest, orig_write_list, orig_commit, _ = saved
    known_first_row_ids: dict[str, int] = {}
    state: dict = {}

    def new_table_metadata(*args, **kwargs):
        md = orig_new_md(*args, **kwargs)
        return md.model_copy(update={"next_row_id": 0}) if md.format_version >= 3 else md

    def write_manifest(format_version, spec, schema, output_file, snapshot_id, avro_compression):
        if format_version == 3:
            return ManifestWriterV3(spec, schema, output_file, snapshot_id, avro_compression)
        return orig_write_manifest(format_version, spec, schema, output_file, snapshot_id, avro_compression)

    def write_manifest_list(format_version, output_file, snapshot_id, parent_snapshot_id, sequence_number,
                            avro_compression):
        if format_version == 3:
            state["writer"] = ManifestListWriterV3(output_file, snapshot_id, parent_snapshot_id, sequence_number,
                                                   avro_compression, state["next_row_id"], known_first_row_ids)
            return state["writer"]
        return orig_write_list(format_version, output_file, snapshot_id, parent_snapshot_id, sequence_number,
                               avro_compression)

    def commit(self):
        md = self._transaction.table_metadata
        if md.format_version < 3:
            return orig_commit(self)
        state["next_row_id"] = md.next_row_id
        # The first row ids of manifests another writer listed (pyiceberg reads lists as v2).
        current = md.current_snapshot()
        if current is not None:
            for m in read_manifest_list_v3(self._io, current.manifest_list):
                first = m[len(V2_MANIFEST_FILE_NAMES)]
                if first is not None:
                    known_first_row_ids.setdefault(m.manifest_path, first)
        updates, requirements = orig_commit(self)
        added_rows = state.pop("writer").next_row_id - md.next_row_id
        updates = tuple(AddSnapshotUpdate(snapshot=u.snapshot.model_copy(update={"added_rows": added_rows}))
                        if isinstance(u, AddSnapshotUpdate) else u for u in updates)
        return updates, requirements

    def dump_v3(self, exclude_none=True, exclude=None, by_alias=True, **kwargs):
        return IcebergBaseModel.model_dump_json(self, exclude_none=exclude_none, exclude=exclude,
                                                by_alias=by_alias, **kwargs)

    sql_module.new_table_metadata = new_table_metadata
    snapshot_module.write_manifest = write_manifest
    snapshot_module.write_manifest_list = write_manifest_list
    producer._commit = commit
    TableMetadataV3.model_dump_json = dump_v3
    try:
        yield
    finally:
        (sql_module.new_table_metadata, snapshot_module.write_manifest, snapshot_module.write_manifest_list,
         producer._commit, TableMetadataV3.model_dump_json) = saved


def read_manifest_list_v3(io, manifest_list: str) -> list[ManifestFile]:
    with AvroFile[ManifestFile](io.new_input(manifest_list), MANIFEST_LIST_FILE_SCHEMAS[3],
                                read_types={-1: ManifestFile, 508: PartitionFieldSummary},
                                read_enums={517: ManifestContent}) as reader:
        return list(reader)


def read_manifest_entries_v3(io, manifest: ManifestFile, discard_deleted: bool = True) -> list[ManifestEntry]:
    """Like ManifestFile.fetch_manifest_entry, but keeps the v3 data_file fields (142-145)."""
    with AvroFile[ManifestEntry](io.new_input(manifest.manifest_path), MANIFEST_ENTRY_SCHEMAS[3],
                                 read_types={-1: ManifestEntry, 2: DataFile},
                                 read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent}) as reader:
        return [_inherit_from_manifest(e, manifest) for e in reader
                if not discard_deleted or e.status != ManifestEntryStatus.DELETED]


def dv_blob(positions: list[int]) -> bytes:
    """deletion-vector-v1 blob: u32 BE length of (magic + bitmap), magic D1 D3 39 64, 64-bit
    portable Roaring bitmap (u64 LE count; per 32-bit bitmap u32 LE key + portable 32-bit
    Roaring, run-optimized), CRC-32 of (magic + bitmap) as u32 BE."""
    from pyroaring import BitMap

    by_key: dict[int, list[int]] = {}
    for p in sorted(set(positions)):
        by_key.setdefault(p >> 32, []).append(p & 0xFFFFFFFF)
    body = struct.pack("<Q", len(by_key))
    for key in sorted(by_key):
        bm = BitMap(by_key[key])
        bm.run_optimize()
        body += struct.pack("<I", key) + bm.serialize()
    payload = DV_MAGIC + body
    return struct.pack(">I", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload))


def write_dv_puffin(path: str, dvs: list[tuple[str, list[int], Record]]) -> list[DataFile]:
    """One Puffin file holding one deletion vector per (data file path, positions, partition);
    returns one DataFile (a v3 delete manifest entry) per blob."""
    out = bytearray(PUFFIN_MAGIC)
    blobs = []
    for ref, positions, _ in dvs:
        blob = dv_blob(positions)
        blobs.append({"type": "deletion-vector-v1", "fields": [ROW_POSITION_FIELD_ID],
                      "snapshot-id": -1, "sequence-number": -1, "offset": len(out), "length": len(blob),
                      "properties": {"referenced-data-file": ref, "cardinality": str(len(set(positions)))}})
        out += blob
    footer = json.dumps({"blobs": blobs, "properties": {"created-by": "hidden-partitions tests/data/make_iceberg.py"}},
                        separators=(",", ":")).encode("utf-8")
    out += PUFFIN_MAGIC + footer + struct.pack("<i", len(footer)) + bytes(4) + PUFFIN_MAGIC
    os.makedirs(os.path.dirname(local_path(path)), exist_ok=True)
    with open(local_path(path), "wb") as f:
        f.write(out)
    files = []
    for (ref, positions, partition), b in zip(dvs, blobs):
        df = DataFile.from_args(
            _table_format_version=3, content=DataFileContent.POSITION_DELETES, file_path=path,
            file_format=FileFormat.PUFFIN, partition=partition, record_count=len(set(positions)),
            file_size_in_bytes=len(out), referenced_data_file=ref, content_offset=b["offset"],
            content_size_in_bytes=b["length"])
        df.spec_id = 0
        files.append(df)
    return files


def dv_key(df: DataFile) -> tuple[str, int]:
    return df.file_path, v3_field(df, "content_offset")


class DVRowDelta(_FastAppendFiles):
    """A fast append that also adds deletion vectors (in a new v3 DELETES manifest) and removes
    the DVs they replace the way Java does: the delete manifest holding a replaced DV is
    rewritten with that entry DELETED (and any others EXISTING)."""

    def __init__(self, operation, transaction, io, data_files=(), dvs=(), replaced=()):
        super().__init__(operation=operation, transaction=transaction, io=io)
        for f in data_files:
            self.append_data_file(f)
        self._dvs = list(dvs)
        self._replaced = {dv_key(d) for d in replaced}
        self._removed: list[DataFile] = []

    def _existing_manifests(self):
        out = []
        for m in super()._existing_manifests():
            if m.content == ManifestContent.DELETES and self._replaced:
                entries = read_manifest_entries_v3(self._io, m)
                hit = [e for e in entries if dv_key(e.data_file) in self._replaced]
                if hit:
                    with DeleteManifestWriterV3(self.spec(m.partition_spec_id), self.schema(),
                                                self.new_manifest_output(), self._snapshot_id,
                                                self._compression) as writer:
                        for e in entries:
                            (writer.delete if e in hit else writer.existing)(e)
                    out.append(writer.to_manifest_file())
                    self._removed += [e.data_file for e in hit]
                    continue
            out.append(m)
        return out

    def _manifests(self):
        manifests = super()._manifests()
        assert len(self._removed) == len(self._replaced), "a replaced DV is not live in the parent snapshot"
        if self._dvs:
            with DeleteManifestWriterV3(self._transaction.table_metadata.spec(), self.schema(),
                                        self.new_manifest_output(), self._snapshot_id, self._compression) as writer:
                for df in self._dvs:
                    writer.add(ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED, snapshot_id=self._snapshot_id,
                        sequence_number=None, file_sequence_number=None, data_file=df))
            manifests = [writer.to_manifest_file()] + manifests
        return manifests

    def _summary(self, snapshot_properties=None):
        added, deleted = self._added_data_files, self._deleted_data_files
        self._added_data_files = added + self._dvs
        self._deleted_data_files = set(self._removed)
        try:
            s = super()._summary(snapshot_properties or {})
        finally:
            self._added_data_files, self._deleted_data_files = added, deleted
        # Java counts DVs as added-dvs / removed-dvs, not as position delete files
        props = dict(s._additional_properties)
        for old, new in (("added-position-delete-files", "added-dvs"), ("removed-position-delete-files", "removed-dvs")):
            if old in props:
                props[new] = props.pop(old)
        return type(s)(operation=s.operation, **props)


def commit_dvs(tbl, operation, data_files=(), dvs=(), replaced=()) -> int:
    with tbl.transaction() as txn:
        with DVRowDelta(operation, txn, tbl.io, list(data_files), list(dvs), list(replaced)):
            pass
    return tbl.current_snapshot().snapshot_id


def dv_application(tbl, snapshot_id: int, location: str) -> list[dict]:
    """Per live data file of the snapshot: the live DV that references it (Puffin file, offset,
    length, positions decoded by pyiceberg's own DeletionVector) and the rows it leaves."""
    io = tbl.io
    snap = tbl.metadata.snapshot_by_id(snapshot_id)
    specs = tbl.metadata.specs()
    data, dvs = [], {}
    for m in snap.manifests(io):
        for e in read_manifest_entries_v3(io, m):
            df = e.data_file
            if df.content == DataFileContent.DATA:
                data.append((m.partition_spec_id, e))
            else:
                assert df.file_format == FileFormat.PUFFIN and df.content == DataFileContent.POSITION_DELETES
                ref = v3_field(df, "referenced_data_file")
                assert ref not in dvs, f"two live DVs for {ref}"
                dvs[ref] = e
    out = []
    for spec_id, e in sorted(data, key=lambda x: x[1].data_file.file_path):
        df = e.data_file
        ids = pq.read_table(local_path(df.file_path), columns=["id"]).column("id").to_pylist()
        item = {"data_file": rel(df.file_path, location), "data_sequence_number": e.sequence_number,
                "partition": partition_json(specs[spec_id], df.partition), "physical_rows": len(ids),
                "deletion_vector": None, "live_rows": len(ids)}
        d = dvs.pop(df.file_path, None)
        if d is not None:
            assert d.sequence_number >= e.sequence_number
            off, size = v3_field(d.data_file, "content_offset"), v3_field(d.data_file, "content_size_in_bytes")
            with open(local_path(d.data_file.file_path), "rb") as f:
                blob = f.read()[off:off + size]
            payload = blob[4:-4]
            assert int.from_bytes(blob[:4], "big") == len(payload) and blob[4:8] == DV_MAGIC
            assert int.from_bytes(blob[-4:], "big") == zlib.crc32(payload)
            positions = DeletionVector(df.file_path, DeletionVector._deserialize_bitmap(
                _extract_vector_payload(blob))).to_vector().to_pylist()
            assert len(positions) == d.data_file.record_count
            item["deletion_vector"] = {
                "puffin_file": rel(d.data_file.file_path, location), "content_offset": off,
                "content_size_in_bytes": size, "sequence_number": d.sequence_number,
                "cardinality": d.data_file.record_count, "positions": positions,
                "deleted_ids": [ids[p] for p in positions]}
            item["live_rows"] = len(ids) - len(positions)
        out.append(item)
    assert not dvs, f"DVs referencing no live data file: {list(dvs)}"
    return out


def describe_v3(tbl, location: str) -> dict:
    """describe_table() plus what pyiceberg's v2-shaped reading drops: next-row-id, snapshot
    first-row-id / added-rows, manifest first_row_id and the data_file fields 142-145."""
    out = describe_table(tbl, location, all_entries=True)
    io = tbl.io
    out["next_row_id"] = tbl.metadata.next_row_id
    for s, snap in zip(out["snapshots"], tbl.metadata.snapshots):
        s["first_row_id"], s["added_rows"] = snap.first_row_id, snap.added_rows
        s["summary"] = json.loads(snap.summary.model_dump_json()) if snap.summary else None
        for md, m in zip(s["manifests"], read_manifest_list_v3(io, snap.manifest_list)):
            assert md["path"] == rel(m.manifest_path, location)
            md["first_row_id"] = m[len(V2_MANIFEST_FILE_NAMES)]
            for ent, e in zip(md["entries"], read_manifest_entries_v3(io, m, discard_deleted=False), strict=True):
                df = e.data_file
                assert ent["file_path"] == rel(df.file_path, location)
                ent["file_format"] = df.file_format.name
                ent["first_row_id"] = v3_field(df, "first_row_id")
                ref = v3_field(df, "referenced_data_file")
                ent["referenced_data_file"] = rel(ref, location) if ref else None
                ent["content_offset"] = v3_field(df, "content_offset")
                ent["content_size_in_bytes"] = v3_field(df, "content_size_in_bytes")
                ent["file_size_in_bytes"] = df.file_size_in_bytes
    return out


def iceberg_rust_try(metadata_location: str, queries: list[dict]) -> str:
    """iceberg_rust_check() if iceberg-rust can read the table; otherwise what it says."""
    from importlib.metadata import version
    try:
        iceberg_rust_check(metadata_location, queries)
        return "agrees on every current-snapshot query (cross_checked_by)"
    except Exception as e:  # noqa: BLE001
        for q in queries:
            q.pop("cross_checked_by", None)
        return (f"no cross-check: iceberg-rust via pyiceberg-core {version('pyiceberg-core')} fails on this table "
                f"({type(e).__name__}: {' '.join(str(e).split())[:240]})")


def make_dv(cat: SqlCatalog) -> None:
    """iceberg/dv: format v3, identity(cat), deletes as deletion vectors in Puffin files.

    S1 append A (cat=a, ids 1-5), B (cat=b, ids 6-10); S2 DV on A (ids 2, 4) in
    data/00001-deletes.puffin; S3 append C (cat=a, ids 11-13), D (cat=c, ids 20-22); S4 one
    Puffin data/00002-deletes.puffin with two DVs: A's replacement (ids 2, 4, 5; the S2 DV's
    entry is rewritten DELETED) and D (id 21).  Partition b never has a DV; C (partition a)
    has none either.  Own uuid stream (DV_SEED): the other tables do not change."""
    saved = _RNG.getstate()
    _RNG.seed(DV_SEED)
    try:
        with pyiceberg_writes_v3():
            _make_dv(cat)
    finally:
        _RNG.setstate(saved)


def _make_dv(cat: SqlCatalog) -> None:
    location = f"file://{ICE_ROOT}/dv"
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType(), required=True),
        NestedField(3, "name", StringType(), required=False),
        NestedField(4, "val", IntegerType(), required=False),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
    tbl = cat.create_table("fx.dv", schema=schema, location=location, partition_spec=spec,
                           properties={"format-version": "3", "write.delete.mode": "merge-on-read",
                                       **PRUNE_OLD_METADATA})
    assert tbl.metadata.format_version == 3 and tbl.metadata.next_row_id == 0
    asch = arrow_schema([("id", pa.int64(), False), ("cat", pa.string(), False),
                         ("name", pa.string(), True), ("val", pa.int32(), True)])
    snaps = {}

    def row(i, c, name):
        return {"id": i, "cat": c, "name": name, "val": i * 10}

    def pos_of(path: str, ids: list[int]) -> list[int]:
        got = pq.read_table(local_path(path), columns=["id"]).column("id").to_pylist()
        return [got.index(i) for i in ids]

    def files_by_partition() -> dict[str, str]:
        return {t.file.partition[0]: t.file.file_path for t in tbl.scan().plan_files()}

    # S1 (seq 1): A (cat=a, ids 1-5), B (cat=b, ids 6-10)
    tbl.append(pa.Table.from_pylist([
        row(1, "a", None), row(2, "a", "n2"), row(3, "a", "n3"), row(4, "a", "n4"), row(5, "a", "n5"),
        row(6, "b", "n6"), row(7, "b", None), row(8, "b", "n8"), row(9, "b", "n9"), row(10, "b", "n10"),
    ], schema=asch))
    snaps["s1_append"] = tbl.current_snapshot().snapshot_id
    file_a, file_b = files_by_partition()["a"], files_by_partition()["b"]

    # S2 (seq 2): DV on A, ids 2 and 4
    dv1 = write_dv_puffin(f"{location}/data/00001-deletes.puffin",
                          [(file_a, pos_of(file_a, [2, 4]), Record("a"))])
    snaps["s2_dv"] = commit_dvs(tbl, Operation.DELETE, dvs=dv1)

    # S3 (seq 3): C (cat=a, ids 11-13; the DV of A must not touch it), D (cat=c, ids 20-22)
    tbl.append(pa.Table.from_pylist([
        row(11, "a", "n11"), row(12, "a", None), row(13, "a", "n13"),
        row(20, "c", "n20"), row(21, "c", "n21"), row(22, "c", None),
    ], schema=asch))
    snaps["s3_append"] = tbl.current_snapshot().snapshot_id
    file_d = files_by_partition()["c"]

    # S4 (seq 4): one Puffin file, two DVs: A's replacement (old positions + id 5) and D (id 21);
    # the S2 DV is removed (one DV per data file per snapshot)
    dv2 = write_dv_puffin(f"{location}/data/00002-deletes.puffin", [
        (file_a, pos_of(file_a, [2, 4, 5]), Record("a")),
        (file_d, pos_of(file_d, [21]), Record("c")),
    ])
    snaps["s4_dv"] = commit_dvs(tbl, Operation.DELETE, dvs=dv2, replaced=dv1)

    # ---- checks: pyiceberg applies the DVs ------------------------------------------------
    cols = ["id", "cat", "name", "val"]
    expected_ids = {
        "s1_append": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        "s2_dv": [1, 3, 5, 6, 7, 8, 9, 10],
        "s3_append": [1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 20, 21, 22],
        "s4_dv": [1, 3, 6, 7, 8, 9, 10, 11, 12, 13, 20, 22],
    }
    application = {}
    for key, ids in expected_ids.items():
        got = sorted(tbl.scan(snapshot_id=snaps[key]).to_arrow().column("id").to_pylist())
        assert got == ids, (key, got, ids)
        report = dv_application(tbl, snaps[key], location)
        assert sum(r["live_rows"] for r in report) == len(ids), (key, report)
        application[key] = report
    assert tbl.metadata.next_row_id == 16, tbl.metadata.next_row_id

    Q = lambda name, filt, columns=cols, **kw: iceberg_query(tbl, location, name, columns, filt, **kw)  # noqa: E731
    queries = [
        Q("all_rows", []),
        Q("all_rows_at_s1_append", [], snapshot_id=snaps["s1_append"]),
        Q("all_rows_at_s2_dv", [], snapshot_id=snaps["s2_dv"]),
        Q("all_rows_at_s3_append", [], snapshot_id=snaps["s3_append"]),
        Q("id_only_full_scan", [], columns=["id"],
          note="row count after deletion vectors (record_count in the manifests says 16)"),
        Q("cat_eq_a_with_dvs", [{"column": "cat", "op": "=", "value": "a"}]),
        Q("cat_eq_b_no_dv", [{"column": "cat", "op": "=", "value": "b"}]),
        Q("cat_eq_c_second_blob", [{"column": "cat", "op": "=", "value": "c"}]),
        Q("cat_eq_a_at_s3_append", [{"column": "cat", "op": "=", "value": "a"}], snapshot_id=snaps["s3_append"]),
        Q("id_in_deleted_ids", [{"column": "id", "op": "in", "value": [2, 4, 5, 21, 22]}]),
        Q("name_is_null", [{"column": "name", "op": "is_null"}]),
        Q("val_ge_50", [{"column": "val", "op": ">=", "value": 50}]),
    ]
    assert [r[0] for r in queries[0]["rows"]] == expected_ids["s4_dv"]
    finish_table(tbl, "dv", location, queries, description=describe_v3(tbl, location), extra={
        "iceberg_rust": iceberg_rust_try(tbl.metadata_location, queries),
        "snapshots_by_step": snaps,
        "dv_application": application,
        "how_written": (
            "pyiceberg 0.12 cannot write v3: its own catalog, snapshot producers and Avro writers were "
            "let write v3 metadata, manifests and manifest lists (make_iceberg.py pyiceberg_writes_v3); "
            "Puffin files and DV manifest entries are written by make_iceberg.py (write_dv_puffin, DVRowDelta)"),
    })


# ============================================================================================
# iceberg/v1 : format v1, identity(string) + year(ts), Hadoop-style vN.metadata.json + version-hint.text
# ============================================================================================

def to_hadoop_naming(table_dir: str) -> list[str]:
    """Rename NNNNN-<uuid>.metadata.json -> vN.metadata.json (N = NNNNN + 1), fix the
    metadata-log entries, and write metadata/version-hint.text with the last N."""
    md_dir = os.path.join(table_dir, "metadata")
    olds = sorted(f for f in os.listdir(md_dir) if f.endswith(".metadata.json"))
    mapping = {old: f"v{int(old.split('-')[0]) + 1}.metadata.json" for old in olds}
    for old, new in mapping.items():
        with open(os.path.join(md_dir, old), encoding="utf-8") as f:
            text = f.read()
        for o, n in mapping.items():
            text = text.replace(o, n)
        with open(os.path.join(md_dir, new), "w", encoding="utf-8") as f:
            f.write(text)
        os.remove(os.path.join(md_dir, old))
    last = max(int(n[1:].split(".")[0]) for n in mapping.values())
    with open(os.path.join(md_dir, "version-hint.text"), "w") as f:
        f.write(str(last))
    return [mapping[o] for o in olds]


def make_v1(cat: SqlCatalog) -> None:
    location = f"file://{ICE_ROOT}/v1"  # this table uses a file:// URI as its location
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "region", StringType(), required=False),
        NestedField(3, "ts", TimestamptzType(), required=False),
        NestedField(4, "score", DoubleType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"),
        PartitionField(source_id=3, field_id=1001, transform=YearTransform(), name="ts_year"),
    )
    tbl = cat.create_table("fx.v1", schema=schema, location=location, partition_spec=spec,
                           properties={"format-version": "1"})
    asch = arrow_schema([("id", pa.int64(), False), ("region", pa.string(), True),
                         ("ts", pa.timestamp("us", tz="UTC"), True), ("score", pa.float64(), True)])
    tbl.append(pa.Table.from_pylist([
        {"id": 1, "region": "us-east", "ts": T(2023, 6, 1, 12, 0, tzinfo=UTC), "score": 1.5},
        {"id": 2, "region": "us-east", "ts": T(2024, 2, 29, 0, 0, tzinfo=UTC), "score": 2.5},
        {"id": 3, "region": "eu west", "ts": T(2024, 12, 31, 23, 59, 59, tzinfo=UTC), "score": -0.5},
        {"id": 4, "region": "a/b=c%", "ts": T(1969, 7, 20, 20, 17, 40, tzinfo=UTC), "score": 0.0},
        {"id": 5, "region": None, "ts": T(2024, 1, 1, tzinfo=UTC), "score": None},
    ], schema=asch))
    s1 = tbl.current_snapshot().snapshot_id
    tbl.append(pa.Table.from_pylist([
        {"id": 6, "region": "us-east", "ts": T(2024, 5, 5, 5, 5, 5, tzinfo=UTC), "score": 6.25},
        {"id": 7, "region": "eu west", "ts": None, "score": 7.0},
    ], schema=asch))
    cols = ["id", "region", "ts", "score"]
    Q = lambda name, filt, **kw: iceberg_query(tbl, location, name, cols, filt, **kw)  # noqa: E731
    queries = [
        Q("all_rows", []),
        Q("region_us_east", [{"column": "region", "op": "=", "value": "us-east"}]),
        Q("region_with_slash_equals_percent", [{"column": "region", "op": "=", "value": "a/b=c%"}]),
        Q("region_is_null", [{"column": "region", "op": "is_null"}]),
        Q("ts_in_2024", [{"column": "ts", "op": ">=", "value": "2024-01-01T00:00:00+00:00"},
                         {"column": "ts", "op": "<", "value": "2025-01-01T00:00:00+00:00"}]),
        Q("ts_before_epoch", [{"column": "ts", "op": "<", "value": "1970-01-01T00:00:00+00:00"}]),
        Q("all_rows_first_snapshot", [], snapshot_id=s1),
    ]
    iceberg_rust_check(tbl.metadata_location, queries)
    local = local_path(location)
    # Describe while the pyiceberg names still exist, then rename to vN.metadata.json.
    doc_md_file = rel(tbl.metadata_location, location)
    copy_dst = os.path.join(HERE, "iceberg", "v1")
    finish_table(tbl, "v1", location, queries)
    new_names = to_hadoop_naming(copy_dst)
    to_hadoop_naming(local)
    # Check that the renamed table still loads (through version-hint.text) and reads the same.
    st = StaticTable.from_metadata(location)
    assert arrow_rows(st.scan().to_arrow(), cols) == queries[0]["rows"]
    path = os.path.join(HERE, "expected", "iceberg", "v1.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    doc["metadata_file"] = f"metadata/{new_names[-1]}"
    doc["metadata_files"] = metadata_files(copy_dst)
    doc["metadata_naming"] = (f"written by pyiceberg as {doc_md_file} etc., then renamed to Hadoop-style "
                              "vN.metadata.json (metadata-log entries rewritten) with metadata/version-hint.text")
    write_json(path, doc)


# ============================================================================================
# iceberg/no_field_ids : Parquet without field ids, added with add_files -> name mapping
# ============================================================================================

def make_no_field_ids(cat: SqlCatalog) -> None:
    location = f"{ICE_ROOT}/no_field_ids"
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "cat", StringType(), required=False),
        NestedField(4, "ts", TimestampType(), required=False),
    )
    spec = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=IdentityTransform(), name="cat"))
    tbl = cat.create_table("fx.no_field_ids", schema=schema, location=location, partition_spec=spec,
                           properties={"format-version": "2", **PRUNE_OLD_METADATA})
    os.makedirs(f"{location}/data/cat=x", exist_ok=True)
    os.makedirs(f"{location}/data/cat=y", exist_ok=True)
    # plain pyarrow files: no PARQUET:field_id anywhere
    f1 = f"{location}/data/cat=x/plain-1.parquet"
    pq.write_table(pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "name": ["one", "two", None],
        "cat": ["x", "x", "x"],
        "ts": pa.array([T(2024, 1, 1), T(1969, 12, 31, 23, 59, 59), None], pa.timestamp("us")),
    }), f1)
    # second file: different column order and no "name" column at all
    f2 = f"{location}/data/cat=y/plain-2.parquet"
    pq.write_table(pa.table({
        "ts": pa.array([T(2024, 6, 1), T(2024, 6, 2)], pa.timestamp("us")),
        "cat": ["y", "y"],
        "id": pa.array([10, 11], pa.int64()),
    }), f2)
    for f in (f1, f2):
        assert all(fl.metadata is None or b"PARQUET:field_id" not in fl.metadata for fl in pq.read_schema(f))
    tbl.add_files([f1, f2])
    mapping_after_add = tbl.metadata.properties.get("schema.name-mapping.default")
    assert mapping_after_add, "pyiceberg did not set schema.name-mapping.default"
    # rename after the files were added: the mapping must keep the old name as an alias
    with tbl.update_schema() as u:
        u.rename_column("name", "full_name")
    # and a normal pyiceberg append (this file has field ids)
    tbl.append(pa.Table.from_pylist([
        {"id": 20, "full_name": "twenty", "cat": "x", "ts": T(2024, 2, 2)},
    ], schema=arrow_schema([("id", pa.int64(), True), ("full_name", pa.string(), True),
                            ("cat", pa.string(), True), ("ts", pa.timestamp("us"), True)])))
    cols = ["id", "full_name", "cat", "ts"]
    Q = lambda name, filt, **kw: iceberg_query(tbl, location, name, cols, filt, **kw)  # noqa: E731
    queries = [
        Q("all_rows", []),
        Q("cat_y", [{"column": "cat", "op": "=", "value": "y"}]),
        Q("full_name_eq_two", [{"column": "full_name", "op": "=", "value": "two"}]),
        Q("full_name_is_null", [{"column": "full_name", "op": "is_null"}]),
        Q("ts_before_epoch", [{"column": "ts", "op": "<", "value": "1970-01-01T00:00:00"}]),
    ]
    finish_table(tbl, "no_field_ids", location, queries, extra={
        "name_mapping_after_add_files": json.loads(mapping_after_add),
        "name_mapping_current": json.loads(tbl.metadata.properties["schema.name-mapping.default"]),
    })


# ============================================================================================
# iceberg_bad/*
# ============================================================================================

def small_table(cat: SqlCatalog, name: str, location: str, spec: PartitionSpec, appends: int = 2):
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "cat", StringType(), required=False))
    tbl = cat.create_table(f"fx.{name}", schema=schema, location=location, partition_spec=spec,
                           properties={"format-version": "2"})
    asch = arrow_schema([("id", pa.int64(), False), ("cat", pa.string(), True)])
    tbl.append(pa.Table.from_pylist([{"id": i, "cat": c} for i, c in [(1, "a"), (2, "b"), (3, "a")]], schema=asch))
    if appends > 1:
        tbl.append(pa.Table.from_pylist([{"id": i, "cat": c} for i, c in [(4, "b"), (5, "c")]], schema=asch))
    return tbl


def make_bad(cat: SqlCatalog) -> None:
    # not_iceberg: a metadata file that is JSON but not Iceberg table metadata
    d = os.path.join(HERE, "iceberg_bad", "not_iceberg", "metadata")
    os.makedirs(d, exist_ok=True)
    write_json(os.path.join(d, "v1.metadata.json"),
               {"name": "left-pad", "version": "1.3.0", "description": "String left pad",
                "main": "index.js", "license": "WTFPL"})
    with open(os.path.join(d, "version-hint.text"), "w") as f:
        f.write("1")

    # missing_manifest: the manifest list of the current snapshot names a manifest that is gone
    location = f"{ICE_BAD_ROOT}/missing_manifest"
    tbl = small_table(cat, "missing_manifest", location,
                      PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat")))
    first_snapshot = tbl.metadata.snapshots[0]
    victim = first_snapshot.manifests(tbl.io)[0].manifest_path
    queries = [iceberg_query(tbl, location, "all_rows_before_manifest_removed", ["id", "cat"], [],
                             note="answer BEFORE the manifest was deleted; a reader must now fail with a "
                                  "clear 'file not found' error naming the manifest")]
    description = describe_table(tbl, location)
    os.remove(victim)
    finish_table(tbl, "missing_manifest", location, queries, bad=True, description=description,
                 extra={"missing_file": rel(victim, location)})

    # unknown_transform: partition field transform edited to "zorder" in the metadata JSON
    location = f"{ICE_BAD_ROOT}/unknown_transform"
    tbl = small_table(cat, "unknown_transform", location, PartitionSpec(
        PartitionField(2, 1000, IdentityTransform(), "cat"),
        PartitionField(1, 1001, BucketTransform(4), "id_bucket")), appends=1)
    queries = [iceberg_query(tbl, location, n, ["id", "cat"], f, note=(
        "computed BEFORE the transform was renamed to 'zorder'; the spec says an unknown transform "
        "is ignored for filtering (inclusive projection = true), so a reader that accepts the "
        "table must return these rows")) for n, f in [
        ("all_rows", []),
        ("cat_eq_a", [{"column": "cat", "op": "=", "value": "a"}]),
        ("id_eq_3", [{"column": "id", "op": "=", "value": 3}]),
    ]]
    for q in queries:  # pyiceberg's file selection relied on bucket[4]; not meaningful after the edit
        q.pop("files_selected"), q.pop("files"), q.pop("delete_files")
    md_path = tbl.metadata_location
    finish_table(tbl, "unknown_transform", location, queries, bad=True)
    dst_md = os.path.join(HERE, "iceberg_bad", "unknown_transform", rel(md_path, location))
    for p in (md_path, dst_md):
        with open(p, encoding="utf-8") as f:
            md = json.load(f)
        n = 0
        for s in md["partition-specs"]:
            for fld in s["fields"]:
                if fld["transform"] == "bucket[4]":
                    fld["transform"] = "zorder"
                    n += 1
        assert n == 1
        with open(p, "w", encoding="utf-8") as f:
            json.dump(md, f, indent=2)
    # what does pyiceberg do with it?
    try:
        st = StaticTable.from_metadata(md_path)
        res = st.scan().to_arrow().num_rows
        behaviour = f"pyiceberg {pyiceberg.__version__} loads it and scans {res} rows"
        try:
            st.scan(row_filter=EqualTo("id", 3)).to_arrow()
            behaviour += "; a filtered scan works too"
        except Exception as e:  # noqa: BLE001
            behaviour += f"; a filtered scan on id fails: {type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001
        behaviour = f"pyiceberg {pyiceberg.__version__} refuses it: {type(e).__name__}: {str(e)[:300]}"
    path = os.path.join(HERE, "expected", "iceberg_bad", "unknown_transform.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    doc["edit"] = ("in metadata_file, partition spec field 'id_bucket' (field-id 1001) had transform "
                   "'bucket[4]' replaced by 'zorder'. The Avro manifests still carry the original "
                   "partition-spec JSON in their key-value metadata and an int partition value.")
    doc["pyiceberg_behaviour"] = behaviour
    # table_metadata above was described before the edit; say so
    doc["table_metadata"]["partition_specs"][0]["fields"][1]["transform"] = "zorder"
    write_json(path, doc)


# ============================================================================================

def avro_manifest_facts() -> dict:
    """Avro schemas of one manifest list and one (data + delete) manifest, for the README."""
    import fastavro  # only here: the interop tests import this module without it

    base = os.path.join(HERE, "iceberg", "deletes", "metadata")
    facts = {}
    for p in sorted(glob.glob(f"{base}/*.avro")):
        with open(p, "rb") as f:
            r = fastavro.reader(f)
            kind = "manifest_list" if os.path.basename(p).startswith("snap-") else (
                "delete_manifest" if r.metadata.get("content") == "deletes" else "data_manifest")
            if kind not in facts:
                facts[kind] = {"file": os.path.basename(p), "metadata_keys": sorted(r.metadata),
                               "schema": r.writer_schema}
    return facts


def main(only: list[str] = ()) -> None:
    if only:  # e.g. `make_iceberg.py dv`: rewrite only these tables and their expected files
        assert set(only) <= {"dv"}, f"only dv can be regenerated alone, not {only}"
        for name in only:
            for p in (f"{ICE_ROOT}/{name}", os.path.join(HERE, "iceberg", name)):
                if os.path.exists(p):
                    shutil.rmtree(p)
            if os.path.exists(os.path.join(HERE, "expected", "iceberg", f"{name}.json")):
                os.remove(os.path.join(HERE, "expected", "iceberg", f"{name}.json"))
        cat = make_catalog()
        for name in only:
            {"dv": make_dv}[name](cat)
        print(f"iceberg fixtures written: {', '.join(only)}")
        return
    for p in (ICE_ROOT, ICE_BAD_ROOT):
        if os.path.exists(p):
            shutil.rmtree(p)
    for sub in ("iceberg", "iceberg_bad", os.path.join("expected", "iceberg"), os.path.join("expected", "iceberg_bad")):
        if os.path.exists(os.path.join(HERE, sub)):
            shutil.rmtree(os.path.join(HERE, sub))
    cat = make_catalog()
    make_evolved(cat)
    make_deletes(cat)
    make_dv(cat)
    make_v1(cat)
    make_no_field_ids(cat)
    make_bad(cat)
    write_json(os.path.join(HERE, "expected", "iceberg", "_avro_schemas.json"), avro_manifest_facts())
    print("iceberg fixtures written")


if __name__ == "__main__":
    main(sys.argv[1:])
