"""Position delete files committed through pyiceberg's own manifest writer.

pyiceberg never writes merge-on-read deletes itself, but its v2 manifest writer and snapshot
producer write them as any Iceberg writer does once told the content is deletes: a delete
manifest of its own, with the delete file's `file_path` / `pos` metrics (bounds, counts) as
Java writes them.  Used by tests/data/make_iceberg.py (the iceberg/deletes fixture) and by
duckdb_known_bugs.py (tables that show a reader's bug on metadata nobody here wrote).
Needs pyiceberg and pyarrow only.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.conversions import to_bytes
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestWriterV2,
)
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.typedef import Record
from pyiceberg.types import LongType

POS_FILE_PATH_ID = 2147483546
POS_POS_ID = 2147483545


def local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


class DeleteManifestWriterV2(ManifestWriterV2):
    """pyiceberg's v2 manifest writer, but content=deletes (pyiceberg never writes these itself)."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class RowDelta(_FastAppendFiles):
    """A fast append that can also add delete files (in a separate DELETES manifest)."""

    def __init__(self, operation, transaction, io, data_files, delete_files):
        super().__init__(operation=operation, transaction=transaction, io=io)
        for f in data_files:
            self.append_data_file(f)
        self._new_delete_files = list(delete_files)

    def _manifests(self):
        manifests = super()._manifests()
        if self._new_delete_files:
            writer = DeleteManifestWriterV2(
                spec=self._transaction.table_metadata.spec(), schema=self.schema(),
                output_file=self.new_manifest_output(), snapshot_id=self._snapshot_id,
                avro_compression=self._compression)
            with writer:
                for df in self._new_delete_files:
                    writer.add(ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED, snapshot_id=self._snapshot_id,
                        sequence_number=None, file_sequence_number=None, data_file=df))
            manifests = [writer.to_manifest_file()] + manifests
        return manifests

    def _summary(self, snapshot_properties=None):
        saved = self._added_data_files
        self._added_data_files = saved + self._new_delete_files
        try:
            return super()._summary(snapshot_properties or {})
        finally:
            self._added_data_files = saved


def commit_row_delta(tbl, operation, data_files=(), delete_files=()) -> int:
    with tbl.transaction() as txn:
        with RowDelta(operation, txn, tbl.io, list(data_files), list(delete_files)):
            pass
    return tbl.current_snapshot().snapshot_id


def write_position_delete_file(path: str, rows: list[tuple[str, int]], partition: Record) -> DataFile:
    rows = sorted(rows)
    schema = pa.schema([
        pa.field("file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": str(POS_FILE_PATH_ID)}),
        pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": str(POS_POS_ID)}),
    ])
    t = pa.table({"file_path": [r[0] for r in rows], "pos": [r[1] for r in rows]}, schema=schema)
    os.makedirs(os.path.dirname(local_path(path)), exist_ok=True)
    pq.write_table(t, local_path(path))
    paths = [r[0] for r in rows]
    poss = [r[1] for r in rows]
    return DataFile.from_args(
        content=DataFileContent.POSITION_DELETES,
        file_path=path, file_format=FileFormat.PARQUET, partition=partition,
        record_count=len(rows), file_size_in_bytes=os.path.getsize(local_path(path)),
        column_sizes=None,
        value_counts={POS_FILE_PATH_ID: len(rows), POS_POS_ID: len(rows)},
        null_value_counts={POS_FILE_PATH_ID: 0, POS_POS_ID: 0},
        nan_value_counts=None,
        lower_bounds={POS_FILE_PATH_ID: min(paths).encode(), POS_POS_ID: to_bytes(LongType(), min(poss))},
        upper_bounds={POS_FILE_PATH_ID: max(paths).encode(), POS_POS_ID: to_bytes(LongType(), max(poss))},
        key_metadata=None, split_offsets=None, equality_ids=None, sort_order_id=None,
    )
