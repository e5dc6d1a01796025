//! The table format, printed as the rows arrive.
//!
//! Arrow's pretty printer lays out a whole result at once, so printing three
//! million rows held every cell as a string (gigabytes) before the first line
//! appeared. This writer keeps a fixed budget instead, as psql's `FETCH_COUNT`
//! does: the first [`WIDTH_ROWS`] rows fix the column widths and are printed,
//! then each batch is formatted, printed and dropped. A later value wider
//! than its column widens it from there on, with a rule line that shows the
//! new widths:
//!
//! ```text
//! +----+---+
//! | id | s |
//! +----+---+
//! | 1  | a |
//! +----+----------------+
//! | 2  | a longer value |
//! +----+----------------+
//! ```
//!
//! A result of up to [`WIDTH_ROWS`] rows prints exactly as Arrow's pretty
//! printer (and datafusion-cli) prints it: the same borders, padding, display
//! widths (East Asian wide characters count two) and multi-line cells.

use std::io::Write;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use unicode_width::UnicodeWidthStr;

use super::output::io;
use crate::error::{Error, Result};

/// Rows that fix the column widths before anything is printed.
pub const WIDTH_ROWS: usize = 1000;

/// Writes one result as a boxed table, batch by batch.
pub struct TableText<'a> {
    out: &'a mut dyn Write,
    options: FormatOptions<'a>,
    header: Vec<String>,
    /// Column widths, once the first rows are printed.
    widths: Option<Vec<usize>>,
    /// Rows formatted before the widths are fixed.
    pending: Vec<Cells>,
    pending_rows: usize,
    line: String,
}

impl<'a> TableText<'a> {
    pub fn new(out: &'a mut dyn Write, header: Vec<String>, options: FormatOptions<'a>) -> Self {
        Self {
            out,
            options,
            header,
            widths: None,
            pending: Vec::new(),
            pending_rows: 0,
            line: String::new(),
        }
    }

    /// Format and (once the widths are fixed) print the rows of `batch`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let cells = Cells::format(batch, &self.options)?;
        if self.widths.is_some() {
            return self.print(&cells);
        }
        self.pending_rows += cells.rows;
        self.pending.push(cells);
        if self.pending_rows >= WIDTH_ROWS {
            self.start()?;
        }
        Ok(())
    }

    /// Print what is held back and the bottom border.
    pub fn finish(mut self) -> Result<()> {
        if self.widths.is_none() {
            self.start()?;
        }
        let widths = self.widths.take().unwrap_or_default();
        self.rule(&widths)
    }

    /// Fix the widths from the header and the rows held back; print them.
    fn start(&mut self) -> Result<()> {
        // As arrow's tables: a column is at least one character wide.
        let mut widths: Vec<usize> = self.header.iter().map(|h| lines_width(h).max(1)).collect();
        for cells in &self.pending {
            cells.widen(&mut widths);
        }
        self.rule(&widths)?;
        let names = std::mem::take(&mut self.header);
        let header: Vec<&str> = names.iter().map(String::as_str).collect();
        self.row(&widths, &header)?;
        self.rule(&widths)?;
        self.widths = Some(widths);
        for cells in std::mem::take(&mut self.pending) {
            self.print(&cells)?;
        }
        Ok(())
    }

    fn print(&mut self, cells: &Cells) -> Result<()> {
        let mut widths = self.widths.take().unwrap_or_default();
        if cells.widen(&mut widths) {
            self.rule(&widths)?;
        }
        let mut row: Vec<&str> = Vec::with_capacity(widths.len());
        for r in 0..cells.rows {
            row.clear();
            row.extend((0..widths.len()).map(|c| cells.get(c, r)));
            self.row(&widths, &row)?;
        }
        self.widths = Some(widths);
        Ok(())
    }

    /// `+----+---+`
    fn rule(&mut self, widths: &[usize]) -> Result<()> {
        self.line.clear();
        self.line.push('+');
        for w in widths {
            self.line.extend(std::iter::repeat_n('-', w + 2));
            self.line.push('+');
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes()).map_err(io)
    }

    /// `| a  | b |`, one text line per line of its tallest cell.
    fn row(&mut self, widths: &[usize], cells: &[&str]) -> Result<()> {
        let height = cells.iter().map(|c| c.split('\n').count()).max().unwrap_or(1);
        self.line.clear();
        if height == 1 {
            push_line(&mut self.line, widths, cells.iter().copied());
        } else {
            let mut parts: Vec<std::str::Split<'_, char>> = cells.iter().map(|c| c.split('\n')).collect();
            for _ in 0..height {
                push_line(&mut self.line, widths, parts.iter_mut().map(|p| p.next().unwrap_or("")));
            }
        }
        self.out.write_all(self.line.as_bytes()).map_err(io)
    }
}

