"""The Python package end to end: SQL, Arrow in and out, pruning, errors,
tables shared with the CLI and on S3."""

import datetime
import decimal
import os
import uuid

import pyarrow as pa
import pytest

import hidden_partitions as hp


def days_table(session):
    session.sql(
        "CREATE TABLE events (id BIGINT, ts TIMESTAMP, region VARCHAR) "
        "PARTITIONED BY (day(ts), bucket(16, id))"
    )
    for day in (1, 2, 3):
        session.sql(
            f"INSERT INTO events VALUES ({day}, TIMESTAMP '2024-01-0{day} 10:00:00', 'EU'), "
            f"({day + 10}, TIMESTAMP '2024-01-0{day} 11:00:00', 'US')"
        )


def test_sql_returns_arrow_without_copies(session):
    days_table(session)
    result = session.sql("SELECT id, region FROM events WHERE ts >= TIMESTAMP '2024-01-03 00:00:00' ORDER BY id")
    assert isinstance(result, hp.QueryResult)
    assert result.num_rows == 2 and len(result) == 2
    assert result.column_names == ["id", "region"]
    table = pa.table(result)
    assert table.column("id").to_pylist() == [3, 13]
    assert result.to_pylist() == [{"id": 3, "region": "EU"}, {"id": 13, "region": "US"}]
    assert list(result.to_pandas()["id"]) == [3, 13]
    assert result.to_polars()["region"].to_list() == ["EU", "US"]
    reader = pa.RecordBatchReader.from_stream(result)
    assert reader.read_all().num_rows == 2
    assert "region" in repr(result)


def test_pruning_is_visible(session):
    days_table(session)
    rows = session.sql(
        "EXPLAIN FILES SELECT * FROM events WHERE ts >= TIMESTAMP '2024-01-03 00:00:00'"
    ).to_pylist()
    total = session.sql('SELECT count(*) AS n FROM "events$files"').to_pylist()[0]["n"]
    day3 = session.sql(
        "SELECT count(DISTINCT bucket(16, id)) AS n FROM events WHERE ts >= TIMESTAMP '2024-01-03 00:00:00'"
    ).to_pylist()[0]["n"]
    # One day of three: its files only (one per bucket of its ids).
    assert rows == [{"table": "events", "spec_id": 0, "files": f"{day3}/{total}"}], rows
    assert day3 < total
    all_rows = session.sql("EXPLAIN FILES SELECT * FROM events").to_pylist()
    assert all_rows[0]["files"] == f"{total}/{total}", all_rows


def test_dml_metadata_tables_and_time_travel(session):
    days_table(session)
    first = session.sql('SELECT snapshot_id FROM "events$snapshots" ORDER BY committed_at LIMIT 1').to_pylist()[0][
        "snapshot_id"
    ]
    assert session.sql("DELETE FROM events WHERE region = 'US'").num_rows == 1
    session.sql("UPDATE events SET region = 'APAC' WHERE id = 1")
    assert session.sql("SELECT count(*) AS n FROM events").to_pylist() == [{"n": 3}]
    assert session.sql(f'SELECT count(*) AS n FROM "events@{first}"').to_pylist() == [{"n": 2}]
    assert session.sql("SELECT region FROM events WHERE id = 1").to_pylist() == [{"region": "APAC"}]
    assert session.sql('SELECT count(*) AS n FROM "events$files"').to_pylist()[0]["n"] >= 3


def test_changelog_reads(session):
    days_table(session)
    session.sql("ALTER TABLE events CREATE TAG before")
    session.sql("UPDATE events SET region = 'APAC' WHERE id = 1")
    session.sql("DELETE FROM events WHERE id = 12")
    rows = session.sql(
        "SELECT id, region, _change_type, _change_ordinal FROM table_changes('events', 'before', NULL, 'id') "
        "ORDER BY _change_ordinal, _change_type"
    ).to_pylist()
    assert rows == [
        {"id": 1, "region": "APAC", "_change_type": "UPDATE_AFTER", "_change_ordinal": 0},
        {"id": 1, "region": "EU", "_change_type": "UPDATE_BEFORE", "_change_ordinal": 0},
        {"id": 12, "region": "US", "_change_type": "DELETE", "_change_ordinal": 1},
    ], rows
    session.sql("ALTER TABLE events CREATE TAG after")
    with pytest.raises(Exception, match="is not an ancestor of snapshot"):
        session.sql("SELECT * FROM table_changes('events', 'after', 'before')")


