"""The warehouse as a catalog of datafusion-python's own SessionContext
(through datafusion-ffi): reads prune, INSERT commits, the CLI sees it."""

import os

import datafusion
import pyarrow as pa
import pytest

import hidden_partitions as hp


def filled(warehouse):
    session = hp.Session(warehouse=warehouse)
    session.sql("CREATE TABLE events (id BIGINT, ts TIMESTAMP, region VARCHAR) PARTITIONED BY (day(ts))")
    for day in (1, 2, 3):
        session.sql(f"INSERT INTO events VALUES ({day}, TIMESTAMP '2024-01-0{day} 10:00:00', 'EU')")
    return session


def test_register_reads_prunes_and_inserts(warehouse, cli):
    session = filled(warehouse)
    ctx = datafusion.SessionContext()
    hp.register(ctx, warehouse=warehouse, name="hp")
    rows = ctx.sql(
        "SELECT id FROM hp.public.events WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' ORDER BY id"
    ).to_arrow_table()
    assert rows.column("id").to_pylist() == [2, 3]
    # Pruned by our scan: with the first day's file gone, a query for later
    # days still runs (it never opens that file); one that needs it fails.
    first = session.sql(
        """SELECT path FROM "events$files" WHERE partition LIKE '%2024-01-01%'"""
    ).to_pylist()
    assert len(first) == 1, first
    path = os.path.join(warehouse, "events", first[0]["path"])
    os.rename(path, path + ".away")
    later = ctx.sql("SELECT id FROM hp.public.events WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' ORDER BY id")
    assert later.to_arrow_table().column("id").to_pylist() == [2, 3]
    with pytest.raises(Exception, match="(?i)not found|no such file"):
        ctx.sql("SELECT id FROM hp.public.events").collect()
    os.rename(path + ".away", path)
    ctx.sql("INSERT INTO hp.public.events VALUES (4, TIMESTAMP '2024-01-04 10:00:00', 'US')").collect()
    assert session.sql("SELECT id FROM events WHERE region = 'US'").to_pylist() == [{"id": 4}]
    assert cli(warehouse, "SELECT count(*) AS n FROM events").strip().splitlines()[-1] == "4"
    assert "public" in ctx.catalog("hp").schema_names()


def test_register_checks_the_datafusion_version(warehouse, monkeypatch):
    monkeypatch.setattr(datafusion, "__version__", "54.1.0")
    with pytest.raises(hp.HiddenPartitionsError, match="needs datafusion-python 55.x.*found datafusion 54.1.0"):
        hp.register(datafusion.SessionContext(), warehouse=warehouse)
    assert hp.FFI_MAJOR_VERSION == 55


def test_register_brings_our_functions(warehouse):
    filled(warehouse)
    ctx = datafusion.SessionContext()
    hp.register(ctx, warehouse=warehouse)
    names = {f.name for f in hp.functions()}
    assert {"days", "bucket", "parse_json", "variant_get", "to_json"} <= names, names
    row = ctx.sql(
        """SELECT days(ts) AS d, bucket(16, id) AS b,
                  variant_get(parse_json('{"a": [1, 2]}'), '$.a[1]', 'int') AS v
           FROM hp.public.events WHERE id = 2"""
    ).to_pylist()
    ours = hp.Session(warehouse=warehouse).sql(
        """SELECT days(ts) AS d, bucket(16, id) AS b,
                  variant_get(parse_json('{"a": [1, 2]}'), '$.a[1]', 'int') AS v
           FROM events WHERE id = 2"""
    ).to_pylist()
    assert row == ours, (row, ours)
    assert row[0]["v"] == 2
    schema = ctx.sql(
        """SELECT schema_of_variant_agg(parse_json(j)) AS s
           FROM (VALUES ('{"a": 1}'), ('{"a": "x", "b": true}')) AS t(j)"""
    ).to_pylist()
    assert schema == [{"s": "OBJECT<a: VARIANT, b: BOOLEAN>"}], schema
    bare = datafusion.SessionContext()
    hp.register(bare, warehouse=warehouse, functions=False)
    with pytest.raises(Exception, match="(?i)bucket"):
        bare.sql("SELECT bucket(16, id) FROM hp.public.events").collect()


def test_create_table_in_a_registered_catalog_reaches_the_warehouse(warehouse, cli):
    """DataFusion's own CREATE TABLE and CTAS in the catalog write warehouse tables, which a
    new process finds with their rows; what a warehouse cannot store is refused."""
    filled(warehouse)
    ctx = datafusion.SessionContext()
    hp.register(ctx, warehouse=warehouse, name="hp")
    ctx.sql("CREATE TABLE hp.public.newt (id BIGINT, name VARCHAR)").collect()
    ctx.sql("INSERT INTO hp.public.newt VALUES (1, 'one'), (2, 'two')").collect()
    ctx.sql("CREATE TABLE hp.public.copied AS SELECT id, region FROM hp.public.events WHERE id >= 2").collect()
    assert ctx.sql("SELECT count(*) AS n FROM hp.public.newt").to_pylist() == [{"n": 2}]
    # Another process, which knows only the warehouse, sees both tables and their rows.
    assert cli(warehouse, "SELECT id, name FROM newt ORDER BY id").strip().splitlines()[1:] == ["1,one", "2,two"]
    assert cli(warehouse, "SELECT id, region FROM copied ORDER BY id").strip().splitlines()[1:] == ["2,EU", "3,EU"]
    with pytest.raises(Exception, match="(?i)already exists"):
        ctx.sql("CREATE TABLE hp.public.newt (id BIGINT)").collect()
    with pytest.raises(Exception, match="CREATE VIEW"):
        ctx.sql("CREATE VIEW hp.public.v AS SELECT 1 AS x").collect()
    tables = [r["table_name"] for r in hp.Session(warehouse=warehouse).sql("SHOW TABLES").to_pylist()]
    assert "newt" in tables and "copied" in tables and "v" not in tables, tables
