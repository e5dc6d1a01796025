#!/usr/bin/env python3
"""Use our Iceberg REST catalog (`hidden-partitions serve`) from clients nobody here wrote:
pyiceberg 0.12's RestCatalog and DuckDB 1.4.4 with its iceberg and httpfs extensions.

tests/rest_catalog.rs starts the server and runs one step per call, then checks the rows with
our own engine on the same warehouse. Rows are rendered by iceberg_read.py's rules, so they
compare as JSON with our side.

    rest_catalog.py pyiceberg-create URI           namespace ns, table ns.events (day(ts), bucket(16, id)), 3 rows
    rest_catalog.py pyiceberg-evolve URI           overwrite, delete by filter, schema and spec evolution, append, time travel
    rest_catalog.py pyiceberg-rename URI FROM TO   rename, then read under the new name
    rest_catalog.py pyiceberg-drop URI TABLE PURGE drop (purge: true|false), then list
    rest_catalog.py pyiceberg-read URI TABLE [FILTER]
    rest_catalog.py duckdb URI TABLE               ATTACH, SHOW ALL TABLES, SELECT with a filter, INSERT, SELECT
    rest_catalog.py append URI TABLE ENGINE START COUNT
                                                   COUNT appends of one row (id START, START+1, …), each
                                                   retried on a 409; prints {"appended": n, "retries": r}
    rest_catalog.py stale URI TABLE OPERATION      a change (append | delete) built on the table as loaded, committed after
                                                   another append, without assert-ref-snapshot-id; prints
                                                   {"committed": bool, "error": text or null}
    rest_catalog.py errors URI                     bad input: each answer's code and type
    rest_catalog.py staged URI TABLE               create_table_transaction + append + commit (a staged create
                                                   with data); then a staged create never committed (its files
                                                   written), and a plain create of that name
    rest_catalog.py duckdb-ctas URI TABLE          DuckDB's CREATE TABLE … AS SELECT through ATTACH (a staged create)
    rest_catalog.py overwrite URI TABLE FILTER     pyiceberg's overwrite(df, overwrite_filter=FILTER) of one row
    rest_catalog.py duckdb-dml URI TABLE SQL...    DuckDB statements through ATTACH (its merge-on-read DELETE and UPDATE
                                                   write position delete files); each one's answer, then the rows
    rest_catalog.py client-deletes URI TABLE OTHER delete files committed through pyiceberg's manifest writer: good ones
                                                   (rows 0 and 2 of a data file), bad ones (two data files, a file of
                                                   table OTHER, a position past the end, an unknown equality column),
                                                   each refused; then equality deletes by id and by a NULL name
    rest_catalog.py partition-equality URI TABLE   an equality delete of id = 1 in partition region = 'a'
    rest_catalog.py sort-order URI TABLE           create_table with a sort order (id DESC NULLS LAST), then
                                                   update_sort_order to name ASC; prints what pyiceberg sees
    rest_catalog.py client-dv URI TABLE            deletion vectors through make_iceberg.py's v3 writers: one, one
                                                   replacing it, then a second live one (refused)

Each prints one JSON object on stdout; an engine error exits 1 with the message on stderr.
Set HP_CATALOG_TOKEN to send a bearer token.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from iceberg_read import duckdb_connection, render_table  # noqa: E402


def catalog(uri: str):
    from pyiceberg.catalog.rest import RestCatalog

    props = {"uri": uri}
    token = os.environ.get("HP_CATALOG_TOKEN")
    if token:
        props["token"] = token
    return RestCatalog("hp", **props)


def rows(arrow) -> list:
    return sorted(render_table(arrow), key=lambda r: json.dumps(r, sort_keys=True))


def events_arrow(data: list, with_note: bool = False):
    import datetime as dt

    import pyarrow as pa

    fields = [
        pa.field("id", pa.int64()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("name", pa.string()),
    ]
    if with_note:
        fields.append(pa.field("note", pa.string()))
    columns = list(zip(*data)) if data else [[] for _ in fields]
    arrays = []
    for f, values in zip(fields, columns):
        if f.name == "ts":
            values = [dt.datetime.fromisoformat(v) for v in values]
        arrays.append(pa.array(list(values), type=f.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def create_events(cat, bucket: bool, data: list):
    """Namespace ns and table ns.events (id, ts, name) partitioned by day(ts) [and bucket(16, id)],
    with `data` appended; the table reloaded."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, DayTransform
    from pyiceberg.types import LongType, NestedField, StringType, TimestampType

    cat.create_namespace("ns")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "ts", TimestampType(), required=False),
        NestedField(3, "name", StringType(), required=False),
    )
    fields = [PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day")]
    if bucket:
        fields.append(PartitionField(source_id=1, field_id=1001, transform=BucketTransform(16), name="id_bucket"))
    table = cat.create_table("ns.events", schema=schema, partition_spec=PartitionSpec(*fields))
    table.append(events_arrow(data))
    return cat.load_table("ns.events")


def pyiceberg_create(uri: str) -> dict:
    cat = catalog(uri)
    table = create_events(
        cat,
        True,
        [(1, "2024-01-01T10:00:00", "a"), (2, "2024-01-02T10:00:00", "b"), (3, "2024-01-02T11:00:00", "c")],
    )
    return {
        "namespaces": sorted(".".join(n) for n in cat.list_namespaces()),
        "tables": sorted(".".join(i) for i in cat.list_tables("ns")),
        "rows": rows(table.scan().to_arrow()),
        "day2_files": len(list(table.scan(row_filter="ts >= '2024-01-02T00:00:00'").plan_files())),
        "all_files": len(list(table.scan().plan_files())),
        "snapshot": table.current_snapshot().snapshot_id,
    }


def pyiceberg_evolve(uri: str) -> dict:
    from pyiceberg.types import StringType

    cat = catalog(uri)
    table = cat.load_table("ns.events")
    first = table.current_snapshot().snapshot_id
    table.overwrite(events_arrow([(1, "2024-01-01T12:00:00", "a2")]), overwrite_filter="id = 1")
    table.delete("id = 2")
    with table.update_schema() as update:
        update.add_column("note", StringType())
    with table.update_spec() as update:
        update.add_identity("name")
    table.append(events_arrow([(4, "2024-01-03T09:00:00", "d", "new")], with_note=True))
    table = cat.load_table("ns.events")
    return {
        "rows": rows(table.scan().to_arrow()),
        "first": rows(table.scan(snapshot_id=first).to_arrow()),
        "snapshots": len(table.metadata.snapshots),
        "specs": len(table.metadata.partition_specs),
        "fields": [f.name for f in table.schema().fields],
        "name_d_files": len(list(table.scan(row_filter="name = 'd'").plan_files())),
    }


def pyiceberg_rename(uri: str, source: str, target: str) -> dict:
    cat = catalog(uri)
    cat.rename_table(source, target)
    table = cat.load_table(target)
    missing = False
    try:
        cat.load_table(source)
    except Exception as e:  # NoSuchTableError
        missing = type(e).__name__
    return {"rows": rows(table.scan().to_arrow()), "old_name": missing}


def pyiceberg_drop(uri: str, name: str, purge: bool) -> dict:
    cat = catalog(uri)
    if purge:
        cat.purge_table(name)
    else:
        cat.drop_table(name)
    namespace = name.rsplit(".", 1)[0]
    return {"tables": sorted(".".join(i) for i in cat.list_tables(namespace))}


def pyiceberg_read(uri: str, name: str, row_filter: str | None) -> dict:
    table = catalog(uri).load_table(name)
    scan = table.scan(row_filter=row_filter) if row_filter else table.scan()
    return {"rows": rows(scan.to_arrow()), "files": len(list(scan.plan_files()))}


def duckdb_attach(uri: str):
    con = duckdb_connection()
    token = os.environ.get("HP_CATALOG_TOKEN")
    if token:
        con.execute(f"CREATE SECRET (TYPE iceberg, TOKEN '{token}')")
        con.execute(f"ATTACH 'warehouse' AS hp (TYPE iceberg, ENDPOINT '{uri}')")
    else:
        con.execute(f"ATTACH 'warehouse' AS hp (TYPE iceberg, ENDPOINT '{uri}', AUTHORIZATION_TYPE 'none')")
    return con


def duckdb_scenario(uri: str, table: str) -> dict:
    con = duckdb_attach(uri)
    tables = con.execute("SHOW ALL TABLES").fetchall()
    listed = sorted(f"{r[1]}.{r[2]}" for r in tables if r[0] == "hp")
    filtered = con.execute(f"SELECT * FROM hp.{table} WHERE id >= 2").fetch_arrow_table()
    con.execute(f"INSERT INTO hp.{table} (id, ts, name) VALUES (100, TIMESTAMP '2024-02-01 00:00:00', 'duck')")
    after = con.execute(f"SELECT * FROM hp.{table}").fetch_arrow_table()
    return {"tables": listed, "filtered": rows(filtered), "after_insert": rows(after)}


def append(uri: str, name: str, engine: str, start: int, count: int) -> dict:
    retries = 0
    con = duckdb_attach(uri) if engine == "duckdb" else None
    cat = catalog(uri) if engine == "pyiceberg" else None
    for i in range(count):
        ident = start + i
        ts = f"2024-03-{1 + ident % 28:02d}T00:00:00"
        for attempt in range(50):
            try:
                if engine == "duckdb":
                    con.execute(f"INSERT INTO hp.{name} (id, ts, name) VALUES ({ident}, TIMESTAMP '{ts.replace('T', ' ')}', '{engine}')")
                else:
                    # pyiceberg retries a 409 itself (reloading the table); a conflict left over is retried here.
                    cat.load_table(name).append(events_arrow([(ident, ts, engine)]))
                break
            except Exception as e:  # a 409 that the client did not retry, or gave up on
                text = str(e)
                if "409" not in text and "CommitFailed" not in text and "conflict" not in text.lower():
                    raise
                retries += 1
                time.sleep(0.02 * (attempt + 1))
        else:
            raise RuntimeError(f"{engine}: row {ident} never committed")
    return {"appended": count, "retries": retries}


def stale(uri: str, name: str, operation: str) -> dict:
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.table.update import AssertRefSnapshotId

    cat = catalog(uri)
    old = cat.load_table(name)
    cat.load_table(name).append(events_arrow([(901, "2024-03-05T00:00:00", "meanwhile")]))
    tx = old.transaction()
    if operation == "append":
        tx.append(events_arrow([(902, "2024-03-06T00:00:00", "stale")]))
    else:
        tx.delete("id < 900")
    # Only the uuid is required: the change may land on top of the append made meanwhile.
    requirements = tuple(r for r in tx._requirements if not isinstance(r, AssertRefSnapshotId))
    try:
        cat.commit_table(old, requirements, tx._updates)
    except CommitFailedException as e:
        return {"committed": False, "error": str(e)}
    return {"committed": True, "error": None}


def request(uri: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> tuple:
    req = urllib.request.Request(uri.rstrip("/") + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req) as r:
            text = r.read().decode()
            return r.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, text


def request_large(uri: str, method: str, path: str, body: bytes, headers: dict) -> tuple:
    """Like request(), for a body the server may refuse before reading it all: it can answer
    and close while the body is still being sent, so a broken pipe is not the answer."""
    import http.client
    from urllib.parse import urlparse

    u = urlparse(uri)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.putrequest(method, u.path.rstrip("/") + path)
    for k, v in {**headers, "Content-Length": str(len(body))}.items():
        conn.putheader(k, v)
    conn.endheaders()
    try:
        conn.send(body)
    except (BrokenPipeError, ConnectionResetError):
        pass
    r = conn.getresponse()
    text = r.read().decode()
    conn.close()
    try:
        return r.status, json.loads(text) if text else None
    except ValueError:
        return r.status, text


def staged(uri: str, name: str) -> dict:
    """pyiceberg's staged create with data, then an abandoned one and a plain create."""
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    cat = catalog(uri)
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False))
    arrow = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    txn = cat.create_table_transaction(name, schema=schema)
    txn.append(pa.Table.from_pylist([{"id": 1, "name": "staged"}, {"id": 2, "name": "with data"}], schema=arrow))
    txn.commit_transaction()
    created = rows(cat.load_table(name).scan().to_arrow())
    # Staged, its files written, never committed: the name stays free.
    abandoned = name + "_abandoned"
    txn = cat.create_table_transaction(abandoned, schema=schema)
    txn.append(pa.Table.from_pylist([{"id": 9, "name": "never committed"}], schema=arrow))
    exists_after_staging = cat.table_exists(abandoned)
    table = cat.create_table(abandoned, schema=schema)
    table.append(pa.Table.from_pylist([{"id": 3, "name": "plain"}], schema=arrow))
    return {
        "created": created,
        "exists_after_staging": exists_after_staging,
        "recreated": rows(cat.load_table(abandoned).scan().to_arrow()),
    }


