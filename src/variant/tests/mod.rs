//! Cross-cutting tests: JSON round trips, fuzzing of the decoder, and SQL
//! through a real `SessionContext` (including Parquet files).

mod fuzz;
mod roundtrip;
mod sql;
