//! A strict check of a JSON record's syntax, for the records that go to arrow-json (the flat
//! fast path is strict itself and leaves every record it doubts to arrow-json). arrow-json's tape
//! skips commas like whitespace and reads `04` as 4, so `{"id":1,"v":"a" "id":2,"v":"b"}` — two
//! records glued together without a line break — became one row holding the second's values,
//! and `{"id":3,,"v":"c",}` a row. Here each of those is a malformed record, naming where.
//!
//! Strict except in one way arrow-json is lenient without changing a value: raw control
//! characters inside strings are kept as they are (see `flat_json`). UTF-8 and the values' fit to
//! their columns are checked elsewhere.

/// Err(why, with the byte offset) when `record` is not a sequence of JSON values separated by
/// whitespace. A record that is only cut short passes: the caller names that case itself, as it
/// checks that the record is exactly one object.
pub fn check(record: &[u8]) -> Result<(), String> {
    let mut parser = Parser { bytes: record, pos: 0, open: Vec::new() };
    parser.whitespace();
    while parser.pos < record.len() {
        match parser.value() {
            Err(_) if parser.pos >= record.len() => return Ok(()),
            result => result?,
        }
        parser.whitespace();
    }
    Ok(())
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The closing bracket of each open object (`}`) or array (`]`), innermost last.
    open: Vec<u8>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    fn error(&self, what: &str) -> String {
        match self.peek() {
            Some(b) if b.is_ascii_graphic() => format!("invalid JSON at byte {}: {what}, found '{}'", self.pos, b as char),
            Some(_) => format!("invalid JSON at byte {}: {what}", self.pos),
            None => format!("invalid JSON: the record ends where {what}"), // not returned by `check`
        }
    }

    /// One value and everything nested in it, without recursion.
    fn value(&mut self) -> Result<(), String> {
        loop {
            self.whitespace();
            match self.peek() {
                Some(b'{') => {
                    self.pos += 1;
                    self.whitespace();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                    } else {
                        self.open.push(b'}');
                        self.member_name()?;
                        continue;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.whitespace();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                    } else {
                        self.open.push(b']');
                        continue;
                    }
                }
                Some(b'"') => self.string()?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                _ => return Err(self.error("a value is due")),
            }
            // After a value: close what ends here, or go on to the next member or item.
            loop {
                let Some(&close) = self.open.last() else { return Ok(()) };
                self.whitespace();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if close == b'}' {
                            self.member_name()?;
                        }
                        break;
                    }
                    Some(b) if b == close => {
                        self.pos += 1;
                        self.open.pop();
                    }
                    _ if close == b'}' => return Err(self.error("',' or '}' is due after a member")),
                    _ => return Err(self.error("',' or ']' is due after an item")),
                }
            }
        }
    }

    /// `"name":` of an object member.
    fn member_name(&mut self) -> Result<(), String> {
        self.whitespace();
        if self.peek() != Some(b'"') {
            return Err(self.error("a member name in quotes is due"));
        }
        self.string()?;
        self.whitespace();
        if self.peek() != Some(b':') {
            return Err(self.error("':' is due after a member name"));
        }
        self.pos += 1;
        Ok(())
    }

    /// A string from its opening quote: escapes must be JSON's. Jumps from quote or backslash
    /// to the next, eight bytes at a time (strings are most of a record's bytes).
    fn string(&mut self) -> Result<(), String> {
        self.pos += 1;
        loop {
            match crate::flat_json::find_string_end(self.bytes, self.pos) {
                Some((end, _)) => self.pos = end,
                None => self.pos = self.bytes.len(),
            }
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.pos += 1,
                        Some(b'u') => {
                            let hex = self.bytes.get(self.pos + 1..self.pos + 5);
                            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                                return Err(self.error("four hex digits are due after \\u"));
                            }
                            self.pos += 5;
                        }
                        _ => return Err(self.error("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX) is due after a backslash")),
                    }
                }
                Some(_) => self.pos += 1, // not reached: the scan stops at a quote or a backslash
                None => return Err(self.error("a string's closing quote is due")),
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    return Err(self.error("a number may not have a leading zero"));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("a digit is due in a number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.error("a digit is due after a number's decimal point"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.error("a digit is due in a number's exponent"));
            }
            self.digits();
        }
        Ok(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), String> {
        if !self.bytes[self.pos..].starts_with(word) {
            return Err(self.error("a value is due"));
        }
        self.pos += word.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn valid_records_pass() {
        for record in [
            &br#"{"id": 1, "v": "a", "n": null, "b": [true, false, [], {}], "x": -0.5e-3, "y": 0, "z": 10E+2}"#[..],
            br#"  {"s": "tab\there \u00e9 \" \\ \/"}  "#,
            b"{\"raw\": \"a\x01b\"}", // a raw control character: kept, as arrow-json keeps it
            br#"{} {}"#,              // two values: the caller counts them
            br#"{"id": 1, "v": "a"#,  // cut short: the caller says so
            b"",
        ] {
            assert_eq!(check(record), Ok(()), "{}", String::from_utf8_lossy(record));
        }
    }

    #[test]
    fn glued_records_and_stray_commas_are_refused() {
        let cases: [(&[u8], &str); 11] = [
            (br#"{"id":1,"v":"a" "id":2,"v":"b"}"#, "',' or '}' is due after a member, found '\"'"),
            (br#"{"id":3,,"v":"c"}"#, "a member name in quotes is due, found ','"),
            (br#"{"id":3,"v":"c",}"#, "a member name in quotes is due, found '}'"),
            (br#"{,"id":3}"#, "a member name in quotes is due, found ','"),
            (br#"{"a":[1,,2]}"#, "a value is due, found ','"),
            (br#"{"a":[1,2,]}"#, "a value is due, found ']'"),
            (br#"{"a":[1 2]}"#, "',' or ']' is due after an item, found '2'"),
            (br#"{"id":04}"#, "a number may not have a leading zero"),
            (br#"{"id":1.}"#, "a digit is due after a number's decimal point"),
            (br#"{"id":"\x"}"#, "an escape"),
            (br#"{"id" 1}"#, "':' is due after a member name"),
        ];
        for (record, why) in cases {
            let error = check(record).expect_err(&String::from_utf8_lossy(record));
            assert!(error.contains(why), "{}: {error}", String::from_utf8_lossy(record));
        }
    }
}