def duckdb_ctas(uri: str, name: str) -> dict:
    con = duckdb_attach(uri)
    con.execute(f"CREATE TABLE hp.{name} AS SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(id, name)")
    return {"rows": rows(con.execute(f"SELECT * FROM hp.{name}").fetch_arrow_table())}


def overwrite(uri: str, name: str, overwrite_filter: str) -> dict:
    table = catalog(uri).load_table(name)
    table.overwrite(events_arrow([(500, "2024-01-05T00:00:00", "overwritten")]), overwrite_filter=overwrite_filter)
    return {"rows": rows(catalog(uri).load_table(name).scan().to_arrow())}


def duckdb_dml(uri: str, name: str, statements: list[str]) -> dict:
    con = duckdb_attach(uri)
    answers = [con.execute(sql.replace("{t}", f"hp.{name}")).fetchall()[0][0] for sql in statements]
    return {"answers": answers, "rows": rows(con.execute(f"SELECT * FROM hp.{name}").fetch_arrow_table())}


def client_deletes(uri: str, name: str, other: str) -> dict:
    import uuid

    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.typedef import Record
    from pyiceberg_deletes import commit_row_delta, local_path, write_position_delete_file

    cat = catalog(uri)
    table = cat.load_table(name)
    files = sorted((t.file.file_path, t.file.record_count) for t in table.scan().plan_files())
    theirs = sorted(t.file.file_path for t in cat.load_table(other).scan().plan_files())
    where = table.location() + "/data/"

    def commit(case: str, df) -> dict:
        tbl = cat.load_table(name)
        before = tbl.current_snapshot().snapshot_id
        try:
            commit_row_delta(tbl, Operation.DELETE, delete_files=[df])
            error = None
        except Exception as e:  # the server's 4xx, as pyiceberg raises it
            error = f"{type(e).__name__}: {e}"
        after = cat.load_table(name).current_snapshot().snapshot_id
        return {"error": error, "changed": after != before}

    def positions(case: str, content: list[tuple[str, int]]) -> dict:
        path = f"{where}{case}-{uuid.uuid4()}-deletes.parquet"
        return commit(case, write_position_delete_file(path, content, Record()))

    def equality(case: str, field_id: int, column: str, values: list, kind) -> dict:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = f"{where}{case}-{uuid.uuid4()}-eq-deletes.parquet"
        field = pa.field(column, kind, metadata={"PARQUET:field_id": str(field_id)})
        pq.write_table(pa.table({column: pa.array(values, kind)}, schema=pa.schema([field])), local_path(path))
        df = DataFile.from_args(content=DataFileContent.EQUALITY_DELETES, file_path=path,
                                file_format=FileFormat.PARQUET, partition=Record(), record_count=len(values),
                                file_size_in_bytes=os.path.getsize(local_path(path)), equality_ids=[field_id])
        return commit(case, df)

    import pyarrow as pa

    first, rows_in_first = files[0]
    out = {"good": positions("good", [(first, 0), (first, 2)])}
    out["rows"] = rows(cat.load_table(name).scan().to_arrow())
    out["two_files"] = positions("two", [(first, 1), (files[1][0], 0)])
    out["other_table"] = positions("other", [(theirs[0], 0)])
    out["past_end"] = positions("past", [(first, rows_in_first)])
    out["unknown_column"] = equality("unknown", 99, "nope", [1], pa.int64())
    # Equality deletes: by id (an int key written as int32), then by a NULL name.
    out["equality"] = equality("equality", 1, "id", [3, 13, 1000], pa.int32())
    out["equality_rows"] = rows(cat.load_table(name).scan().to_arrow())
    out["equality_null"] = equality("null", 2, "name", [None], pa.string())
    out["null_rows"] = rows(cat.load_table(name).scan().to_arrow())
    return out


