//! What the text of a date or timestamp may hold for its column, checked before arrow's parsers
//! read it (JSON through the value guard, CSV as text). arrow reads a date column's
//! `2024-01-01T23:00:00-05:00` as the UTC date of that instant (2024-01-02), cuts a fraction
//! finer than the column's unit, and reads a leap second (`:60`) as :59 or as the next minute
//! depending on the unit. Each of these would store another value than the one written, so the
//! record is malformed instead, naming why.

use arrow::datatypes::TimeUnit;

/// Why `text` cannot be a date column's value as written, or None. A date with a time of day
/// would lose it (and move to UTC first when it has an offset).
pub fn date_problem(text: &str) -> Option<String> {
    text.contains(':').then(|| format!("\"{text}\" has a time of day, which a date column would drop; declare the column a timestamp"))
}

/// Why `text` cannot be a timestamp value of `unit` as written, or None: a leap second, or a
/// fraction of a second finer than the unit (trailing zeros are fine). Text of any other shape
/// is left to the parser.
pub fn timestamp_problem(text: &str, unit: TimeUnit) -> Option<String> {
    let bytes = text.as_bytes();
    // The time of day follows the date's `T`, `t` or space: HH:MM[:SS[.fff…]].
    let start = bytes.iter().position(|&b| matches!(b, b'T' | b't' | b' '))? + 1;
    let time = &bytes[start..];
    if time.len() < 8 || time[2] != b':' || time[5] != b':' || !time[..8].iter().enumerate().all(|(i, b)| i == 2 || i == 5 || b.is_ascii_digit()) {
        return None;
    }
    if &time[6..8] == b"60" {
        return Some(format!("\"{text}\" is a leap second (:60), which a timestamp cannot hold"));
    }
    let fraction = time[8..].strip_prefix(b".")?;
    let digits = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
    if fraction[..digits].iter().skip(fraction_digits(unit)).any(|&d| d != b'0') {
        let unit_name = match unit {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
        };
        return Some(format!(
            "\"{text}\" has a fraction of a second finer than timestamp({unit_name}) holds, which would be cut; declare a finer unit"
        ));
    }
    None
}

/// The fraction digits a timestamp of `unit` holds: 0, 3, 6 or 9.
pub(crate) fn fraction_digits(unit: TimeUnit) -> usize {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_with_a_time_of_day_are_refused() {
        assert!(date_problem("2024-02-29").is_none());
        assert!(date_problem("-0044-03-15").is_none());
        for text in ["2024-01-01T00:00:00+05:30", "2024-01-01 23:00", "2024-02-29T12:34:56"] {
            assert!(date_problem(text).unwrap().contains("has a time of day"), "{text}");
        }
    }

    #[test]
    fn fractions_finer_than_the_unit_and_leap_seconds_are_refused() {
        let ok = [
            ("2024-02-29T12:34:56", TimeUnit::Second),
            ("2024-02-29T12:34:56.000", TimeUnit::Second),
            ("2024-02-29 12:34:56.123", TimeUnit::Millisecond),
            ("2024-02-29T12:34:56.123000Z", TimeUnit::Millisecond),
            ("2024-02-29T12:34:56.123456+05:30", TimeUnit::Microsecond),
            ("2024-02-29T12:34:56.123456789", TimeUnit::Nanosecond),
            ("2024-02-29T12:34", TimeUnit::Second),
            ("2024-02-29", TimeUnit::Second),
            ("not a time", TimeUnit::Second),
        ];
        for (text, unit) in ok {
            assert_eq!(timestamp_problem(text, unit), None, "{text}");
        }
        let finer = [
            ("2024-02-29T12:34:56.5", TimeUnit::Second),
            ("1969-12-31T23:59:59.9995", TimeUnit::Millisecond),
            ("2024-02-29T12:34:56.1234567Z", TimeUnit::Microsecond),
            ("2024-02-29T12:34:56.1234567891", TimeUnit::Nanosecond),
        ];
        for (text, unit) in finer {
            assert!(timestamp_problem(text, unit).unwrap().contains("finer than timestamp("), "{text}");
        }
        for unit in [TimeUnit::Second, TimeUnit::Millisecond] {
            assert!(timestamp_problem("2024-01-01T23:59:60", unit).unwrap().contains("leap second"));
        }
    }
}
