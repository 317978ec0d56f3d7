//! Scalar UDFs. Each maps NULL to NULL and reads its arguments through the array API, so
//! sliced arrays (offset != 0) work. A value a UDF cannot process is SLUICE_PLUGIN_BAD_DATA
//! with a message naming it.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BinaryArray, StringArray};
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use serde_json::Value;
use sluice_plugin_sdk::{Error, Result, ScalarUdf};
use tiny_keccak::{Hasher, Keccak};

/// A value for an error message: quoted, cut after 64 characters.
fn shown(value: &str) -> String {
    let mut chars = value.chars();
    let head: String = chars.by_ref().take(64).collect();
    if chars.next().is_some() {
        format!("{head:?}...")
    } else {
        format!("{head:?}")
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

// ---- keccak256 ---------------------------------------------------------------------------------

/// Ethereum's Keccak-256 (the original Keccak padding, not SHA3-256) of the bytes.
pub fn keccak256(bytes: &[u8]) -> [u8; 32] {
    let mut hasher = Keccak::v256();
    hasher.update(bytes);
    let mut out = [0u8; 32];
    hasher.finalize(&mut out);
    out
}

/// `keccak256(binary) -> utf8`: "0x" and the 64 lowercase hex digits of the Keccak-256 hash.
#[derive(Default)]
pub struct Keccak256;

impl ScalarUdf for Keccak256 {
    const NAME: &'static str = "keccak256";
    const DESCRIPTION: &'static str = "keccak256(bytes) -> '0x' and 64 lowercase hex digits: Ethereum's Keccak-256 hash (not SHA3-256). \
         A string argument is hashed as its UTF-8 bytes.";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Binary]
    }

    fn return_type() -> DataType {
        DataType::Utf8
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        let out: StringArray = args[0].as_binary::<i32>().iter().map(|v| v.map(|b| format!("0x{}", hex(&keccak256(b))))).collect();
        Ok(Arc::new(out))
    }
}

// ---- hex ---------------------------------------------------------------------------------------

/// `hex_encode(binary) -> utf8`: lowercase hex digits, no prefix.
#[derive(Default)]
pub struct HexEncode;

impl ScalarUdf for HexEncode {
    const NAME: &'static str = "hex_encode";
    const DESCRIPTION: &'static str = "hex_encode(bytes) -> the bytes as lowercase hex digits, without a prefix.";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Binary]
    }

    fn return_type() -> DataType {
        DataType::Utf8
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        let out: StringArray = args[0].as_binary::<i32>().iter().map(|v| v.map(hex)).collect();
        Ok(Arc::new(out))
    }
}

/// The bytes of hex digits (either case, an optional "0x" prefix), or None.
pub fn decode_hex(text: &str) -> Option<Vec<u8>> {
    let digits = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).unwrap_or(text).as_bytes();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    digits.chunks_exact(2).map(|pair| Some(nibble(pair[0])? << 4 | nibble(pair[1])?)).collect()
}

/// `hex_decode(utf8) -> binary`: hex digits (either case, optional "0x") to bytes.
#[derive(Default)]
pub struct HexDecode;

impl ScalarUdf for HexDecode {
    const NAME: &'static str = "hex_decode";
    const DESCRIPTION: &'static str = "hex_decode(text) -> the bytes of an even number of hex digits (either case, optional 0x prefix); \
         anything else is a bad record.";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Utf8]
    }

    fn return_type() -> DataType {
        DataType::Binary
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        let out = args[0]
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(|s| decode_hex(s).ok_or_else(|| Error::bad_data(format!("hex_decode: invalid hex {}", shown(s))))).transpose())
            .collect::<Result<BinaryArray>>()?;
        Ok(Arc::new(out))
    }
}

// ---- base58 ------------------------------------------------------------------------------------

