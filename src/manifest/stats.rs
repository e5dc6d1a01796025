//! Column statistics gathered while writing a data file.
//!
//! Min/max come from DataFusion's own min/max accumulators (vectorized, one
//! call per batch and column). Floats need care, because the engine compares
//! them in IEEE total order (NaN above everything, `-0.0 < 0.0`) while the
//! accumulators skip NaN and treat the zeros as equal:
//!
//! | values in the file   | min    | max    | why                                   |
//! |----------------------|--------|--------|---------------------------------------|
//! | `1.5, NaN`           | none   | none   | `x > 9` matches NaN: no bound is safe |
//! | `0.0, 2.0`           | `-0.0` | `2.0`  | `x < 0.0` matches `-0.0`; widen zeros |
//! | `-1.0, -0.0`         | `-1.0` | `0.0`  | likewise at the top                   |

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;
use datafusion::functions_aggregate::min_max::{MaxAccumulator, MinAccumulator};
use datafusion::logical_expr::Accumulator;

use crate::error::Result;
use crate::spec::ColumnStats;
use crate::values::widen_zero;

/// Whether min/max are kept for a column of this Arrow type.
pub fn has_bounds(dt: &DataType) -> bool {
    crate::values::is_flat_scalar(dt)
}

/// Accumulates null counts and bounds of one column across batches.
pub struct StatsCollector {
    field_id: i32,
    null_count: u64,
    bounds: Option<(MinAccumulator, MaxAccumulator)>,
    saw_nan: bool,
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
            saw_nan: false,
        })
    }

    pub fn update(&mut self, array: &ArrayRef) -> Result<()> {
        self.null_count += array.logical_null_count() as u64;
        if !self.saw_nan {
            self.saw_nan = has_nan(array);
        }
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
                if lo.is_null() || self.saw_nan {
                    (None, None)
                } else {
                    (Some(widen_zero(lo, true)), Some(widen_zero(hi, false)))
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

fn has_nan(array: &ArrayRef) -> bool {
    use datafusion::arrow::array::{AsArray, Float16Array};
    use datafusion::arrow::datatypes::{Float32Type, Float64Type};
    match array.data_type() {
        DataType::Float64 => array
            .as_primitive::<Float64Type>()
            .iter()
            .any(|v| v.is_some_and(f64::is_nan)),
        DataType::Float32 => array
            .as_primitive::<Float32Type>()
            .iter()
            .any(|v| v.is_some_and(f32::is_nan)),
        DataType::Float16 => array
            .as_any()
            .downcast_ref::<Float16Array>()
            .is_some_and(|a| a.iter().any(|v| v.is_some_and(|h| h.is_nan()))),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Float64Array;
    use datafusion::common::ScalarValue;
    use std::sync::Arc;

    fn stats(values: Vec<Option<f64>>) -> ColumnStats {
        let mut c = StatsCollector::new(1, &DataType::Float64).unwrap();
        c.update(&(Arc::new(Float64Array::from(values)) as ArrayRef)).unwrap();
        c.finish().unwrap()
    }

    #[test]
    fn nan_drops_bounds() {
        let s = stats(vec![Some(1.5), Some(f64::NAN), None]);
        assert_eq!((s.min, s.max, s.null_count), (None, None, 1));
    }

    #[test]
    fn zero_bounds_cover_both_signs() {
        let s = stats(vec![Some(0.0), Some(2.0)]);
        let Some(ScalarValue::Float64(Some(min))) = s.min else {
            panic!()
        };
        assert!(min == 0.0 && min.is_sign_negative());
        let s = stats(vec![Some(-1.0), Some(-0.0)]);
        let Some(ScalarValue::Float64(Some(max))) = s.max else {
            panic!()
        };
        assert!(max == 0.0 && max.is_sign_positive());
    }
}