def partition_equality(uri: str, name: str) -> dict:
    """An equality delete of id = 1 in partition region = 'a' of a table PARTITIONED BY (region)."""
    import uuid

    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.typedef import Record
    from pyiceberg_deletes import commit_row_delta, local_path

    cat = catalog(uri)
    tbl = cat.load_table(name)
    path = f"{tbl.location()}/data/region=a/eq-{uuid.uuid4()}-deletes.parquet"
    os.makedirs(os.path.dirname(local_path(path)), exist_ok=True)
    field = pa.field("id", pa.int64(), metadata={"PARQUET:field_id": "1"})
    pq.write_table(pa.table({"id": pa.array([1], pa.int64())}, schema=pa.schema([field])), local_path(path))
    df = DataFile.from_args(content=DataFileContent.EQUALITY_DELETES, file_path=path, file_format=FileFormat.PARQUET,
                            partition=Record("a"), record_count=1,
                            file_size_in_bytes=os.path.getsize(local_path(path)), equality_ids=[1])
    commit_row_delta(tbl, Operation.DELETE, delete_files=[df])
    return {"rows": rows(cat.load_table(name).scan().to_arrow())}


def client_dv(uri: str, name: str) -> dict:
    """Deletion vectors committed through pyiceberg with tests/data/make_iceberg.py's v3 writers
    (pyiceberg 0.12 has none): rows 1 and 3 of the first data file; then a vector replacing it
    (rows 1, 3, 5; the old one marked DELETED in a rewritten delete manifest, as Java does); then
    a second live vector for the same file, which must be refused."""
    import uuid

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
    import make_iceberg as mk
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.typedef import Record

    cat = catalog(uri)
    files = sorted(t.file.file_path for t in cat.load_table(name).scan().plan_files())
    where = cat.load_table(name).location() + "/data/"

    def commit(positions: list[int], replaced=()) -> tuple:
        tbl = cat.load_table(name)
        before = tbl.current_snapshot().snapshot_id
        with mk.pyiceberg_writes_v3():
            dvs = mk.write_dv_puffin(f"{where}client-{uuid.uuid4()}-deletes.puffin", [(files[0], positions, Record())])
            try:
                mk.commit_dvs(tbl, Operation.DELETE, dvs=dvs, replaced=replaced)
                error = None
            except Exception as e:  # the server's 4xx, as pyiceberg raises it
                error = f"{type(e).__name__}: {e}"
        changed = cat.load_table(name).current_snapshot().snapshot_id != before
        return dvs, {"error": error, "changed": changed, "rows": rows(cat.load_table(name).scan().to_arrow())}

    first, out_first = commit([1, 3])
    _, out_replaced = commit([1, 3, 5], replaced=first)
    _, out_second = commit([7])
    return {"first": out_first, "replaced": out_replaced, "second": out_second}


