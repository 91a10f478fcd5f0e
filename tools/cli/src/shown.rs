//! Text from the API as the terminal is given it. Ids a tenant chose (scope, step and effect
//! keys), error messages and a model's answer can hold control characters; written raw, an
//! escape sequence would move the cursor, retitle the window or set the clipboard (OSC 52).
//! Each control character is written escaped instead (`\u{1b}`), so the text is seen, never run.

use std::borrow::Cow;

/// One line: every control character escaped, line breaks included.
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    escaped(text, |_| false)
}

/// A block of text (an answer, a message): its line breaks and tabs kept, every other control
/// character escaped.
pub(crate) fn block(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c == '\n' || c == '\t')
}

fn escaped(text: &str, kept: impl Fn(char) -> bool) -> Cow<'_, str> {
    let shown = |c: char| !c.is_control() || kept(c);
    if text.chars().all(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown(c) {
            out.push(c);
        } else {
            out.extend(c.escape_unicode());
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_written_escaped_and_plain_text_untouched() {
        assert!(matches!(line("review-42/sentiment"), Cow::Borrowed(_)));
        assert_eq!(line("a\u{1b}]52;c;aGk=\u{7}b"), "a\\u{1b}]52;c;aGk=\\u{7}b");
        assert_eq!(line("two\nlines\r"), "two\\u{a}lines\\u{d}");
        assert_eq!(block("two\nlines\tand\u{1b}[2J\u{9b}"), "two\nlines\tand\\u{1b}[2J\\u{9b}");
        assert_eq!(block("é ✓ 日本"), "é ✓ 日本");
    }
}