const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Base58 with the Bitcoin alphabet (each leading zero byte is a '1').
pub fn encode_base58(bytes: &[u8]) -> String {
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    // Little-endian base-58 digits of the number the remaining bytes spell.
    let mut digits: Vec<u8> = Vec::with_capacity(bytes.len() * 138 / 100 + 1);
    for &byte in &bytes[zeros..] {
        let mut carry = byte as u32;
        for digit in digits.iter_mut() {
            carry += (*digit as u32) << 8;
            *digit = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let mut out = String::with_capacity(zeros + digits.len());
    out.extend(std::iter::repeat_n('1', zeros));
    out.extend(digits.iter().rev().map(|&d| BASE58[d as usize] as char));
    out
}

/// The bytes of a Base58 (Bitcoin alphabet) string, or None when a character is not in it.
pub fn decode_base58(text: &str) -> Option<Vec<u8>> {
    let zeros = text.bytes().take_while(|&c| c == b'1').count();
    // Little-endian base-256 digits.
    let mut bytes: Vec<u8> = Vec::with_capacity(text.len());
    for c in text.bytes().skip(zeros) {
        let mut carry = BASE58.iter().position(|&a| a == c)? as u32;
        for byte in bytes.iter_mut() {
            carry += (*byte as u32) * 58;
            *byte = carry as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.push(carry as u8);
            carry >>= 8;
        }
    }
    let mut out = vec![0u8; zeros];
    out.extend(bytes.iter().rev());
    Some(out)
}

/// `base58_encode(binary) -> utf8` (Bitcoin alphabet).
#[derive(Default)]
pub struct Base58Encode;

impl ScalarUdf for Base58Encode {
    const NAME: &'static str = "base58_encode";
    const DESCRIPTION: &'static str = "base58_encode(bytes) -> Base58 text, Bitcoin alphabet (a leading zero byte is '1'; no checksum).";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Binary]
    }

    fn return_type() -> DataType {
        DataType::Utf8
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        let out: StringArray = args[0].as_binary::<i32>().iter().map(|v| v.map(encode_base58)).collect();
        Ok(Arc::new(out))
    }
}

/// `base58_decode(utf8) -> binary` (Bitcoin alphabet).
#[derive(Default)]
pub struct Base58Decode;

impl ScalarUdf for Base58Decode {
    const NAME: &'static str = "base58_decode";
    const DESCRIPTION: &'static str =
        "base58_decode(text) -> the bytes of Base58 text, Bitcoin alphabet (no checksum); a character outside it is a bad record.";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Utf8]
    }

    fn return_type() -> DataType {
        DataType::Binary
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        let out = args[0]
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(|s| decode_base58(s).ok_or_else(|| Error::bad_data(format!("base58_decode: invalid base58 {}", shown(s))))).transpose())
            .collect::<Result<BinaryArray>>()?;
        Ok(Arc::new(out))
    }
}

