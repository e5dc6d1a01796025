//! Iceberg specs and summaries in our shape.
//!
//! A table spec of ours is (schema, partition spec). Iceberg keeps them
//! apart: schemas evolve by id, partition specs by id, and a manifest names
//! only its partition spec. Columns are matched by field id, so every
//! Iceberg partition spec is paired with the schema the snapshot is read
//! with (the current one, or the snapshot's own for time travel):
//!
//! | Iceberg spec 2 of `evolved`                 | our table spec 2 (schema = read schema)  |
//! |---------------------------------------------|------------------------------------------|
//! | 1001 `ts_day`: day(3)                       | 1001 `ts_day`: day(ts)                   |
//! | 1003 `id_bucket`: `bucket[4](1)`            | 1003 `id_bucket`: `bucket[4](id)`        |
//! | 1005 `z`: zorder(1) (unknown transform)     | — left out: read, never pruned on        |
//!
//! A field whose transform is unknown, whose source column the read schema
//! lacks, or whose transform does not apply to the source type is left out:
//! its files are still read, just not pruned by it.

use datafusion::arrow::datatypes::DataType;

use super::bounds_read::decode_bound;
use super::manifest_list_read::RawFieldSummary;
use super::metadata::IcebergSpec;
use crate::spec::{FieldSummary, PartitionField, PartitionSpec, Schema, TableSpec};
use crate::transform::Transform;

/// Our table spec for an Iceberg partition spec, and which of its fields were kept.
#[derive(Debug, Clone)]
pub struct SpecMapping {
    pub spec: TableSpec,
    /// Per Iceberg partition field (in Iceberg order): its result type when
    /// kept in our spec, `None` when left out.
    pub kept: Vec<Option<DataType>>,
    pub iceberg: IcebergSpec,
}

impl SpecMapping {
    pub fn new(iceberg: &IcebergSpec, schema: &Schema) -> Self {
        let mut fields = Vec::new();
        let mut kept = Vec::new();
        for f in &iceberg.fields {
            let result = Transform::parse(&f.transform).ok().and_then(|transform| {
                let source = schema.field_by_id(f.source_id)?;
                if source.field_type == crate::spec::Type::Variant {
                    return None;
                }
                let dt = transform.result_type(&source.field_type.to_arrow()).ok()?;
                Some((transform, dt))
            });
            match result {
                Some((transform, dt)) => {
                    fields.push(PartitionField {
                        field_id: f.field_id,
                        source_id: f.source_id,
                        transform,
                        name: f.name.clone(),
                    });
                    kept.push(Some(dt));
                }
                None => kept.push(None),
            }
        }
        Self {
            spec: TableSpec::new(iceberg.spec_id, schema.clone(), PartitionSpec { fields }),
            kept,
            iceberg: iceberg.clone(),
        }
    }

    /// Partition summaries for our spec's fields, from the manifest list's
    /// (all unknown when the list has none).
    pub fn summaries(&self, raw: Option<&[RawFieldSummary]>) -> Vec<FieldSummary> {
        let mut out = Vec::new();
        for (i, kept) in self.kept.iter().enumerate() {
            let Some(dt) = kept else { continue };
            out.push(match raw.and_then(|r| r.get(i)) {
                Some(s) => summary(s, dt),
                None => unknown_summary(),
            });
        }
        out
    }
}

fn unknown_summary() -> FieldSummary {
    FieldSummary {
        contains_null: true,
        contains_nan: true,
        lower_bound: None,
        upper_bound: None,
        empty_bounds: false,
    }
}

/// One field's summary with bounds in our serialized form. Bounds that
/// cannot be decoded or serialized make the summary unknown.
fn summary(raw: &RawFieldSummary, dt: &DataType) -> FieldSummary {
    let ser = |b: &Option<Vec<u8>>| {
        b.as_deref()
            .and_then(|b| decode_bound(b, dt))
            .and_then(|v| crate::values::serialize_bound(&v).ok().flatten())
    };
    let (lower, upper) = (ser(&raw.lower), ser(&raw.upper));
    let bounded = lower.is_some() && upper.is_some();
    let written = raw.lower.is_some() || raw.upper.is_some();
    FieldSummary {
        // Bounds written but unreadable: nothing can be ruled out.
        contains_null: raw.contains_null || (written && !bounded),
        contains_nan: raw.contains_nan.unwrap_or(dt.is_floating()),
        lower_bound: if bounded { lower } else { None },
        upper_bound: if bounded { upper } else { None },
        empty_bounds: !written || bounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iceberg::metadata::IcebergPartitionField;

    fn schema() -> Schema {
        serde_json::from_str(
            r#"{"fields":[{"id":1,"name":"id","required":true,"type":"long"},
                          {"id":3,"name":"ts","required":false,"type":"timestamp"}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn unknown_transforms_and_missing_sources_are_left_out() {
        let ice = IcebergSpec {
            spec_id: 2,
            fields: vec![
                IcebergPartitionField {
                    field_id: 1000,
                    source_id: 3,
                    transform: "day".into(),
                    name: "ts_day".into(),
                },
                IcebergPartitionField {
                    field_id: 1001,
                    source_id: 1,
                    transform: "zorder".into(),
                    name: "z".into(),
                },
                IcebergPartitionField {
                    field_id: 1002,
                    source_id: 9,
                    transform: "identity".into(),
                    name: "gone".into(),
                },
            ],
        };
        let m = SpecMapping::new(&ice, &schema());
        assert_eq!(m.spec.partition_spec.fields.len(), 1);
        assert_eq!(m.kept, vec![Some(DataType::Date32), None, None]);
        let raw = [
            RawFieldSummary {
                contains_null: false,
                contains_nan: None,
                lower: Some(19723i32.to_le_bytes().to_vec()),
                upper: Some(19724i32.to_le_bytes().to_vec()),
            },
            RawFieldSummary {
                contains_null: false,
                contains_nan: None,
                lower: None,
                upper: None,
            },
        ];
        let s = m.summaries(Some(&raw));
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].lower_bound.as_deref(), Some("2024-01-01"));
        assert_eq!(s[0].upper_bound.as_deref(), Some("2024-01-02"));
        assert!(!s[0].contains_nan);
    }
}
