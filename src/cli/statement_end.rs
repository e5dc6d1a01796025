//! When the prompt has read a whole statement.
//!
//! The prompt collects lines until its buffer ends in a `;` that is a token
//! of its own: a `;` inside a string, a quoted identifier, a `--` or `/* */`
//! comment does not count, and nor does one followed by an unterminated
//! string or comment. The buffer is tokenized with the same sqlparser
//! tokenizer (and dialect) that [`crate::sql::parse_statements`] splits
//! statements with, so the prompt and `-c`/`-f` scripts agree on where a
//! statement ends.

use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

/// Whether `buf` ends with a complete statement: its last token other than
/// whitespace and comments is `;`. Text the tokenizer rejects for another
/// reason than running out of input counts as complete, so that running it
/// reports the error instead of waiting for more lines.
pub fn is_complete(buf: &str) -> bool {
    match Tokenizer::new(&GenericDialect {}, buf).tokenize() {
        Ok(tokens) => tokens
            .iter()
            .rev()
            .find(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
            .is_some_and(|t| *t == Token::SemiColon),
        Err(e) => !unterminated(&e.message),
    }
}

/// Whether the buffer holds nothing but whitespace and comments, so that a
/// prompt command (`\d`, `quit`, …) may start here.
pub fn is_blank(buf: &str) -> bool {
    Tokenizer::new(&GenericDialect {}, buf)
        .tokenize()
        .is_ok_and(|tokens| tokens.iter().all(|t| matches!(t, Token::Whitespace(_) | Token::EOF)))
}

/// Tokenizer errors that mean "the input stopped inside a string, quoted
/// identifier or comment" (sqlparser 0.62's messages).
fn unterminated(message: &str) -> bool {
    message.contains("Unterminated") || message.contains("EOF")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semicolon_ends_a_statement_only_as_a_token() {
        assert!(is_complete("select 1;"));
        assert!(is_complete("select ';';  \n"));
        assert!(is_complete("select 1; -- done\n"));
        assert!(is_complete("select 1; /* done */"));
        assert!(!is_complete("select 1"));
        assert!(!is_complete("select ';"));
        assert!(!is_complete("select 'it''s;"));
        assert!(!is_complete("select 1 -- ;\n"));
        assert!(!is_complete("select 1 /* ; */"));
        assert!(!is_complete("select 1 /* ;\n"));
        assert!(!is_complete("select 1 /* /* nested */ ; */"));
        assert!(!is_complete("select \"a;b"));
        assert!(!is_complete("select `a;"));
        assert!(!is_complete("select E'\\';"));
        assert!(is_complete("select \"a;b\";"));
    }

    #[test]
    fn text_that_cannot_be_tokenized_is_handed_on() {
        // A tokenizer error other than running out of input: run it and
        // let the error be reported rather than wait for more input.
        assert!(is_complete("select 1 ._x;"));
    }

    #[test]
    fn blank_is_whitespace_and_comments() {
        assert!(is_blank(""));
        assert!(is_blank("  -- note\n/* more */\n"));
        assert!(!is_blank("select"));
        assert!(!is_blank("'"));
    }
}