ROUND_TRIP = pa.table(
    {
        "b": pa.array([True, None, False]),
        "i32": pa.array([1, None, -2_147_483_648], pa.int32()),
        "i64": pa.array([2**62, None, -1], pa.int64()),
        "f32": pa.array([1.5, None, -0.0], pa.float32()),
        "f64": pa.array([float("inf"), None, 2.25], pa.float64()),
        "dec": pa.array([decimal.Decimal("12.34"), None, decimal.Decimal("-0.01")], pa.decimal128(10, 2)),
        "s": pa.array(["a", None, "ü€"], pa.string()),
        "bin": pa.array([b"\x00\x01", None, b""], pa.binary()),
        "d": pa.array([datetime.date(2024, 2, 29), None, datetime.date(1970, 1, 1)], pa.date32()),
        "ts": pa.array([datetime.datetime(2024, 1, 1, 12, 30), None, datetime.datetime(1969, 12, 31, 23, 59)], pa.timestamp("us")),
        "tstz": pa.array(
            [datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), None, datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)],
            pa.timestamp("us", tz="UTC"),
        ),
        "l": pa.array([[1, 2], None, []], pa.list_(pa.int64())),
        "st": pa.array([{"x": 1, "y": "p"}, None, {"x": None, "y": "q"}], pa.struct([("x", pa.int64()), ("y", pa.string())])),
    }
)


def test_every_type_round_trips_through_a_table(session):
    session.register_arrow("incoming", ROUND_TRIP)
    session.sql("CREATE TABLE everything AS SELECT * FROM incoming")
    back = session.sql("SELECT * FROM everything ORDER BY i64 NULLS LAST").to_arrow()
    expected = ROUND_TRIP.take([2, 0, 1])
    assert back.column_names == expected.column_names
    for name in expected.column_names:
        assert back.column(name).to_pylist() == expected.column(name).to_pylist(), name


def test_variant_is_a_struct_of_binaries_or_json_text(session):
    session.register_arrow("docs", pa.table({"id": [1, 2], "j": ['{"a":1,"b":[true,null]}', '"text"']}))
    session.sql("CREATE TABLE v (id BIGINT, doc VARIANT)")
    session.sql("INSERT INTO v SELECT id, parse_json(j) FROM docs")
    raw = session.sql("SELECT doc FROM v ORDER BY id").to_arrow()
    doc_type = raw.schema.field("doc").type
    assert pa.types.is_struct(doc_type)
    assert {doc_type.field(i).name for i in range(doc_type.num_fields)} == {"metadata", "value"}
    assert all(isinstance(v["value"], bytes) for v in raw.column("doc").to_pylist())
    text = session.sql("SELECT to_json(doc) AS j FROM v ORDER BY id").to_pylist()
    assert text == [{"j": '{"a":1,"b":[true,null]}'}, {"j": '"text"'}]
    # The struct goes back in as it came out.
    session.register_arrow("again", raw)
    session.sql("CREATE TABLE v2 (doc VARIANT)")
    session.sql("INSERT INTO v2 SELECT doc FROM again")
    assert session.sql("SELECT to_json(doc) AS j FROM v2 ORDER BY j").to_pylist() == [
        {"j": '"text"'},
        {"j": '{"a":1,"b":[true,null]}'},
    ]


