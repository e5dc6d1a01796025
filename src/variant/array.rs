//! Reading and building Arrow variant columns row by row.
//!
//! [`VariantArrayView`] reads `(metadata, value)` pairs from any variant
//! struct (children Binary, LargeBinary or BinaryView, in any order):
//!
//! | struct valid | value child | row read as                     |
//! |--------------|-------------|---------------------------------|
//! | no           | any         | SQL NULL (`None`)               |
//! | yes          | bytes       | `Some((metadata, value))`       |
//! | yes          | NULL / none | `Some((metadata, [0x00]))`: variant null |
//!
//! Shredded structs (with `typed_value`) must first go through
//! [`super::shredding::unshred_variant_array`].
//! [`VariantArrayBuilder`] produces [`super::arrow_type::variant_data_type`].

use std::sync::Arc;

use arrow::array::{
    Array, AsArray, BinaryArray, BinaryBuilder, BinaryViewArray, LargeBinaryArray, NullBufferBuilder, StructArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::DataType;

use super::arrow_type::variant_fields;
use super::{Result, VariantError};

const NULL_VALUE: &[u8] = &[0x00];

/// One binary child of any of the three binary layouts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Bin<'a> {
    Binary(&'a BinaryArray),
    Large(&'a LargeBinaryArray),
    View(&'a BinaryViewArray),
}

impl<'a> Bin<'a> {
    pub(crate) fn try_new(array: &'a dyn Array, name: &str) -> Result<Self> {
        Ok(match array.data_type() {
            DataType::Binary => Bin::Binary(array.as_binary::<i32>()),
            DataType::LargeBinary => Bin::Large(array.as_binary::<i64>()),
            DataType::BinaryView => Bin::View(array.as_binary_view()),
            other => {
                return Err(VariantError::Unsupported(format!(
                    "variant field `{name}` must be binary, found {other}"
                )));
            }
        })
    }

    #[inline]
    pub(crate) fn value(&self, i: usize) -> &'a [u8] {
        match self {
            Bin::Binary(a) => a.value(i),
            Bin::Large(a) => a.value(i),
            Bin::View(a) => a.value(i),
        }
    }

    #[inline]
    pub(crate) fn is_null(&self, i: usize) -> bool {
        match self {
            Bin::Binary(a) => a.is_null(i),
            Bin::Large(a) => a.is_null(i),
            Bin::View(a) => a.is_null(i),
        }
    }
}

/// Row access to an (unshredded) variant struct array.
#[derive(Debug, Clone)]
pub struct VariantArrayView<'a> {
    len: usize,
    nulls: Option<&'a NullBuffer>,
    metadata: Bin<'a>,
    value: Option<Bin<'a>>,
}

impl<'a> VariantArrayView<'a> {
    /// Wraps a struct array with a binary `metadata` and an optional binary `value`.
    pub fn try_new(array: &'a dyn Array) -> Result<Self> {
        let s = array.as_struct_opt().ok_or_else(|| {
            VariantError::Unsupported(format!(
                "expected a variant (struct of metadata and value), found {}",
                array.data_type()
            ))
        })?;
        if s.column_by_name("typed_value").is_some() {
            return Err(VariantError::Unsupported("shredded variant: unshred it first".into()));
        }
        let metadata = s
            .column_by_name("metadata")
            .ok_or_else(|| VariantError::Unsupported("variant struct has no `metadata` field".into()))?;
        let value = s
            .column_by_name("value")
            .map(|v| Bin::try_new(v.as_ref(), "value"))
            .transpose()?;
        Ok(Self {
            len: s.len(),
            nulls: s.nulls(),
            metadata: Bin::try_new(metadata.as_ref(), "metadata")?,
            value,
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `(metadata, value)` of row `i`, `None` for SQL NULL.
    #[inline]
    pub fn get(&self, i: usize) -> Option<(&'a [u8], &'a [u8])> {
        if i >= self.len || self.nulls.is_some_and(|n| n.is_null(i)) {
            return None;
        }
        let value = match &self.value {
            Some(v) if !v.is_null(i) => v.value(i),
            _ => NULL_VALUE,
        };
        let metadata = if self.metadata.is_null(i) {
            &[][..]
        } else {
            self.metadata.value(i)
        };
        Some((metadata, value))
    }
}

/// Builder of a variant column of type [`super::arrow_type::variant_data_type`].
#[derive(Debug)]
pub struct VariantArrayBuilder {
    metadata: BinaryBuilder,
    value: BinaryBuilder,
    nulls: NullBufferBuilder,
}

impl VariantArrayBuilder {
    /// Room for `capacity` rows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            metadata: BinaryBuilder::with_capacity(capacity, capacity * 8),
            value: BinaryBuilder::with_capacity(capacity, capacity * 16),
            nulls: NullBufferBuilder::new(capacity),
        }
    }

    /// Appends one variant.
    #[inline]
    pub fn append_variant(&mut self, metadata: &[u8], value: &[u8]) {
        self.metadata.append_value(metadata);
        self.value.append_value(value);
        self.nulls.append_non_null();
    }

    /// Appends SQL NULL.
    pub fn append_null(&mut self) {
        self.metadata.append_value([]);
        self.value.append_value([]);
        self.nulls.append_null();
    }

    /// Rows so far.
    pub fn len(&self) -> usize {
        self.nulls.len()
    }

    /// True when no rows were appended.
    pub fn is_empty(&self) -> bool {
        self.nulls.is_empty()
    }

    /// The struct array.
    pub fn finish(mut self) -> Result<StructArray> {
        StructArray::try_new(
            variant_fields(),
            vec![Arc::new(self.metadata.finish()), Arc::new(self.value.finish())],
            self.nulls.finish(),
        )
        .map_err(|e| VariantError::Unsupported(format!("building variant array: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_reads() {
        let mut b = VariantArrayBuilder::with_capacity(2);
        b.append_variant(&[0x11, 0, 0], &[0x0c, 7]);
        b.append_null();
        let a = b.finish().unwrap();
        assert_eq!(a.data_type(), &super::super::arrow_type::variant_data_type());
        let view = VariantArrayView::try_new(&a).unwrap();
        assert_eq!(view.get(0), Some((&[0x11u8, 0, 0][..], &[0x0cu8, 7][..])));
        assert_eq!(view.get(1), None);
        assert_eq!(view.get(2), None);
    }
}