def errors(uri: str) -> dict:
    out = {}
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("HP_CATALOG_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"

    def kind(answer):
        code, body = answer
        typ = body.get("error", {}).get("type") if isinstance(body, dict) else None
        return [code, typ]

    out["no_namespace"] = kind(request(uri, "GET", "/v1/namespaces/nope/tables", headers=headers))
    out["no_table"] = kind(request(uri, "GET", "/v1/namespaces/ns/tables/nope", headers=headers))
    out["bad_json"] = kind(request(uri, "POST", "/v1/namespaces", b"{not json", headers))
    out["nested"] = kind(request(uri, "POST", "/v1/namespaces", json.dumps({"namespace": ["a", "b"]}).encode(), headers))
    out["traversal"] = kind(request(uri, "POST", "/v1/namespaces", json.dumps({"namespace": [".."]}).encode(), headers))
    out["unknown_update"] = kind(
        request(
            uri,
            "POST",
            "/v1/namespaces/ns/tables/events",
            json.dumps({"requirements": [], "updates": [{"action": "set-statistics", "snapshot-id": 1}]}).encode(),
            headers,
        )
    )
    out["failed_requirement"] = kind(
        request(
            uri,
            "POST",
            "/v1/namespaces/ns/tables/events",
            json.dumps(
                {
                    "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1}],
                    "updates": [{"action": "set-properties", "updates": {"k": "v"}}],
                }
            ).encode(),
            headers,
        )
    )
    out["no_token"] = kind(request(uri, "GET", "/v1/namespaces"))
    big = b'{"namespace": ["' + b"x" * (17 * 1024 * 1024) + b'"]}'
    out["too_large"] = kind(request_large(uri, "POST", "/v1/namespaces", big, headers))
    return out


def sort_order(uri: str, name: str) -> dict:
    from pyiceberg.schema import Schema
    from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    cat = catalog(uri)
    namespace = name.split(".")[0]
    if (namespace,) not in cat.list_namespaces():
        cat.create_namespace(namespace)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "name", StringType(), required=False),
    )
    order = SortOrder(
        SortField(
            source_id=1, transform=IdentityTransform(), direction=SortDirection.DESC, null_order=NullOrder.NULLS_LAST
        )
    )
    table = cat.create_table(name, schema=schema, sort_order=order)

    def seen(t):
        o = t.sort_order()
        return [o.order_id, [[f.source_id, str(f.transform), f.direction.value, f.null_order.value] for f in o.fields]]

    created = seen(cat.load_table(name))
    with table.update_sort_order() as update:
        update.asc("name", IdentityTransform())
    return {"created": created, "updated": seen(cat.load_table(name))}


