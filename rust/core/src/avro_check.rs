//! A check of each Avro datum's structure against its writer schema, before arrow-avro decodes
//! it. arrow-avro (59.3) reads a nullable union's branch as "not the null one" without checking
//! that it is a branch at all: a datum whose union index was 2 of `["null", "long"]` became the
//! long, and of `["string", "null"]` a NULL. The same for a boolean byte other than 0 and 1
//! (read as true). A record written with another schema than the one declared is the usual
//! cause; such a record is malformed here, naming the field, instead of a row of other values.
//!
//! The check walks the bytes as the Avro specification lays them out (zig-zag varints, length-
//! prefixed bytes and strings, blocked arrays and maps) and knows nothing of logical types, which
//! do not change the layout.

use std::collections::HashMap;

use serde_json::Value;

/// Nesting deeper than this is refused (a recursive schema could otherwise recurse once per
/// byte of a hostile record).
const MAX_DEPTH: usize = 512;

/// The layout of one writer schema.
#[derive(Debug)]
pub struct AvroShape {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone)]
enum Node {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Record(Vec<(String, usize)>),
    Enum(usize),
    Array(usize),
    Map(usize),
    Union(Vec<usize>),
    Fixed(usize),
    /// A named type not yet filled in (while its definition is being read).
    Pending,
}

impl AvroShape {
    /// The layout of `schema` (parsed JSON of a valid Avro schema; arrow-avro checks it too).
    pub fn new(schema: &Value) -> Result<Self, String> {
        let mut builder = Builder { nodes: Vec::new(), names: HashMap::new() };
        let root = builder.node(schema, "")?;
        debug_assert_eq!(root, 0, "the root is the first node");
        Ok(AvroShape { nodes: builder.nodes })
    }

    /// Err(why) unless `datum` is exactly one value of the schema.
    pub fn check(&self, datum: &[u8]) -> Result<(), String> {
        let mut walk = Walk { shape: self, bytes: datum, pos: 0, path: Vec::new() };
        walk.value(0, 0)?;
        if walk.pos != datum.len() {
            return Err(format!("the record has {} bytes after its value", datum.len() - walk.pos));
        }
        Ok(())
    }
}

struct Builder {
    nodes: Vec<Node>,
    /// Full names of named types (records, enums, fixed) and their nodes.
    names: HashMap<String, usize>,
}

impl Builder {
    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The node of `schema`, whose enclosing namespace is `namespace`.
    fn node(&mut self, schema: &Value, namespace: &str) -> Result<usize, String> {
        match schema {
            Value::String(name) => self.named_or_primitive(name, namespace),
            Value::Array(branches) => {
                let at = self.push(Node::Pending);
                let branches = branches.iter().map(|b| self.node(b, namespace)).collect::<Result<Vec<_>, _>>()?;
                self.nodes[at] = Node::Union(branches);
                Ok(at)
            }
            Value::Object(object) => {
                let kind = object.get("type").ok_or("an Avro type object without \"type\"")?;
                let kind = match kind {
                    Value::String(kind) => kind.as_str(),
                    // {"type": {"type": …}} or {"type": [...]}: the inner type is the type.
                    other => return self.node(other, namespace),
                };
                match kind {
                    "record" | "error" | "enum" | "fixed" => {
                        let name = object.get("name").and_then(Value::as_str).ok_or("a named Avro type without \"name\"")?;
                        let space = object.get("namespace").and_then(Value::as_str).unwrap_or(namespace);
                        let full = full_name(name, space);
                        let inner_space = full.rsplit_once('.').map_or("", |(space, _)| space).to_string();
                        let at = self.push(Node::Pending);
                        self.names.insert(full, at);
                        self.nodes[at] = match kind {
                            "enum" => Node::Enum(object.get("symbols").and_then(Value::as_array).map_or(0, Vec::len)),
                            "fixed" => Node::Fixed(object.get("size").and_then(Value::as_u64).ok_or("a fixed Avro type without \"size\"")? as usize),
                            _ => {
                                let fields = object.get("fields").and_then(Value::as_array).ok_or("an Avro record without \"fields\"")?;
                                let mut out = Vec::with_capacity(fields.len());
                                for field in fields {
                                    let name = field.get("name").and_then(Value::as_str).ok_or("an Avro field without \"name\"")?;
                                    let field_type = field.get("type").ok_or("an Avro field without \"type\"")?;
                                    out.push((name.to_string(), self.node(field_type, &inner_space)?));
                                }
                                Node::Record(out)
                            }
                        };
                        Ok(at)
                    }
                    "array" => {
                        let at = self.push(Node::Pending);
                        let items = self.node(object.get("items").ok_or("an Avro array without \"items\"")?, namespace)?;
                        self.nodes[at] = Node::Array(items);
                        Ok(at)
                    }
                    "map" => {
                        let at = self.push(Node::Pending);
                        let values = self.node(object.get("values").ok_or("an Avro map without \"values\"")?, namespace)?;
                        self.nodes[at] = Node::Map(values);
                        Ok(at)
                    }
                    // A primitive with attributes (a logical type): its layout is the primitive's.
                    primitive => self.named_or_primitive(primitive, namespace),
                }
            }
            other => Err(format!("{other} is not an Avro type")),
        }
    }

