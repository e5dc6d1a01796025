//! Which Parquet encoding each column of a data file gets.
//!
//! The Parquet writer dictionary-encodes every column until the dictionary
//! outgrows its page (1 MiB). For a column of (nearly) unique values that
//! is the worst choice below that size: the dictionary holds every value
//! and each row adds an index on top, and a reader decompresses and looks
//! up both. Parquet-mr (Spark, Trino's old writer) falls back to plain
//! values when the dictionary does not make the first page smaller; we make
//! the same test on the whole file before writing it, for fixed-width
//! columns, whose sizes are known exactly:
//!
//! | column (100,000 rows)            | distinct | dictionary + indexes   | plain     | written as            |
//! |----------------------------------|----------|------------------------|-----------|-----------------------|
//! | `id BIGINT`, increasing          | 100,000  | 800 KB + 212 KB        | 800 KB    | `DELTA_BINARY_PACKED` |
//! | `v DOUBLE`, measurements         | 99,000   | 792 KB + 212 KB        | 800 KB    | `PLAIN`               |
//! | `customer_id INT`, 2,000 values  | 2,000    | 8 KB + 137 KB          | 400 KB    | dictionary            |
//!
//! Integers (and dates, times, timestamps) without a dictionary are written
//! `DELTA_BINARY_PACKED`, which every Parquet reader supports and which
//! makes increasing values (ids, event times) nearly free to store and
//! decode; floats stay `PLAIN`.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use parquet::basic::Encoding;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

/// Files with fewer values in a column keep the writer's default for it.
const MIN_VALUES: usize = 4096;

/// Values looked at before deciding that a column repeats enough for a
/// dictionary (more than one in ten repeated).
const SAMPLE: usize = 1024;

/// `props` with the dictionary turned off for each top-level fixed-width
/// column of `batches` (one data file) that a dictionary would not make
/// smaller.
pub fn for_file(props: WriterProperties, schema: &SchemaRef, batches: &[RecordBatch]) -> WriterProperties {
    let mut builder = None;
    for (i, field) in schema.fields().iter().enumerate() {
        let Some((width, encoding)) = fixed_width(field.data_type()) else {
            continue;
        };
        let path = ColumnPath::new(vec![field.name().clone()]);
        if !props.dictionary_enabled(&path) {
            continue;
        }
        let columns: Vec<&ArrayRef> = batches.iter().map(|b| b.column(i)).collect();
        if dictionary_pays(&columns, width) {
            continue;
        }
        let b = builder.take().unwrap_or_else(|| props.clone().into_builder());
        builder = Some(
            b.set_column_dictionary_enabled(path.clone(), false)
                .set_column_encoding(path, encoding),
        );
    }
    builder.map_or(props, |b| b.build())
}

/// The width in bytes of a column's values, and its encoding without a
/// dictionary; `None` for types this module leaves alone.
fn fixed_width(data_type: &DataType) -> Option<(usize, Encoding)> {
    use DataType::*;
    Some(match data_type {
        Int32 | UInt32 | Date32 | Time32(_) => (4, Encoding::DELTA_BINARY_PACKED),
        Int64 | UInt64 | Date64 | Time64(_) | Timestamp(_, _) => (8, Encoding::DELTA_BINARY_PACKED),
        Float32 => (4, Encoding::PLAIN),
        Float64 => (8, Encoding::PLAIN),
        _ => return None,
    })
}

/// Whether dictionary pages plus indexes are smaller than the plain values
/// (`width` bytes each) of `columns`: `width·d + n·bits(d)/8 < width·n` for
/// `n` non-null values of which `d` are distinct. Stops as soon as the
/// answer is known.
fn dictionary_pays(columns: &[&ArrayRef], width: usize) -> bool {
    let n: usize = columns.iter().map(|c| c.len() - c.null_count()).sum();
    if n < MIN_VALUES {
        return true;
    }
    let limit = distinct_limit(n, width);
    // Room for the sample; the rest only once the sample says to go on.
    let mut seen: HashSet<u64, BuildHasherDefault<Mix>> =
        HashSet::with_capacity_and_hasher(SAMPLE.min(limit), Default::default());
    let mut looked = 0;
    for column in columns {
        let data = column.to_data();
        let bytes = &data.buffers()[0].as_slice()[data.offset() * width..(data.offset() + data.len()) * width];
        for (i, value) in bytes.chunks_exact(width).enumerate() {
            if data.is_null(i) {
                continue;
            }
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(value);
            seen.insert(u64::from_le_bytes(word));
            looked += 1;
            if seen.len() >= limit {
                return false;
            }
            if looked == SAMPLE {
                if seen.len() < SAMPLE * 9 / 10 {
                    return true;
                }
                seen.reserve(limit - seen.len());
            }
        }
    }
    true
}

/// The least distinct count at which a dictionary stops paying for `n`
/// values of `width` bytes.
fn distinct_limit(n: usize, width: usize) -> usize {
    let size = |d: usize| width * d + n * (usize::BITS - d.max(2).saturating_sub(1).leading_zeros()) as usize / 8;
    let (mut low, mut high) = (1, n + 1);
    while low < high {
        let mid = (low + high) / 2;
        if size(mid) >= width * n {
            high = mid
        } else {
            low = mid + 1
        }
    }
    low
}

/// A multiplicative hash for the values' bit patterns (they need no
/// protection against crafted collisions here: only a count comes out).
#[derive(Default)]
struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, value: u64) {
        let x = (value ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = x ^ (x >> 29);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Float64Array, Int32Array, Int64Array};
    use datafusion::arrow::datatypes::{Field, Schema};

    use super::*;

    fn chosen(batch: RecordBatch) -> Vec<bool> {
        let props = for_file(WriterProperties::builder().build(), &batch.schema(), &[batch.clone()]);
        batch
            .schema()
            .fields()
            .iter()
            .map(|f| props.dictionary_enabled(&ColumnPath::new(vec![f.name().clone()])))
            .collect()
    }

    #[test]
    fn unique_values_go_without_a_dictionary_and_repeated_ones_keep_it() {
        let n = 100_000;
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("v", DataType::Float64, true),
            Field::new("customer", DataType::Int32, false),
            Field::new("half", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 100 + 7))),
                Arc::new(Float64Array::from_iter(
                    (0..n).map(|i| (i % 7 != 0).then_some(i as f64 * 0.37)),
                )),
                Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| (i * 7919) % 2000))),
                // Each value twice: 400 KB + 200 KB of dictionary and indexes beat 800 KB.
                Arc::new(Int64Array::from_iter_values((0..n).map(|i| (i * 7919) % (n / 2)))),
            ],
        )
        .unwrap();
        assert_eq!(chosen(batch), vec![false, false, true, true]);
    }

    #[test]
    fn small_files_keep_the_writers_default() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from_iter_values(0..100))]).unwrap();
        assert_eq!(chosen(batch), vec![true]);
    }

    #[test]
    fn the_limit_is_where_the_dictionary_stops_paying() {
        // 100,000 longs: 8·d + 100,000·17/8 ≥ 800,000 from d = 73,438.
        assert_eq!(distinct_limit(100_000, 8), 73_438);
        assert!(distinct_limit(10, 4) <= 10);
    }
}