def test_python_data_in_from_pyarrow_readers_polars_and_pandas(session):
    import pandas
    import polars

    session.sql("CREATE TABLE t (id BIGINT, name VARCHAR) PARTITIONED BY (bucket(4, id))")
    batch = pa.record_batch({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]})
    session.register_arrow("from_reader", pa.RecordBatchReader.from_batches(batch.schema, [batch]))
    session.register_arrow("from_polars", polars.DataFrame({"id": [3], "name": ["c"]}))
    session.register_arrow("from_pandas", pandas.DataFrame({"id": [4], "name": ["d"]}))
    for name in ("from_reader", "from_polars", "from_pandas"):
        session.sql(f"INSERT INTO t SELECT id, name FROM {name}")
    assert session.sql("SELECT id, name FROM t ORDER BY id").to_pylist() == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": "b"},
        {"id": 3, "name": "c"},
        {"id": 4, "name": "d"},
    ]
    # A new registration of the name replaces the old one.
    session.register_arrow("from_polars", polars.DataFrame({"id": [9], "name": ["z"]}))
    assert session.sql("SELECT id FROM from_polars").to_pylist() == [{"id": 9}]


def test_errors_are_exceptions_with_our_messages(session, tmp_path):
    assert issubclass(hp.CommitConflictError, hp.HiddenPartitionsError)
    assert issubclass(hp.CommitStateUnknownError, hp.HiddenPartitionsError)
    with pytest.raises(hp.HiddenPartitionsError, match="nowhere"):
        session.sql("SELECT * FROM nowhere")
    with pytest.raises(hp.HiddenPartitionsError, match="(?i)partition|transform|bucket"):
        session.sql("CREATE TABLE bad (id BIGINT) PARTITIONED BY (bucket(0, id))")
    with pytest.raises(TypeError, match="int is not Arrow data"):
        session.register_arrow("x", 42)
    session.sql("CREATE TABLE t (id BIGINT)")
    with pytest.raises(hp.HiddenPartitionsError, match="already exists"):
        session.register_arrow("t", pa.table({"id": [1]}))
    # The table is unchanged by the failed statements.
    assert session.sql("SELECT count(*) AS n FROM t").to_pylist() == [{"n": 0}]
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(hp.HiddenPartitionsError):
        hp.Session(warehouse=str(blocker / "warehouse"))


def test_a_missing_warehouse_is_created(tmp_path):
    where = tmp_path / "new" / "warehouse"
    hp.Session(warehouse=str(where)).sql("CREATE TABLE t (id BIGINT)")
    assert where.is_dir()


def test_tables_pass_between_python_and_the_cli(warehouse, cli):
    session = hp.Session(warehouse=warehouse)
    days_table(session)
    out = cli(warehouse, "SELECT count(*) AS n FROM events WHERE region = 'EU'")
    assert out.strip().splitlines()[-1] == "3"
    cli(warehouse, "INSERT INTO events VALUES (99, TIMESTAMP '2024-02-01 00:00:00', 'CLI')")
    again = hp.Session(warehouse=warehouse)
    assert again.sql("SELECT id FROM events WHERE region = 'CLI'").to_pylist() == [{"id": 99}]
    # The first session reads the CLI's commit too (each statement reads the latest).
    assert session.sql("SELECT count(*) AS n FROM events").to_pylist() == [{"n": 7}]


def s3_options():
    endpoint = os.environ.get("HP_S3_ENDPOINT")
    if not endpoint:
        if os.environ.get("HP_S3_REQUIRED") == "1":
            pytest.fail("HP_S3_REQUIRED=1 but HP_S3_ENDPOINT is not set: the S3 test server is missing")
        pytest.skip("HP_S3_ENDPOINT is not set: no S3 test server (SKIPPED LOUDLY)")
    return endpoint, {
        "aws_endpoint": endpoint,
        "aws_allow_http": "true",
        "aws_region": "us-east-1",
        "aws_access_key_id": "hp-test-key",
        "aws_secret_access_key": "hp-test-secret",
    }


def test_a_table_on_s3(cli):
    _, options = s3_options()
    bucket = os.environ.get("HP_S3_BUCKET", "hp-test")
    warehouse = f"s3://{bucket}/python-{uuid.uuid4().hex}"
    session = hp.Session(warehouse=warehouse, storage_options=options)
    days_table(session)
    assert session.sql("SELECT count(*) AS n FROM events WHERE ts < TIMESTAMP '2024-01-02 00:00:00'").to_pylist() == [
        {"n": 2}
    ]
    args = [a for k, v in options.items() for a in ("--storage-option", f"{k}={v}")]
    assert cli(warehouse, "SELECT count(*) AS n FROM events", *args).strip().splitlines()[-1] == "6"