    fn named_or_primitive(&mut self, name: &str, namespace: &str) -> Result<usize, String> {
        let primitive = match name {
            "null" => Node::Null,
            "boolean" => Node::Boolean,
            "int" => Node::Int,
            "long" => Node::Long,
            "float" => Node::Float,
            "double" => Node::Double,
            "bytes" => Node::Bytes,
            "string" => Node::String,
            _ => {
                let found = self.names.get(&full_name(name, namespace)).or_else(|| self.names.get(name));
                return found.copied().ok_or_else(|| format!("the Avro type '{name}' is not defined"));
            }
        };
        Ok(self.push(primitive))
    }
}

fn full_name(name: &str, namespace: &str) -> String {
    if name.contains('.') || namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}.{name}")
    }
}

struct Walk<'a> {
    shape: &'a AvroShape,
    bytes: &'a [u8],
    pos: usize,
    /// The field names around the cursor, for messages.
    path: Vec<&'a str>,
}

impl<'a> Walk<'a> {
    fn fail(&self, why: String) -> String {
        if self.path.is_empty() {
            format!("Avro record: {why}")
        } else {
            format!("Avro record, field '{}': {why}", self.path.join("."))
        }
    }

    fn take(&mut self, n: usize) -> Result<(), String> {
        if self.bytes.len() - self.pos < n {
            return Err(self.fail(format!("the record ends {} bytes short", n - (self.bytes.len() - self.pos))));
        }
        self.pos += n;
        Ok(())
    }

