-- A tour of hidden partitioning, run from the repository root with
--   cargo run --release -- -f examples/quickstart.sql
-- It writes the table `events` into ./warehouse and starts afresh on every run.

DROP TABLE IF EXISTS events;

-- Partitioned by the day of `ts` and a hash of `id`: queries never mention
-- the partition values, they filter on `ts` and `id`.
CREATE TABLE events (id BIGINT, ts TIMESTAMP, region VARCHAR, payload VARIANT)
PARTITIONED BY (day(ts), bucket(8, id));

-- 4000 events, one every 216 seconds: ten days of January 2024
-- (1704067200 is 2024-01-01 00:00:00 in seconds since 1970).
INSERT INTO events
SELECT value AS id,
       to_timestamp_seconds(1704067200 + value * 216) AS ts,
       CASE value % 3 WHEN 0 THEN 'EU' WHEN 1 THEN 'US' ELSE 'APAC' END AS region,
       parse_json('{"device": "' || CASE value % 4 WHEN 0 THEN 'ios' ELSE 'android' END
                  || '", "amount": ' || (value % 100) || '}') AS payload
FROM generate_series(0, 3999);

-- Ten days times eight buckets: 80 files. A day reads 8 of them. An id
-- reads one: bucket(8, id) leaves one file per day, and the id range kept
-- in each file's statistics leaves one day.
EXPLAIN FILES SELECT * FROM events WHERE ts >= TIMESTAMP '2024-01-10 00:00:00';
EXPLAIN FILES SELECT * FROM events WHERE id = 42;

-- Partition evolution: from now on files are also split by region.
-- The files written so far keep their spec.
ALTER TABLE events ADD PARTITION FIELD region;

-- 1000 more events, from 2024-02-01 00:00:00 on.
INSERT INTO events
SELECT value AS id,
       to_timestamp_seconds(1706745600 + (value - 4000) * 216) AS ts,
       CASE value % 3 WHEN 0 THEN 'EU' WHEN 1 THEN 'US' ELSE 'APAC' END AS region,
       parse_json('{"device": "web", "amount": ' || (value % 100) || '}') AS payload
FROM generate_series(4000, 4999);

-- One row per spec: region prunes only the files of the new spec.
EXPLAIN FILES SELECT * FROM events WHERE region = 'EU';

-- Variant values: printed as JSON, read with variant_get.
SELECT id, ts, region, payload FROM events ORDER BY id LIMIT 3;

SELECT variant_get(payload, '$.device', 'string') AS device,
       count(*) AS events,
       sum(variant_get(payload, '$.amount', 'int')) AS amount
FROM events
GROUP BY 1
ORDER BY 1;

-- Metadata tables: the specs, and files and rows per partition.
SELECT spec_id, is_current, partition_spec FROM "events$specs";

SELECT spec_id, partition, file_count, record_count
FROM "events$partitions"
ORDER BY spec_id DESC, partition
LIMIT 5;