def main() -> int:
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    action, uri = args[0], args[1]
    if action == "pyiceberg-create":
        result = pyiceberg_create(uri)
    elif action == "pyiceberg-evolve":
        result = pyiceberg_evolve(uri)
    elif action == "pyiceberg-rename":
        result = pyiceberg_rename(uri, args[2], args[3])
    elif action == "pyiceberg-drop":
        result = pyiceberg_drop(uri, args[2], args[3] == "true")
    elif action == "pyiceberg-read":
        result = pyiceberg_read(uri, args[2], args[3] if len(args) > 3 else None)
    elif action == "duckdb":
        result = duckdb_scenario(uri, args[2])
    elif action == "append":
        result = append(uri, args[2], args[3], int(args[4]), int(args[5]))
    elif action == "stale":
        result = stale(uri, args[2], args[3])
    elif action == "errors":
        result = errors(uri)
    elif action == "sort-order":
        result = sort_order(uri, args[2])
    elif action == "staged":
        result = staged(uri, args[2])
    elif action == "duckdb-ctas":
        result = duckdb_ctas(uri, args[2])
    elif action == "overwrite":
        result = overwrite(uri, args[2], args[3])
    elif action == "duckdb-dml":
        result = duckdb_dml(uri, args[2], args[3:])
    elif action == "client-dv":
        result = client_dv(uri, args[2])
    elif action == "partition-equality":
        result = partition_equality(uri, args[2])
    elif action == "client-deletes":
        result = client_deletes(uri, args[2], args[3])
    else:
        print(f"unknown action {action}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
