#!/usr/bin/env python3
"""The Python side of benches/python.rs, in the same run:

    python_session.py WAREHOUSE DAY_SQL BIG_DATA_DIR ITERATIONS

- the one-day query DAY_SQL on the warehouse's 10,000-file table through
  hidden_partitions.Session, warm (median of ITERATIONS);
- `SELECT * FROM big` (10 M rows) into a pyarrow.Table through
  hidden_partitions.Session and, on the same Parquet files (BIG_DATA_DIR),
  through datafusion-python's ctx.sql(...).to_arrow_table() (median of 5 each).

Prints one JSON object of seconds and row counts.
"""

import json
import statistics
import sys
import time

import datafusion
import pyarrow as pa

import hidden_partitions as hp


def median_of(runs, f):
    f()  # warm
    samples, value = [], None
    for _ in range(runs):
        start = time.perf_counter()
        value = f()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), value


def main() -> int:
    warehouse, day_sql, big_dir, iterations = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    session = hp.Session(warehouse=warehouse)
    day_s, day = median_of(iterations, lambda: pa.table(session.sql(day_sql)))
    ours_s, ours = median_of(5, lambda: pa.table(session.sql("SELECT * FROM big")))
    ctx = datafusion.SessionContext()
    ctx.register_parquet("big", big_dir, file_extension=".parquet")
    theirs_s, theirs = median_of(5, lambda: ctx.sql("SELECT * FROM big").to_arrow_table())
    print(
        json.dumps(
            {
                "day": day_s,
                "day_rows": day.to_pylist(),
                "ours": ours_s,
                "ours_rows": ours.num_rows,
                "datafusion_python": theirs_s,
                "datafusion_python_rows": theirs.num_rows,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