fn push_line<'s>(line: &mut String, widths: &[usize], cells: impl Iterator<Item = &'s str>) {
    line.push('|');
    for (text, width) in cells.zip(widths) {
        line.push(' ');
        line.push_str(text);
        line.extend(std::iter::repeat_n(' ', width.saturating_sub(text_width(text)) + 1));
        line.push('|');
    }
    line.push('\n');
}

/// The display width of one line of text.
fn text_width(s: &str) -> usize {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        s.len()
    } else {
        s.width()
    }
}

/// The width of a cell: its widest line.
fn lines_width(s: &str) -> usize {
    s.split('\n').map(text_width).max().unwrap_or(0)
}

/// A batch formatted as text: per column, one string of all its cells and
/// where each ends (no string per cell).
struct Cells {
    rows: usize,
    columns: Vec<(String, Vec<usize>, usize)>,
}

impl Cells {
    fn format(batch: &RecordBatch, options: &FormatOptions<'_>) -> Result<Self> {
        let mut columns = Vec::with_capacity(batch.num_columns());
        for column in batch.columns() {
            let formatter = ArrayFormatter::try_new(column.as_ref(), options)?;
            let mut text = String::new();
            let mut ends = Vec::with_capacity(batch.num_rows());
            let mut width = 0;
            for row in 0..batch.num_rows() {
                let start = text.len();
                formatter
                    .value(row)
                    .write(&mut text)
                    .map_err(|e| Error::Invalid(format!("cannot format a value: {e}")))?;
                width = width.max(lines_width(&text[start..]));
                ends.push(text.len());
            }
            columns.push((text, ends, width));
        }
        Ok(Self {
            rows: batch.num_rows(),
            columns,
        })
    }

    fn get(&self, column: usize, row: usize) -> &str {
        let (text, ends, _) = &self.columns[column];
        let start = if row == 0 { 0 } else { ends[row - 1] };
        &text[start..ends[row]]
    }

    /// Widen `widths` to fit these cells; whether any grew.
    fn widen(&self, widths: &mut [usize]) -> bool {
        let mut grew = false;
        for (w, (_, _, width)) in widths.iter_mut().zip(&self.columns) {
            if width > w {
                *w = *width;
                grew = true;
            }
        }
        grew
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
    use datafusion::arrow::util::pretty::pretty_format_batches_with_options;
    use proptest::prelude::*;

    use super::*;

    fn render(batches: &[RecordBatch], header: Vec<String>) -> String {
        let mut out = Vec::new();
        let mut t = TableText::new(&mut out, header, FormatOptions::default().with_null("NULL"));
        for b in batches {
            t.write(b).unwrap();
        }
        t.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    fn batch(names: &[&str], strings: Vec<Option<String>>, ints: Vec<Option<i64>>) -> RecordBatch {
        RecordBatch::try_from_iter(vec![
            (names[0], Arc::new(StringArray::from(strings)) as ArrayRef),
            (names[1], Arc::new(Int64Array::from(ints)) as ArrayRef),
        ])
        .unwrap()
    }

    fn text() -> impl Strategy<Value = Option<String>> {
        prop::option::of(prop::string::string_regex("[a-z é日本\\n\\t|-]{0,12}").unwrap())
    }

    proptest! {
        /// Up to WIDTH_ROWS rows print exactly as Arrow's pretty printer prints them.
        #[test]
        fn small_results_print_as_arrow_prints_them(
            rows in prop::collection::vec((text(), prop::option::of(any::<i64>())), 0..40),
            chunk in 1usize..7,
            names in prop::sample::select(vec![["s", "n"], ["", "日本"], ["a\nb", "long name"]]),
        ) {
            let (strings, ints): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
            let whole = batch(&names, strings.clone(), ints.clone());
            let chunks: Vec<RecordBatch> = (0..whole.num_rows())
                .step_by(chunk)
                .map(|s| whole.slice(s, chunk.min(whole.num_rows() - s)))
                .collect();
            let arrow = pretty_format_batches_with_options(
                &[whole.clone()],
                &FormatOptions::default().with_null("NULL"),
            ).unwrap().to_string() + "\n";
            prop_assert_eq!(render(&chunks, names.iter().map(|n| n.to_string()).collect()), arrow);
        }
    }

    #[test]
    fn later_wider_values_widen_their_column_with_a_rule() {
        let first: Vec<Option<String>> = (0..WIDTH_ROWS).map(|_| Some("a".to_string())).collect();
        let out = render(
            &[
                batch(&["s", "n"], first, vec![Some(1); WIDTH_ROWS]),
                batch(&["s", "n"], vec![Some("a longer value".into())], vec![Some(2)]),
            ],
            vec!["s".into(), "n".into()],
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[..4], ["+---+---+", "| s | n |", "+---+---+", "| a | 1 |"]);
        assert_eq!(
            lines[lines.len() - 3..],
            [
                "+----------------+---+",
                "| a longer value | 2 |",
                "+----------------+---+"
            ]
        );
        assert_eq!(lines.len(), 3 + WIDTH_ROWS + 3);
    }
}
