//! One line of an exposition: a byte cursor and the sample-line grammar.

use super::{ParseError, error};

/// A cursor over one line (already trimmed; no `\n`). Every position it stops at is an
/// ASCII byte, so slicing there is always on a char boundary.
pub(super) struct Cursor<'a> {
    s: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(s: &'a str, line: usize) -> Cursor<'a> {
        Cursor { s, pos: 0, line }
    }

    pub(super) fn err(&self, message: impl Into<String>) -> ParseError {
        error(self.line, message)
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    pub(super) fn skip_blank(&mut self) -> bool {
        let start = self.pos;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        self.pos > start
    }

    /// Up to the next blank or the end.
    pub(super) fn token(&mut self) -> &'a str {
        let start = self.pos;
        while !matches!(self.peek(), None | Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    pub(super) fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    /// The metric name of a HELP/TYPE/UNIT line: legacy, or quoted (UTF-8 names).
    pub(super) fn meta_name(&mut self, what: &str) -> Result<String, ParseError> {
        if !self.skip_blank() && self.peek().is_some() {
            return Err(self.err(format!("`{what}` must be followed by a blank")));
        }
        if self.peek() == Some(b'"') {
            return self.quoted("metric name");
        }
        let name = self.token();
        if name.is_empty() {
            return Err(self.err(format!("a {what} line without a metric name")));
        }
        if !is_metric_name(name) {
            return Err(self.err(format!("invalid metric name `{name}` in a {what} line")));
        }
        Ok(name.to_string())
    }

    fn metric_name(&mut self) -> &'a str {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
        {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    fn label_name(&mut self) -> &'a str {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    /// A `"…"` string at the cursor with `\\`, `\"`, `\n` unescaped (any other escape is
    /// kept literally).
    fn quoted(&mut self, what: &str) -> Result<String, ParseError> {
        debug_assert_eq!(self.peek(), Some(b'"'));
        self.pos += 1;
        let bytes = self.s.as_bytes();
        let start = self.pos;
        let mut out: Option<String> = None;
        let mut run = start;
        loop {
            match bytes.get(self.pos) {
                None => return Err(self.err(format!("unterminated {what}"))),
                Some(b'"') => break,
                Some(b'\\') => {
                    let o = out.get_or_insert_with(String::new);
                    o.push_str(&self.s[run..self.pos]);
                    match bytes.get(self.pos + 1) {
                        Some(b'\\') => o.push('\\'),
                        Some(b'"') => o.push('"'),
                        Some(b'n') => o.push('\n'),
                        None => return Err(self.err(format!("unterminated {what}"))),
                        // Literal: the next char is copied with the following run.
                        Some(_) => {
                            o.push('\\');
                            self.pos += 1;
                            run = self.pos;
                            continue;
                        }
                    }
                    self.pos += 2;
                    run = self.pos;
                }
                Some(_) => self.pos += 1,
            }
        }
        let value = match out {
            Some(mut o) => {
                o.push_str(&self.s[run..self.pos]);
                o
            }
            None => self.s[start..self.pos].to_string(),
        };
        self.pos += 1;
        Ok(value)
    }
}

fn is_metric_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
}

/// HELP text: `\\` and `\n` (and OpenMetrics's `\"`) unescaped, anything else literal.
pub(super) fn unescape_help(s: &str, om: bool) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('"') if om => out.push('"'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

pub(super) struct SampleLine {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
    pub timestamp_ms: Option<i64>,
}

/// `name [{labels}] value [timestamp]` (OpenMetrics: `[# exemplar]` after that).
pub(super) fn sample(line: &str, no: usize, om: bool) -> Result<SampleLine, ParseError> {
    let mut c = Cursor::new(line, no);
    let mut name: Option<String> = None;
    if c.peek() != Some(b'{') {
        let n = c.metric_name();
        if n.is_empty() || n.as_bytes()[0].is_ascii_digit() {
            return Err(c.err(format!(
                "`{}` does not start with a metric name",
                clip(c.token_at(c.pos))
            )));
        }
        if !matches!(c.peek(), None | Some(b' ' | b'\t' | b'{')) {
            let bad = c.rest().chars().next().unwrap_or(' ');
            return Err(c.err(format!("invalid character `{bad}` in metric name `{n}`")));
        }
        name = Some(n.to_string());
        c.skip_blank();
    }
    let mut labels = Vec::new();
    if c.peek() == Some(b'{') {
        c.pos += 1;
        labels_body(&mut c, &mut name, &mut labels)?;
    }
    let Some(name) = name else {
        return Err(c.err("a sample line without a metric name"));
    };
    labels.sort_unstable_by(|a: &(String, String), b| a.0.cmp(&b.0));
    if let Some(w) = labels.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(c.err(format!("label `{}` repeated in `{name}`", w[0].0)));
    }
    c.skip_blank();
    let tok = c.token();
    if tok.is_empty() {
        return Err(c.err(format!("a sample of `{name}` without a value")));
    }
    let Some(value) = parse_value(tok) else {
        return Err(c.err(format!(
            "the value `{}` of `{name}` is not a number",
            clip(tok)
        )));
    };
    c.skip_blank();
    let mut timestamp_ms = None;
    if !(c.peek().is_none() || om && c.peek() == Some(b'#')) {
        let tok = c.token();
        timestamp_ms = Some(
            if om {
                om_timestamp(tok)
            } else {
                tok.parse::<i64>().ok()
            }
            .ok_or_else(|| {
                let unit = if om {
                    "seconds"
                } else {
                    "an integer of milliseconds"
                };
                c.err(format!(
                    "the timestamp `{}` of `{name}` is not {unit}",
                    clip(tok)
                ))
            })?,
        );
        c.skip_blank();
    }
    // OpenMetrics exemplars (` # {…} v [ts]`) are skipped.
    if !(c.peek().is_none() || om && c.peek() == Some(b'#')) {
        return Err(c.err(format!(
            "unexpected text `{}` after the sample of `{name}`",
            clip(c.rest())
        )));
    }
    Ok(SampleLine {
        name,
        labels,
        value,
        timestamp_ms,
    })
}

/// After `{`: `label="value"` pairs (a trailing comma is legal), the first item may be a
/// quoted metric name; consumes the closing `}`.
fn labels_body(
    c: &mut Cursor,
    name: &mut Option<String>,
    labels: &mut Vec<(String, String)>,
) -> Result<(), ParseError> {
    let mut first = true;
    loop {
        c.skip_blank();
        let label = match c.peek() {
            Some(b'}') => {
                c.pos += 1;
                return Ok(());
            }
            None => return Err(c.err("unterminated label set (no `}`)")),
            Some(b'"') => {
                let q = c.quoted("quoted name")?;
                c.skip_blank();
                if c.peek() == Some(b'=') {
                    q
                } else {
                    if name.is_some() || !first {
                        return Err(c.err(format!(
                            "the quoted metric name `{}` must be the first item in braces \
                             and the only name",
                            clip(&q)
                        )));
                    }
                    *name = Some(q);
                    first = false;
                    separator(c, "the metric name")?;
                    if c.s.as_bytes()[c.pos - 1] == b'}' {
                        return Ok(());
                    }
                    continue;
                }
            }
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => c.label_name().to_string(),
            Some(_) => {
                let bad = c.rest().chars().next().unwrap_or(' ');
                return Err(c.err(format!("invalid character `{bad}` in the label set")));
            }
        };
        first = false;
        c.skip_blank();
        if c.peek() != Some(b'=') {
            return Err(c.err(format!("expected `=` after label name `{label}`")));
        }
        c.pos += 1;
        c.skip_blank();
        if c.peek() != Some(b'"') {
            return Err(c.err(format!("the value of label `{label}` is not quoted")));
        }
        let value = c.quoted(&format!("value of label `{label}`"))?;
        labels.push((label, value));
        separator(c, "a label")?;
        if c.s.as_bytes()[c.pos - 1] == b'}' {
            return Ok(());
        }
    }
}

/// Consumes `,` or `}` after an item.
fn separator(c: &mut Cursor, after: &str) -> Result<(), ParseError> {
    c.skip_blank();
    match c.peek() {
        Some(b',' | b'}') => {
            c.pos += 1;
            Ok(())
        }
        None => Err(c.err("unterminated label set (no `}`)")),
        Some(_) => Err(c.err(format!(
            "expected `,` or `}}` after {after}, found `{}`",
            clip(c.rest())
        ))),
    }
}

impl<'a> Cursor<'a> {
    fn token_at(&self, pos: usize) -> &'a str {
        let rest = &self.s[pos..];
        rest.split([' ', '\t']).next().unwrap_or(rest)
    }
}

/// Go `ParseFloat` syntax: decimal and exponent forms, `NaN`, `±Inf`, `Infinity` in any case
/// (Rust's parser accepts that set), and Go's hex floats (`0x1.8p3`).
fn parse_value(tok: &str) -> Option<f64> {
    tok.parse::<f64>().ok().or_else(|| hex_float(tok))
}

/// `[±]0x<hex digits>[.<hex digits>]p[±]<decimal>`: Go requires the `p` exponent, and allows
/// `_` between digits after a base prefix. Digits past the 15th are dropped (rounding toward
/// zero), which no exposition needs.
fn hex_float(tok: &str) -> Option<f64> {
    let (neg, rest) = match tok.as_bytes().first()? {
        b'-' => (true, &tok[1..]),
        b'+' => (false, &tok[1..]),
        _ => (false, tok),
    };
    let rest = rest
        .strip_prefix("0x")
        .or_else(|| rest.strip_prefix("0X"))?;
    let (mantissa, exp) = rest.split_once(['p', 'P'])?;
    let exp: i32 = exp.parse().ok()?;
    let (mut m, mut scale, mut digits, mut dot) = (0u64, 0i32, 0, false);
    for b in mantissa.bytes() {
        match b {
            b'.' if !dot => dot = true,
            b'_' => {}
            _ => {
                let d = u64::from(char::from(b).to_digit(16)?);
                digits += 1;
                if m >> 56 == 0 {
                    m = m << 4 | d;
                    if dot {
                        scale -= 4;
                    }
                } else if !dot {
                    scale += 4;
                }
            }
        }
    }
    if digits == 0 {
        return None;
    }
    let e = exp.saturating_add(scale);
    // In two halves, so that neither power alone overflows or underflows where the product
    // would not (and 0 × ∞ never happens).
    let v = if m == 0 {
        0.0
    } else {
        m as f64 * 2f64.powi(e / 2) * 2f64.powi(e - e / 2)
    };
    Some(if neg { -v } else { v })
}

/// OpenMetrics timestamps are float seconds.
fn om_timestamp(tok: &str) -> Option<i64> {
    let s = tok.parse::<f64>().ok()?;
    let ms = (s * 1000.0).round();
    (ms.is_finite() && ms.abs() < 9.2e18).then_some(ms as i64)
}

/// At most 40 chars of a token, for messages.
fn clip(s: &str) -> &str {
    match s.char_indices().nth(40) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
