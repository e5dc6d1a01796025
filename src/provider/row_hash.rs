//! `__hp_row_hash(a, b, …)`: one UInt64 per row, the hash of its
//! arguments' exact keys (`exact_key`: `-0.0` and `0.0` hash apart, every
//! NaN alike, nested values by their bytes). A changelog side computes it in its own projection, on the
//! core that read the rows; the difference of the two sides (one
//! partition, `difference.rs`) then reads each row's hash instead of
//! hashing every row itself after the scans.
//!
//! | id | s     | `__hp_row_hash(id, s)` |
//! |----|-------|------------------------|
//! | 1  | 'a'   | the same on both sides |
//! | 1  | NULL  | another hash           |
//!
//! Equal arguments hash alike in every process (a fixed seed), so hash
//! partitions by this column keep equal rows together on a cluster too.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, UInt64Array};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::common::hash_utils::{RandomState, create_hashes};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};

use super::exact_key::exact_keys;

/// Each row's hash of `columns`' exact keys (what `__hp_row_hash`
/// returns), for `rows` rows.
pub fn row_hashes(columns: &[ArrayRef], rows: usize) -> Result<Vec<u64>> {
    let mut hashes = vec![0u64; rows];
    create_hashes(&exact_keys(columns)?, &RandomState::with_seed(0), &mut hashes)?;
    Ok(hashes)
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct RowHash {
    signature: Signature,
}

impl RowHash {
    pub const NAME: &'static str = "__hp_row_hash";

    pub fn udf() -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(Self {
            signature: Signature::variadic_any(Volatility::Immutable),
        }))
    }
}

impl ScalarUDFImpl for RowHash {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::UInt64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let columns = args
            .args
            .iter()
            .map(|a| a.to_array(args.number_rows))
            .collect::<Result<Vec<_>>>()?;
        let hashes = row_hashes(&columns, args.number_rows)?;
        Ok(ColumnarValue::Array(Arc::new(UInt64Array::from(hashes))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray, Int64Array, StringArray};
    use datafusion::arrow::datatypes::UInt64Type;
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn equal_rows_hash_alike_and_the_sql_function_agrees_with_row_hashes() {
        let ctx = SessionContext::new();
        ctx.register_udf(RowHash::udf().as_ref().clone());
        let batches = ctx
            .sql("SELECT __hp_row_hash(id, s) FROM (VALUES (1, 'a'), (1, 'a'), (1, NULL), (2, 'a')) AS v(id, s)")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let got: Vec<u64> = batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<UInt64Type>().values().to_vec())
            .collect();
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], got[1]);
        assert!(got[0] != got[2] && got[0] != got[3] && got[2] != got[3], "{got:?}");
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 1, 1, 2]));
        let ss: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("a"), None, Some("a")]));
        let direct = row_hashes(&[ids, ss], 4).unwrap();
        assert_eq!(direct, got);
        assert_eq!(batches[0].column(0).null_count(), 0);
    }
}