// ---- json_path ---------------------------------------------------------------------------------

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Parses `$.a.b[0].c`, `a.b`, `$["a b"][2]`, `$` (the document): an optional '$', then
/// `.name`, `[N]` or `["name"]` / `['name']` steps.
pub fn parse_path(path: &str) -> Option<Vec<Step>> {
    let mut rest = path.trim();
    if let Some(r) = rest.strip_prefix('$') {
        rest = r;
    } else if !rest.is_empty() && !rest.starts_with(['.', '[']) {
        // A bare first name: "a.b".
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let (name, r) = rest.split_at(end);
        let mut steps = vec![Step::Key(name.to_owned())];
        steps.extend(parse_path(&format!("${r}"))?);
        return Some(steps);
    }
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            steps.push(Step::Key(r[..end].to_owned()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']')?;
            let inner = r[..close].trim();
            let quoted = inner.len() >= 2 && ((inner.starts_with('"') && inner.ends_with('"')) || (inner.starts_with('\'') && inner.ends_with('\'')));
            if quoted {
                // A quoted name may contain ']' : find the closing quote first.
                let quote = r.chars().next()?;
                let end = r[1..].find(quote)? + 1;
                let after = r[end + 1..].strip_prefix(']')?;
                steps.push(Step::Key(r[1..end].to_owned()));
                rest = after;
                continue;
            }
            steps.push(Step::Index(inner.parse().ok()?));
            rest = &r[close + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

/// The value at `steps` of `document`: a string unquoted, JSON null and missing as None, any
/// other value as compact JSON.
pub fn select(document: &Value, steps: &[Step]) -> Option<String> {
    let mut value = document;
    for step in steps {
        value = match (step, value) {
            (Step::Key(k), Value::Object(map)) => map.get(k)?,
            (Step::Index(i), Value::Array(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// `json_path(utf8 json, utf8 path) -> utf8`.
#[derive(Default)]
pub struct JsonPath;

impl ScalarUdf for JsonPath {
    const NAME: &'static str = "json_path";
    const DESCRIPTION: &'static str = "json_path(json, path) -> the value at a path such as '$.a.b[0].c' (steps .name, [N], [\"name\"]): \
         a string unquoted, any other value as compact JSON; NULL when the path is missing, the value is JSON null or the text is \
         not JSON. An invalid path is a bad record.";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Utf8, DataType::Utf8]
    }

    fn return_type() -> DataType {
        DataType::Utf8
    }

    fn invoke(&self, args: &[ArrayRef], _n_rows: usize) -> Result<ArrayRef> {
        let documents = args[0].as_string::<i32>();
        let paths = args[1].as_string::<i32>();
        // The path is usually one constant, repeated: parse it once.
        let mut parsed: Option<(&str, Vec<Step>)> = None;
        let mut out = Vec::with_capacity(documents.len());
        for (document, path) in documents.iter().zip(paths.iter()) {
            let (Some(document), Some(path)) = (document, path) else {
                out.push(None);
                continue;
            };
            if parsed.as_ref().is_none_or(|(p, _)| *p != path) {
                let steps = parse_path(path).ok_or_else(|| Error::bad_data(format!("json_path: invalid path {}", shown(path))))?;
                parsed = Some((path, steps));
            }
            let steps = parsed.as_ref().map(|(_, s)| s.as_slice()).unwrap_or_default();
            out.push(serde_json::from_str::<Value>(document).ok().and_then(|v| select(&v, steps)));
        }
        Ok(Arc::new(StringArray::from(out)))
    }
}

// ---- geohash -----------------------------------------------------------------------------------

const GEOHASH32: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";

/// The geohash of a point with `precision` characters (1 to 12).
pub fn encode_geohash(lat: f64, lon: f64, precision: i64) -> Result<String> {
    if !(-90.0..=90.0).contains(&lat) {
        return Err(Error::bad_data(format!("geohash: latitude {lat} is outside [-90, 90]")));
    }
    if !(-180.0..=180.0).contains(&lon) {
        return Err(Error::bad_data(format!("geohash: longitude {lon} is outside [-180, 180]")));
    }
    if !(1..=12).contains(&precision) {
        return Err(Error::bad_data(format!("geohash: precision {precision} is outside [1, 12]")));
    }
    let (mut lat_range, mut lon_range) = ((-90.0f64, 90.0f64), (-180.0f64, 180.0f64));
    let mut out = String::with_capacity(precision as usize);
    let mut even_bit = true; // bits alternate longitude, latitude, starting with longitude
    for _ in 0..precision {
        let mut index = 0usize;
        for _ in 0..5 {
            let (range, value) = if even_bit { (&mut lon_range, lon) } else { (&mut lat_range, lat) };
            let mid = (range.0 + range.1) / 2.0;
            index <<= 1;
            if value >= mid {
                index |= 1;
                range.0 = mid;
            } else {
                range.1 = mid;
            }
            even_bit = !even_bit;
        }
        out.push(GEOHASH32[index] as char);
    }
    Ok(out)
}

/// `geohash(float64 lat, float64 lon, int64 precision) -> utf8`.
#[derive(Default)]
pub struct Geohash;

impl ScalarUdf for Geohash {
    const NAME: &'static str = "geohash";
    const DESCRIPTION: &'static str = "geohash(lat, lon, precision) -> the standard base-32 geohash of the point with `precision` (1 to \
         12) characters; a latitude outside [-90, 90], a longitude outside [-180, 180] or another precision is a bad record.";

    fn arg_types() -> Vec<DataType> {
        vec![DataType::Float64, DataType::Float64, DataType::Int64]
    }

    fn return_type() -> DataType {
        DataType::Utf8
    }

    fn invoke(&self, args: &[ArrayRef], n_rows: usize) -> Result<ArrayRef> {
        let lat = args[0].as_primitive::<Float64Type>();
        let lon = args[1].as_primitive::<Float64Type>();
        let precision = args[2].as_primitive::<Int64Type>();
        let mut out = Vec::with_capacity(n_rows);
        for i in 0..n_rows {
            if lat.is_null(i) || lon.is_null(i) || precision.is_null(i) {
                out.push(None);
            } else {
                out.push(Some(encode_geohash(lat.value(i), lon.value(i), precision.value(i))?));
            }
        }
        Ok(Arc::new(StringArray::from(out)))
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Float64Array, Int64Array};
    use sluice_plugin_sdk::ErrorKind;

    use super::*;

    fn binary(values: &[Option<&[u8]>]) -> ArrayRef {
        Arc::new(BinaryArray::from(values.to_vec()))
    }

    fn strings(values: &[Option<&str>]) -> ArrayRef {
        Arc::new(StringArray::from(values.to_vec()))
    }

    fn utf8_result(array: ArrayRef) -> Vec<Option<String>> {
        array.as_string::<i32>().iter().map(|v| v.map(str::to_owned)).collect()
    }

    fn binary_result(array: ArrayRef) -> Vec<Option<Vec<u8>>> {
        array.as_binary::<i32>().iter().map(|v| v.map(<[u8]>::to_vec)).collect()
    }

    fn some(s: &str) -> Option<String> {
        Some(s.to_owned())
    }

    #[test]
    fn keccak256_known_values() {
        // An offset array: the first value is cut off.
        let input = binary(&[Some(b"skipped"), Some(b""), Some(b"hello"), None]).slice(1, 3);
        let out = utf8_result(Keccak256.invoke(&[input], 3).unwrap());
        assert_eq!(
            out,
            vec![
                some("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
                some("0x1c8aff950685c2ed4bc3174f3472287b56d9517b9c948127319a09a7a36deac8"),
                None
            ]
        );
        // The selector of ERC-20's transfer(address,uint256) is the hash's first 4 bytes.
        assert_eq!(hex(&keccak256(b"transfer(address,uint256)")[..4]), "a9059cbb");
    }

    #[test]
    fn hex_round_trip_and_errors() {
        let input = binary(&[Some(&[0xff]), Some(&[0x00, 0xab, 0x10]), Some(&[]), None]).slice(1, 3);
        assert_eq!(utf8_result(HexEncode.invoke(&[input], 3).unwrap()), vec![some("00ab10"), some(""), None]);
        let input = strings(&[Some("zz"), Some("00AB10"), Some("0xdeadBEEF"), None, Some("")]).slice(1, 4);
        assert_eq!(
            binary_result(HexDecode.invoke(&[input], 4).unwrap()),
            vec![Some(vec![0x00, 0xab, 0x10]), Some(vec![0xde, 0xad, 0xbe, 0xef]), None, Some(vec![])]
        );
        for bad in ["zz", "abc", "0x1", "é1"] {
            let error = HexDecode.invoke(&[strings(&[Some("00"), Some(bad)])], 2).unwrap_err();
            assert_eq!((error.kind(), error.message().to_owned()), (ErrorKind::BadData, format!("hex_decode: invalid hex {bad:?}")));
        }
    }

    #[test]
    fn base58_known_values() {
        let address = decode_hex("00010966776006953D5567439E5E39F86A0D273BEED61967F6").unwrap();
        let input = binary(&[None, Some(&[0, 0, 1]), Some(b"hello world"), Some(&address), Some(&[]), Some(&[0]), None]).slice(1, 6);
        assert_eq!(
            utf8_result(Base58Encode.invoke(&[input], 6).unwrap()),
            vec![some("112"), some("StV1DL6CwTryKyV"), some("16UwLL9Risc3QfPqBUvKofHmBQ7wMtjvM"), some(""), some("1"), None]
        );
        let input =
            strings(&[Some("0"), Some("112"), Some("StV1DL6CwTryKyV"), Some("16UwLL9Risc3QfPqBUvKofHmBQ7wMtjvM"), Some(""), None]).slice(1, 5);
        assert_eq!(
            binary_result(Base58Decode.invoke(&[input], 5).unwrap()),
            vec![Some(vec![0, 0, 1]), Some(b"hello world".to_vec()), Some(address), Some(vec![]), None]
        );
        let error = Base58Decode.invoke(&[strings(&[Some("abc0")])], 1).unwrap_err();
        assert_eq!((error.kind(), error.message()), (ErrorKind::BadData, "base58_decode: invalid base58 \"abc0\""));
        for n in 0u32..2000 {
            let bytes = [vec![0; (n % 3) as usize], n.to_be_bytes().to_vec(), (n * 7919).to_le_bytes().to_vec()].concat();
            assert_eq!(decode_base58(&encode_base58(&bytes)).unwrap(), bytes);
        }
    }

    #[test]
    fn json_path_values() {
        let doc = r#"{"a": {"b": [{"c": "deep"}, 2]}, "n": 1.5, "t": true, "z": null, "o": {"x": [1, {"y": 2}]}, "a b": "spaced"}"#;
        let cases: Vec<(&str, Option<String>)> = vec![
            ("$.a.b[0].c", some("deep")),
            ("$.a.b[1]", some("2")),
            ("$.n", some("1.5")),
            ("$.t", some("true")),
            ("$.z", None),
            ("$.o", some(r#"{"x":[1,{"y":2}]}"#)),
            ("$.o.x[1].y", some("2")),
            ("$[\"a b\"]", some("spaced")),
            ("$['a b']", some("spaced")),
            ("a.b[0].c", some("deep")),
            ("$.missing", None),
            ("$.a.b[5]", None),
            ("$.n.x", None),
            ("$.a.b.c", None),
        ];
        let n = cases.len();
        let documents = strings(&vec![Some(doc); n]);
        let paths = strings(&cases.iter().map(|(p, _)| Some(*p)).collect::<Vec<_>>());
        let out = utf8_result(JsonPath.invoke(&[documents, paths], n).unwrap());
        assert_eq!(out, cases.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>());
        assert_eq!(select(&serde_json::json!([1, 2]), &parse_path("$").unwrap()), some("[1,2]"));

        // NULLs, non-JSON text, an offset array.
        let documents = strings(&[Some("{}"), None, Some("not json"), Some(r#"{"k": "v"}"#), Some(r#"{"k": "w"}"#)]).slice(1, 4);
        let paths = strings(&[Some("$.k"), Some("$.k"), Some("$.k"), None, Some("$.k")]).slice(1, 4);
        assert_eq!(utf8_result(JsonPath.invoke(&[documents, paths], 4).unwrap()), vec![None, None, None, some("w")]);

        for bad in ["$.", "$[x]", "$a", "$.a[", "$..a"] {
            let error = JsonPath.invoke(&[strings(&[Some("{}")]), strings(&[Some(bad)])], 1).unwrap_err();
            assert_eq!((error.kind(), error.message().to_owned()), (ErrorKind::BadData, format!("json_path: invalid path {bad:?}")));
        }
    }

    #[test]
    fn geohash_known_values() {
        let lat: ArrayRef = Arc::new(Float64Array::from(vec![Some(0.0), Some(57.64911), Some(0.0), None, Some(-90.0), Some(1.0)]));
        let lon: ArrayRef = Arc::new(Float64Array::from(vec![Some(0.0), Some(10.40744), Some(0.0), Some(1.0), Some(-180.0), Some(1.0)]));
        let precision: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), Some(11), Some(1), Some(5), Some(4), None]));
        let out = utf8_result(Geohash.invoke(&[lat.slice(1, 5), lon.slice(1, 5), precision.slice(1, 5)], 5).unwrap());
        assert_eq!(out, vec![some("u4pruydqqvj"), some("s"), None, some("0000"), None]);
        assert_eq!(encode_geohash(90.0, 180.0, 3).unwrap(), "zzz");
        assert_eq!(encode_geohash(-25.382708, -49.265506, 12).unwrap(), "6gkzwgjzn820");

        for (lat, lon, precision, message) in [
            (91.0, 0.0, 5, "geohash: latitude 91 is outside [-90, 90]"),
            (f64::NAN, 0.0, 5, "geohash: latitude NaN is outside [-90, 90]"),
            (0.0, -180.5, 5, "geohash: longitude -180.5 is outside [-180, 180]"),
            (0.0, 0.0, 0, "geohash: precision 0 is outside [1, 12]"),
            (0.0, 0.0, 13, "geohash: precision 13 is outside [1, 12]"),
        ] {
            let error = encode_geohash(lat, lon, precision).unwrap_err();
            assert_eq!((error.kind(), error.message()), (ErrorKind::BadData, message));
        }
    }
}
