//! A component's `options:` (one JSON object), its declared option schema, and the instance
//! info the host passes to `open`.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The JSON type of a declared option, as `options_schema` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionType {
    String,
    Integer,
    Number,
    Boolean,
    /// A string such as "5s" or a number of milliseconds; the SDK checks only that it is one
    /// of the two.
    Duration,
    List,
    Object,
}

impl OptionType {
    pub fn as_str(self) -> &'static str {
        match self {
            OptionType::String => "string",
            OptionType::Integer => "integer",
            OptionType::Number => "number",
            OptionType::Boolean => "boolean",
            OptionType::Duration => "duration",
            OptionType::List => "list",
            OptionType::Object => "object",
        }
    }

    fn accepts(self, value: &Value) -> bool {
        match self {
            OptionType::String => value.is_string(),
            OptionType::Integer => value.is_i64() || value.is_u64(),
            OptionType::Number => value.is_number(),
            OptionType::Boolean => value.is_boolean(),
            OptionType::Duration => value.is_string() || value.is_number(),
            OptionType::List => value.is_array(),
            OptionType::Object => value.is_object(),
        }
    }
}

/// One declared option of a component (an entry of its `options_schema`). Built in a const:
/// `OptionSpec::new("path", OptionType::String, "The file to write").required()`.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    pub name: &'static str,
    pub ty: OptionType,
    pub required: bool,
    /// The default as JSON text (e.g. `"1024"`, `"\"utf-8\""`), or None.
    pub default: Option<&'static str>,
    pub doc: &'static str,
}

impl OptionSpec {
    pub const fn new(name: &'static str, ty: OptionType, doc: &'static str) -> Self {
        OptionSpec { name, ty, required: false, default: None, doc }
    }

    pub const fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// The default value, as JSON text.
    pub const fn default_json(mut self, json: &'static str) -> Self {
        self.default = Some(json);
        self
    }
}

/// The `options_schema` JSON text of `specs`, or None when there are none.
pub(crate) fn options_schema_json(specs: &[OptionSpec]) -> Option<String> {
    if specs.is_empty() {
        return None;
    }
    let entries: Vec<Value> = specs
        .iter()
        .map(|spec| {
            let mut entry = Map::new();
            entry.insert("name".into(), Value::from(spec.name));
            entry.insert("type".into(), Value::from(spec.ty.as_str()));
            entry.insert("required".into(), Value::from(spec.required));
            if let Some(default) = spec.default {
                // A default that is not JSON text is taken as a string.
                let value = serde_json::from_str(default).unwrap_or_else(|_| Value::from(default));
                entry.insert("default".into(), value);
            }
            entry.insert("doc".into(), Value::from(spec.doc));
            Value::Object(entry)
        })
        .collect();
    Some(Value::Array(entries).to_string())
}

/// A component's options: the node's `options:` mapping as one JSON object. JSON `null` values
/// count as absent.
#[derive(Debug, Clone)]
pub struct Options {
    raw: String,
    map: Map<String, Value>,
}

impl Options {
    /// Parses the options JSON the host passed; anything but an object is InvalidOptions.
    pub fn parse(json: &str) -> Result<Self> {
        let text = if json.trim().is_empty() { "{}" } else { json };
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(Options { raw: json.to_owned(), map }),
            Ok(other) => Err(Error::invalid_options(format!("options must be a JSON object, not {other}"))),
            Err(e) => Err(Error::invalid_options(format!("options are not valid JSON: {e}"))),
        }
    }

    /// An options object built in code (tests).
    pub fn from_value(value: Value) -> Result<Self> {
        Self::parse(&value.to_string())
    }

    /// The JSON text as the host passed it.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The whole object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.map
    }

    /// The names given, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// The value of `name`, or None when absent or null.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// The value of `name` deserialized as `T`, None when absent; a value of the wrong type is
    /// InvalidOptions naming the option.
    pub fn get_as<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        match self.get(name) {
            None => Ok(None),
            Some(value) => T::deserialize(value).map(Some).map_err(|e| Error::invalid_options(format!("option '{name}': {e} (got {value})"))),
        }
    }

    /// Like [`get_as`](Self::get_as), but an absent option is InvalidOptions naming it.
    pub fn require_as<T: DeserializeOwned>(&self, name: &str) -> Result<T> {
        self.get_as(name)?.ok_or_else(|| Error::invalid_options(format!("option '{name}' is required")))
    }

    /// InvalidOptions naming the first option not in `known`.
    pub fn deny_unknown(&self, known: &[&str]) -> Result<()> {
        match self.names().find(|name| !known.contains(name)) {
            None => Ok(()),
            Some(name) => {
                let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
                Err(Error::invalid_options(format!("unknown option '{name}' (options: {known})")))
            }
        }
    }

    /// Checks the options against declared `specs`: no unknown names, every required one given,
    /// each given one of its declared type. The SDK calls this before a component's `open`
    /// (or a preprocessor's `rewrite`) when the component declares any option.
    pub fn check(&self, specs: &[OptionSpec]) -> Result<()> {
        let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
        self.deny_unknown(&known)?;
        for spec in specs {
            match self.get(spec.name) {
                None if spec.required => return Err(Error::invalid_options(format!("option '{}' is required", spec.name))),
                None => {}
                Some(value) if !spec.ty.accepts(value) => {
                    return Err(Error::invalid_options(format!("option '{}' must be of type {}, got {value}", spec.name, spec.ty.as_str())))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// Which instance of a node a state serves (a copy of the host's `SluiceInstanceInfo`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstanceInfo {
    pub pipeline: String,
    pub node: String,
    /// The directory of the pipeline file.
    pub pipeline_dir: PathBuf,
    /// This copy of the node (0-based) and how many copies run.
    pub lane: i32,
    pub lanes: i32,
}

impl InstanceInfo {
    /// `path` if absolute, else `path` resolved against the pipeline's directory.
    pub fn resolve_path(&self, path: impl AsRef<Path>) -> PathBuf {
        let path = path.as_ref();
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.pipeline_dir.join(path)
        }
    }
}
