//! What a statement selects, before anything is read: the data files a
//! predicate may match (`files`) and the rows a merge-on-read statement
//! found, by data file and position (`positions`).
//!
//! Both the scan (`provider/`) and the write operations (`table/`) choose
//! files here, so this layer sits below both and imports neither.
//!
//! | a query on `events`, `day(ts)`, 3 files | `files::plan_files` keeps |
//! |------------------------------------------|---------------------------|
//! | `WHERE ts >= '2024-05-02'`               | the files of the days 2024-05-02 and later |
//! | `WHERE id = 7`                           | the files whose `id` min/max range holds 7 |

pub mod changes;
pub mod copies;
pub mod files;
pub mod identity_columns;
pub mod lineage;
pub mod positions;

pub use files::{FilePlan, PlannedFile, SpecFileCount, plan_files};
pub use positions::Positions;
