//! Column statistics gathered while writing a data file.
//!
//! Min/max come from DataFusion's own min/max accumulators (vectorized, one
//! call per batch and column) so they order values exactly like the engine
//! compares them when pruning.

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;
use datafusion::functions_aggregate::min_max::{MaxAccumulator, MinAccumulator};
use datafusion::logical_expr::Accumulator;

use super::entry::ColumnStats;
use crate::error::Result;

/// Whether min/max are kept for a column of this Arrow type.
pub fn has_bounds(dt: &DataType) -> bool {
    dt.is_primitive()
        || matches!(
            dt,
            DataType::Boolean
                | DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_)
        )
}

/// Accumulates null counts and bounds of one column across batches.
pub struct StatsCollector {
    field_id: i32,
    null_count: u64,
    bounds: Option<(MinAccumulator, MaxAccumulator)>,
}

impl std::fmt::Debug for StatsCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsCollector")
            .field("field_id", &self.field_id)
            .finish()
    }
}

impl StatsCollector {
    pub fn new(field_id: i32, dt: &DataType) -> Result<Self> {
        let bounds = if has_bounds(dt) {
            Some((MinAccumulator::try_new(dt)?, MaxAccumulator::try_new(dt)?))
        } else {
            None
        };
        Ok(Self {
            field_id,
            null_count: 0,
            bounds,
        })
    }

    pub fn update(&mut self, array: &ArrayRef) -> Result<()> {
        self.null_count += array.logical_null_count() as u64;
        if let Some((min, max)) = &mut self.bounds {
            min.update_batch(std::slice::from_ref(array))?;
            max.update_batch(std::slice::from_ref(array))?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<ColumnStats> {
        let (min, max) = match &mut self.bounds {
            Some((min, max)) => {
                let (lo, hi) = (min.evaluate()?, max.evaluate()?);
                if lo.is_null() {
                    (None, None)
                } else {
                    (Some(lo), Some(hi))
                }
            }
            None => (None, None),
        };
        Ok(ColumnStats {
            field_id: self.field_id,
            null_count: self.null_count,
            min,
            max,
        })
    }
}