    /// A zig-zag varint (Avro's int and long).
    fn long(&mut self) -> Result<i64, String> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.bytes.get(self.pos) else { return Err(self.fail("the record ends inside a number".into())) };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                if shift == 63 && byte > 1 {
                    break;
                }
                return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
            }
        }
        Err(self.fail("a number longer than 64 bits".into()))
    }

    fn length(&mut self) -> Result<usize, String> {
        let n = self.long()?;
        usize::try_from(n).map_err(|_| self.fail(format!("a negative length ({n})")))
    }

    fn value(&mut self, node: usize, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(self.fail(format!("values nested deeper than {MAX_DEPTH}")));
        }
        let shape = self.shape;
        match &shape.nodes[node] {
            Node::Null => Ok(()),
            Node::Boolean => match self.bytes.get(self.pos) {
                Some(0 | 1) => self.take(1),
                Some(b) => Err(self.fail(format!("a boolean byte of {b} (only 0 and 1 are booleans)"))),
                None => self.take(1),
            },
            Node::Int => {
                let v = self.long()?;
                i32::try_from(v).map(|_| ()).map_err(|_| self.fail(format!("{v} is out of range for an int")))
            }
            Node::Long => self.long().map(|_| ()),
            Node::Float => self.take(4),
            Node::Double => self.take(8),
            Node::Bytes | Node::String => {
                let n = self.length()?;
                self.take(n)
            }
            Node::Fixed(size) => self.take(*size),
            Node::Enum(symbols) => {
                let i = self.long()?;
                if i < 0 || i as u64 >= *symbols as u64 {
                    return Err(self.fail(format!("enum index {i} is not one of its {symbols} symbols")));
                }
                Ok(())
            }
            Node::Union(branches) => {
                let i = self.long()?;
                if i < 0 || i as u64 >= branches.len() as u64 {
                    return Err(self.fail(format!("union branch {i} is not one of its {} branches", branches.len())));
                }
                self.value(branches[i as usize], depth + 1)
            }
            Node::Record(fields) => {
                for (name, field) in fields {
                    self.path.push(name);
                    self.value(*field, depth + 1)?;
                    self.path.pop();
                }
                Ok(())
            }
            Node::Array(items) => self.blocks(None, *items, depth),
            Node::Map(values) => self.blocks(Some(()), *values, depth),
            Node::Pending => Err(self.fail("a type used inside its own definition before it is complete".into())),
        }
    }

    /// The blocks of an array (`keys` None) or a map: a count, negative when a byte size
    /// follows, the items, until a count of 0.
    fn blocks(&mut self, keys: Option<()>, item: usize, depth: usize) -> Result<(), String> {
        loop {
            let count = self.long()?;
            if count == 0 {
                return Ok(());
            }
            if count < 0 {
                self.length()?; // the block's size in bytes
            }
            for _ in 0..count.unsigned_abs() {
                if keys.is_some() {
                    let n = self.length()?;
                    self.take(n)?;
                }
                self.value(item, depth + 1)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AvroShape;

    fn shape(schema: &str) -> AvroShape {
        AvroShape::new(&serde_json::from_str(schema).unwrap()).unwrap()
    }

    /// Avro's zig-zag varint of `v`.
    fn long(v: i64) -> Vec<u8> {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            if z < 0x80 {
                out.push(z as u8);
                return out;
            }
            out.push((z as u8 & 0x7f) | 0x80);
            z >>= 7;
        }
    }

    const SCHEMA: &str = r#"{"type": "record", "name": "r", "namespace": "x", "fields": [
        {"name": "id", "type": "long"},
        {"name": "u", "type": ["null", "long"]},
        {"name": "v", "type": ["string", "null"]},
        {"name": "a", "type": {"type": "array", "items": ["null", "long"]}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
        {"name": "e", "type": {"type": "enum", "name": "color", "symbols": ["red", "green"]}},
        {"name": "f", "type": {"type": "fixed", "name": "two", "size": 2}},
        {"name": "b", "type": "boolean"},
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}},
        {"name": "next", "type": ["null", "r"]}
    ]}"#;

    /// A datum of SCHEMA with `u`'s branch, `v`'s branch, the array item's branch, the enum
    /// index and the boolean byte given.
    fn datum(u: i64, v: i64, item: i64, e: i64, b: u8) -> Vec<u8> {
        let mut out = long(7);
        out.extend(long(u));
        if u == 1 {
            out.extend(long(5));
        }
        out.extend(long(v));
        if v == 0 {
            out.extend(long(2));
            out.extend(b"hi");
        }
        out.extend(long(-1)); // one item, its size follows
        out.extend(long(2));
        out.extend(long(item));
        if item == 1 {
            out.extend(long(9));
        }
        out.extend(long(0));
        out.extend(long(1));
        out.extend(long(1));
        out.extend(b"k");
        out.extend(long(3));
        out.extend(long(0));
        out.extend(long(e));
        out.extend(b"ff");
        out.push(b);
        out.extend(long(1));
        out.push(0x01);
        out.extend(long(0)); // next: null
        out
    }

    #[test]
    fn well_formed_datums_pass() {
        let shape = shape(SCHEMA);
        for (u, v, item, e, b) in [(0, 0, 0, 0, 0), (1, 1, 1, 1, 1)] {
            assert_eq!(shape.check(&datum(u, v, item, e, b)), Ok(()));
        }
        // A recursive record: next holds another r.
        let mut nested = datum(0, 1, 0, 0, 0);
        nested.pop();
        nested.extend(long(1));
        nested.extend(datum(1, 0, 1, 1, 1));
        assert_eq!(shape.check(&nested), Ok(()));
    }

    #[test]
    fn branches_enum_indexes_and_booleans_out_of_range_are_refused() {
        let shape = shape(SCHEMA);
        for (datum, why) in [
            (datum(2, 0, 0, 0, 0), "field 'u': union branch 2 is not one of its 2 branches"),
            (datum(0, 2, 0, 0, 0), "field 'v': union branch 2 is not one of its 2 branches"),
            (datum(0, 0, 9, 0, 0), "field 'a': union branch 9 is not one of its 2 branches"),
            (datum(0, 0, 0, 2, 0), "field 'e': enum index 2 is not one of its 2 symbols"),
            (datum(0, 0, 0, 0, 2), "field 'b': a boolean byte of 2"),
        ] {
            let error = shape.check(&datum).expect_err(why);
            assert!(error.contains(why), "{error}");
        }
        let mut long_by_one = datum(0, 0, 0, 0, 0);
        long_by_one.push(0);
        assert!(shape.check(&long_by_one).unwrap_err().contains("1 bytes after its value"));
        let short = datum(0, 0, 0, 0, 0);
        assert!(shape.check(&short[..short.len() - 3]).unwrap_err().contains("ends"));
    }
}
