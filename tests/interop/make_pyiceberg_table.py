#!/usr/bin/env python3
"""Tables written by pyiceberg itself, for the "we read what they write" direction and for
the self-check of iceberg_read.py (both engines must read what pyiceberg wrote).

    make_pyiceberg_table.py create --catalog DIR --name ns.t [--warehouse DIR|s3://…]
        A SqlCatalog on sqlite (DIR/catalog.db) and a table partitioned by day(ts) and
        bucket(16, id), filled by two appends (two snapshots).

    make_pyiceberg_table.py create-types --catalog DIR --name ns.t [--warehouse …]
        A table of every Iceberg v2 type we share (nested ones too), one append.

    make_pyiceberg_table.py register-append --catalog DIR --name ns.t --metadata M --rows JSON
        register_table(name, M) (M: a metadata.json, e.g. one our engine wrote), then one append
        of the rows (a JSON list of objects; values are cast to the table's column types, so
        timestamps may be ISO strings and decimals strings).

All of them write metadata/version-hint.text (pyiceberg does not), so both engines also read
the table by its directory.  With --directory the table is then made a directory (Hadoop-style)
table, which other engines may write to by its directory: its current metadata file is copied to
metadata/v<N>.metadata.json and the hint names N (a table left with only pyiceberg's
<N>-<uuid>.metadata.json files belongs to its catalog, and our writes by directory refuse it).  They print a JSON object on stdout: {"metadata": <current metadata location>, "location":
<table location>, "snapshot_ids": [...oldest first], "rows": [...rendered as iceberg_read.py
renders them]}.  S3: the same environment variables as iceberg_read.py.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PYICEBERG_MAX_WORKERS", "1")

from iceberg_read import pyiceberg_properties, render_table  # noqa: E402


def catalog(catalog_dir: str, warehouse: str):
    from pyiceberg.catalog.sql import SqlCatalog

    os.makedirs(catalog_dir, exist_ok=True)
    return SqlCatalog(
        "hp_interop",
        uri=f"sqlite:///{os.path.join(os.path.abspath(catalog_dir), 'catalog.db')}",
        warehouse=warehouse,
        **pyiceberg_properties(warehouse),
    )


def describe(table, directory: bool = False) -> dict:
    metadata = table.metadata_location
    if directory:
        metadata = make_directory_table(table)
    else:
        write_version_hint(table)
    return {
        "metadata": metadata,
        "location": table.location(),
        "snapshot_ids": [s.snapshot_id for s in table.metadata.snapshots],
        "rows": render_table(table.scan().to_arrow()),
    }


def write_version_hint(table) -> None:
    """metadata/version-hint.text naming the current metadata file (without `.metadata.json`),
    which pyiceberg does not write itself: readers that find a table by its directory
    (StaticTable.from_metadata(dir), DuckDB's iceberg_scan(dir)) then find this one."""
    name = table.metadata_location.rsplit("/", 1)[1].removesuffix(".metadata.json")
    hint = f"{table.location()}/metadata/version-hint.text"
    with table.io.new_output(hint).create(overwrite=True) as out:
        out.write(name.encode())


def make_directory_table(table) -> str:
    """The table's current metadata as metadata/v<N>.metadata.json, and the hint naming N."""
    number = int(table.metadata_location.rsplit("/", 1)[1].split("-", 1)[0])
    metadata = f"{table.location()}/metadata/v{number}.metadata.json"
    with table.io.new_input(table.metadata_location).open() as source:
        content = source.read()
    with table.io.new_output(metadata).create(overwrite=False) as out:
        out.write(content)
    with table.io.new_output(f"{table.location()}/metadata/version-hint.text").create(overwrite=True) as out:
        out.write(str(number).encode())
    return metadata


def create(args) -> dict:
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, DayTransform
    from pyiceberg.types import DecimalType, LongType, NestedField, StringType, TimestampType

    warehouse = args.warehouse or f"file://{os.path.abspath(os.path.join(args.catalog, 'warehouse'))}"
    cat = catalog(args.catalog, warehouse)
    namespace = args.name.rsplit(".", 1)[0]
    cat.create_namespace_if_not_exists(namespace)
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "ts", TimestampType(), required=False),
        NestedField(3, "name", StringType(), required=False),
        NestedField(4, "amount", DecimalType(9, 2), required=False),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"),
        PartitionField(source_id=1, field_id=1001, transform=BucketTransform(16), name="id_bucket"),
    )
    table = cat.create_table(args.name, schema=schema, partition_spec=spec)
    arrow_schema = schema.as_arrow()
    day = dt.datetime(2024, 1, 1, 10, 0, 0)
    batches = [
        [(i, day + dt.timedelta(days=i % 3, microseconds=i), f"n{i}", decimal.Decimal(f"{i}.50")) for i in range(1, 7)],
        [(7, None, None, None), (8, dt.datetime(1969, 12, 31, 23, 59, 59), "before epoch", decimal.Decimal("-1.25"))],
    ]
    for rows in batches:
        columns = list(zip(*rows))
        table.append(pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, arrow_schema)], schema=arrow_schema))
    return describe(cat.load_table(args.name), args.directory)


