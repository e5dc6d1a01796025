"""Shared helpers for the fixture writers (make_iceberg.py, make_delta.py).

Not a test: only the writers import it.  Everything here is about turning
Python / Arrow values into JSON that a Rust test can compare without
ambiguity, and about producing the DataFusion SQL text that matches a
structured filter.

Structured filter format (used in tests/data/expected/*.json):

    "filter": [ {"column": "ts", "op": ">=", "value": "2024-01-02T00:00:00"}, ... ]

The list is a conjunction (AND).  ``op`` is one of
``= != < <= > >= in not_in is_null is_not_null starts_with``.
``value`` is absent for is_null / is_not_null, a JSON list for in / not_in,
and otherwise a scalar encoded like the row values (see ``json_value``).
Every query also carries ``sql`` (DataFusion SQL over a table registered
as ``t``) that is generated from the same structured filter by
``to_sql``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import os
import shutil
from typing import Any, Iterable

FIXTURE_ROOT = "/tmp/hp-fixtures"  # fixed fake location written into metadata
HERE = os.path.dirname(os.path.abspath(__file__))  # tests/data


# ---------------------------------------------------------------------------
# values -> JSON
# ---------------------------------------------------------------------------

def json_value(v: Any) -> Any:
    """Encode one cell for JSON.

    timestamps -> ISO-8601 'YYYY-MM-DDTHH:MM:SS[.ffffff]' (naive) or with
    '+00:00' (tz-aware); dates -> 'YYYY-MM-DD'; decimals -> exact string
    ('10.50'); bytes -> base64; everything else as is.
    """
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, float) and v != v:
        return "NaN"
    return v


def arrow_rows(table, columns: list[str] | None = None, sort_by: str | None = "id") -> list[list[Any]]:
    """Rows of a pyarrow table as JSON-ready lists, sorted by ``sort_by``."""
    if columns is None:
        columns = table.column_names
    pylist = table.select(columns).to_pylist()
    if sort_by is not None:
        pylist.sort(key=lambda r: (r[sort_by] is None, r[sort_by]))
    return [[json_value(r[c]) for c in columns] for r in pylist]


# ---------------------------------------------------------------------------
# structured filter -> SQL
# ---------------------------------------------------------------------------

def quote_ident(name: str) -> str:
    simple = name.isascii() and name.replace("_", "a").isalnum() and name == name.lower() and not name[0].isdigit()
    return name if simple else '"' + name.replace('"', '""') + '"'


def sql_literal(value: Any, typ: str) -> str:
    """SQL literal for ``value`` (already JSON-encoded) of logical type ``typ``.

    typ is one of: long int string date timestamp timestamptz decimal(p,s) double boolean
    """
    if value is None:
        return "NULL"
    if typ == "string":
        return "'" + str(value).replace("'", "''") + "'"
    if typ == "date":
        return f"DATE '{value}'"
    if typ == "timestamp":
        return "TIMESTAMP '" + str(value).replace("T", " ") + "'"
    if typ == "timestamptz":
        # A TIMESTAMP literal with an explicit UTC offset.
        return "TIMESTAMP '" + str(value).replace("T", " ") + "'"
    if typ.startswith("decimal"):
        return str(value)
    if typ == "boolean":
        return "true" if value else "false"
    return str(value)


def to_sql(columns: list[str], filt: list[dict], types: dict[str, str], order_by: str | None = "id",
           table: str = "t") -> str:
    cols = ", ".join(quote_ident(c) for c in columns)
    sql = f"SELECT {cols} FROM {table}"
    where = to_where(filt, types)
    if where:
        sql += " WHERE " + where
    if order_by:
        sql += f" ORDER BY {quote_ident(order_by)}"
    return sql


def to_where(filt: list[dict], types: dict[str, str]) -> str:
    preds = []
    for f in filt:
        c, op = quote_ident(f["column"]), f["op"]
        typ = types[f["column"]]
        if op == "is_null":
            preds.append(f"{c} IS NULL")
        elif op == "is_not_null":
            preds.append(f"{c} IS NOT NULL")
        elif op in ("in", "not_in"):
            vals = ", ".join(sql_literal(v, typ) for v in f["value"])
            preds.append(f"{c} {'IN' if op == 'in' else 'NOT IN'} ({vals})")
        elif op == "starts_with":
            assert not any(ch in f["value"] for ch in "%_\\'")
            preds.append(f"{c} LIKE '{f['value']}%'")
        else:
            preds.append(f"{c} {op} {sql_literal(f['value'], typ)}")
    return " AND ".join(preds)


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------

def local_path(path: str) -> str:
    """'file:///x/y' -> '/x/y' (for os.* calls); plain paths unchanged."""
    return path[len("file://"):] if path.startswith("file://") else path


def reset_dir(path: str) -> None:
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)


def copy_table(src: str, dst: str) -> None:
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copytree(src, dst)


def _is_flat(x: Any) -> bool:
    scalar = (str, int, float, bool, type(None))
    if isinstance(x, scalar):
        return True
    if isinstance(x, list):
        return all(isinstance(e, scalar) or (isinstance(e, list) and all(isinstance(y, scalar) for y in e))
                   for e in x)
    if isinstance(x, dict):
        return len(x) <= 6 and all(isinstance(v, scalar) for v in x.values())
    return False


def _dump(x: Any, indent: int) -> str:
    """JSON with one line per flat value (rows, small objects): small and still diff-friendly."""
    if _is_flat(x):
        return json.dumps(x, ensure_ascii=False)
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(x, dict):
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_dump(v, indent + 1)}" for k, v in x.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}" if items else "{}"
    if isinstance(x, list):
        if all(_is_flat(e) for e in x) and all(isinstance(e, list) for e in x):
            items = [inner + json.dumps(e, ensure_ascii=False) for e in x]
        else:
            items = [inner + _dump(e, indent + 1) for e in x]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]" if items else "[]"
    return json.dumps(x, ensure_ascii=False)


def write_json(path: str, obj: Any) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = _dump(obj, 0)
    assert json.loads(text) == json.loads(json.dumps(obj))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def strip_prefix(path: str, prefix: str) -> str:
    prefix = prefix.rstrip("/") + "/"
    assert path.startswith(prefix), (path, prefix)
    return path[len(prefix):]


def sorted_unique(xs: Iterable[str]) -> list[str]:
    return sorted(set(xs))


# ---------------------------------------------------------------------------
# cross-check: the SQL text must mean the same as the structured filter
# ---------------------------------------------------------------------------

def check_sql(full_table, query: dict, sort_by: str | None = "id") -> None:
    """Run ``query['sql']`` with DataFusion (python bindings) over ``full_table`` (every row of
    the table as the writing library returns it, registered as ``t``) and assert that it gives
    ``query['rows']``.  Proves that the SQL text and the structured filter agree."""
    from datafusion import SessionContext

    import pyarrow.dataset as ds

    import pyarrow as pa

    # pyarrow's dataset scanner cannot filter string_view (delta-rs's scan() returns it)
    fields = [pa.field(f.name, pa.string(), f.nullable) if pa.types.is_string_view(f.type) else f
              for f in full_table.schema]
    full_table = full_table.cast(pa.schema(fields))
    ctx = SessionContext()
    ctx.register_dataset("t", ds.dataset(full_table))
    got = arrow_rows(ctx.sql(query["sql"]).to_arrow_table(), query["columns"], sort_by)
    assert got == query["rows"], (query["name"], query["sql"], got, query["rows"])
