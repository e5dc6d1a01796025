//! A changelog row's `_change_type` from its sign in the difference of a
//! snapshot's sides (`difference.rs`), which adds it to the rows it emits.
//!
//! | sign | `_change_type` |
//! |------|----------------|
//! | 1    | `INSERT`       |
//! | -1   | `DELETE`       |
//!
//! Every row of a changelog read passes here. A batch of one sign (each
//! side's batches are) is a slice of one shared array of that name, built
//! once; other batches take six bytes per row at fixed offsets (both names
//! are six bytes long).

use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};

const INSERT: &str = "INSERT";
const DELETE: &str = "DELETE";

fn name(sign: i64) -> &'static str {
    if sign > 0 { INSERT } else { DELETE }
}

/// Rows of the shared arrays: a batch of DataFusion's default size.
const SHARED_ROWS: usize = 8192;

/// Each row's change type from its sign (`signs` has no NULLs: the
/// difference refuses them).
pub fn change_types(signs: &Int64Array) -> ArrayRef {
    let values = signs.values();
    if let Some(first) = values.first()
        && values.len() <= SHARED_ROWS
        && values.iter().all(|s| s == first)
    {
        return Arc::new(shared(*first, values.len()));
    }
    let width = INSERT.len();
    let mut bytes = Vec::with_capacity(values.len() * width);
    for sign in values {
        bytes.extend_from_slice(name(*sign).as_bytes());
    }
    let offsets: ScalarBuffer<i32> = (0..=values.len()).map(|i| (i * width) as i32).collect();
    Arc::new(StringArray::new(
        OffsetBuffer::new(offsets),
        Buffer::from_vec(bytes),
        None,
    ))
}

/// `sign`'s name for `rows` rows (at most [`SHARED_ROWS`]): a slice of an
/// array built once per process.
fn shared(sign: i64, rows: usize) -> StringArray {
    static NAMES: OnceLock<[StringArray; 2]> = OnceLock::new();
    let [insert, delete] = NAMES.get_or_init(|| [INSERT, DELETE].map(|n| repeated(n, SHARED_ROWS)));
    if sign > 0 { insert } else { delete }.slice(0, rows)
}

/// `rows` rows, each `name`.
fn repeated(name: &str, rows: usize) -> StringArray {
    let offsets: ScalarBuffer<i32> = (0..=rows).map(|i| (i * name.len()) as i32).collect();
    StringArray::new(
        OffsetBuffer::new(offsets),
        Buffer::from_vec(name.as_bytes().repeat(rows)),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray};

    fn names(signs: Vec<i64>) -> Vec<String> {
        let types = change_types(&Int64Array::from(signs));
        assert_eq!(types.null_count(), 0);
        types
            .as_string::<i32>()
            .iter()
            .map(|n| n.unwrap().to_string())
            .collect()
    }

    #[test]
    fn each_sign_names_its_change() {
        assert_eq!(names(vec![1, -1, -1, 1]), ["INSERT", "DELETE", "DELETE", "INSERT"]);
        assert!(names(vec![]).is_empty());
    }

    #[test]
    fn batches_of_one_sign_share_one_array_and_say_the_same() {
        for rows in [1, 5, SHARED_ROWS, SHARED_ROWS + 1] {
            for sign in [1i64, -1] {
                let got = names(vec![sign; rows]);
                assert_eq!(got.len(), rows);
                assert!(got.iter().all(|n| n == name(sign)), "{rows} rows of sign {sign}");
            }
        }
        // Shared: two batches point at one buffer.
        let one = change_types(&Int64Array::from(vec![1; 3]));
        let two = change_types(&Int64Array::from(vec![1; 7]));
        assert_eq!(
            one.as_string::<i32>().values().as_ptr(),
            two.as_string::<i32>().values().as_ptr()
        );
    }
}