def create_types(args) -> dict:
    """Every Iceberg v2 type we share (nested ones included), unpartitioned, one append."""
    import pyarrow as pa

    warehouse = args.warehouse or f"file://{os.path.abspath(os.path.join(args.catalog, 'warehouse'))}"
    cat = catalog(args.catalog, warehouse)
    cat.create_namespace_if_not_exists(args.name.rsplit(".", 1)[0])
    schema = pa.schema(
        [
            ("b", pa.bool_()),
            ("i", pa.int32()),
            ("l", pa.int64()),
            ("f", pa.float32()),
            ("d", pa.float64()),
            ("dec", pa.decimal128(10, 2)),
            ("dt", pa.date32()),
            ("tm", pa.time64("us")),
            ("ts", pa.timestamp("us")),
            ("tz", pa.timestamp("us", tz="UTC")),
            ("s", pa.string()),
            ("bin", pa.binary()),
            ("st", pa.struct([("a", pa.int64()), ("b", pa.string())])),
            ("li", pa.list_(pa.int64())),
            ("m", pa.map_(pa.string(), pa.int64())),
        ]
    )
    utc = dt.timezone.utc
    rows = [
        dict(b=True, i=1, l=2, f=1.1, d=2.25, dec=decimal.Decimal("10.50"), dt=dt.date(2024, 1, 1),
             tm=dt.time(10, 0, 0, 123456), ts=dt.datetime(2024, 1, 1, 10, 0, 0, 1),
             tz=dt.datetime(2024, 1, 1, 10, tzinfo=utc), s='x"y', bin=b"\x00\xff", st={"a": 1, "b": "q"},
             li=[1, 2, None], m=[("k1", 1), ("k2", 2)]),
        dict(b=False, i=-7, l=-9000000000, f=-0.25, d=1e10, dec=decimal.Decimal("-0.01"), dt=dt.date(1969, 12, 31),
             tm=dt.time(23, 59, 59), ts=dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
             tz=dt.datetime(1970, 1, 1, tzinfo=utc), s="日本語", bin=b"", st={"a": None, "b": None}, li=[], m=[]),
        {name: None for name in schema.names},
    ]
    data = pa.Table.from_pylist(rows, schema=schema)
    table = cat.create_table(args.name, schema=data.schema)
    table.append(data)
    return describe(cat.load_table(args.name), args.directory)


def register_append(args) -> dict:
    import pyarrow as pa

    cat = catalog(args.catalog, args.warehouse or args.metadata.rsplit("/metadata/", 1)[0])
    namespace = args.name.rsplit(".", 1)[0]
    cat.create_namespace_if_not_exists(namespace)
    table = cat.register_table(args.name, args.metadata)
    with open(args.rows, encoding="utf-8") as f:
        rows = json.load(f)
    arrow_schema = table.schema().as_arrow()
    columns = []
    for field in arrow_schema:
        values = pa.array([row.get(field.name) for row in rows])
        columns.append(values if values.type == field.type else values.cast(field.type))
    table.append(pa.Table.from_arrays(columns, schema=arrow_schema))
    return describe(cat.load_table(args.name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["create", "create-types", "register-append"])
    parser.add_argument("--catalog", required=True, help="directory of the sqlite catalog")
    parser.add_argument("--name", required=True, help="namespace.table")
    parser.add_argument("--warehouse", help="the catalog's warehouse (default DIR/warehouse)")
    parser.add_argument("--metadata", help="register-append: the metadata.json to register")
    parser.add_argument("--rows", help="register-append: a JSON file with a list of rows")
    parser.add_argument("--directory", action="store_true", help="make it a directory (version-hint) table")
    args = parser.parse_args()
    if args.action == "register-append" and not (args.metadata and args.rows):
        parser.error("register-append needs --metadata and --rows")
    actions = {"create": create, "create-types": create_types, "register-append": register_append}
    result = actions[args.action](args)
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
