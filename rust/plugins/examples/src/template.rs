//! Preprocessor `template`: replaces every `{{NAME}}` (spaces inside the braces allowed) of
//! the pipeline file with the value of `NAME` in the option `vars`. A string is inserted as
//! it is, any other value as compact JSON. An unknown NAME fails, naming it and its line.

use serde_json::{Map, Value};
use sluice_plugin_sdk::{Error, OptionSpec, OptionType, Options, Preprocessor, Result};

pub struct Template;

/// `yaml` with every `{{NAME}}` replaced from `vars`.
pub fn expand(vars: &Map<String, Value>, pipeline_path: &str, yaml: &str) -> Result<String> {
    let mut out = String::with_capacity(yaml.len());
    let mut rest = yaml;
    while let Some(start) = rest.find("{{") {
        let line = yaml[..yaml.len() - rest.len() + start].matches('\n').count() + 1;
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(Error::new(format!("template: {pipeline_path}:{line}: '{{{{' without a closing '}}}}'")));
        };
        let name = after[..end].trim();
        match vars.get(name) {
            Some(Value::String(s)) => out.push_str(s),
            Some(other) => out.push_str(&other.to_string()),
            None => return Err(Error::new(format!("template: {pipeline_path}:{line}: unknown variable '{{{{{name}}}}}' (not in option 'vars')"))),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

impl Preprocessor for Template {
    const NAME: &'static str = "template";
    const DESCRIPTION: &'static str = "Replaces every {{NAME}} of the pipeline file with the value of NAME in `vars` (strings as they \
         are, other values as JSON); an unknown NAME is an error naming it.";
    const OPTIONS: &'static [OptionSpec] = &[OptionSpec::new("vars", OptionType::Object, "The variables: names to values.").default_json("{}")];

    fn rewrite(options: &Options, pipeline_path: &str, yaml: &str) -> Result<String> {
        let vars: Map<String, Value> = options.get_as("vars")?.unwrap_or_default();
        expand(&vars, pipeline_path, yaml)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use sluice_plugin_sdk::ErrorKind;

    use super::*;

    fn rewrite(options: Value, yaml: &str) -> Result<String> {
        let options = Options::from_value(options)?;
        options.check(Template::OPTIONS)?;
        Template::rewrite(&options, "/p/pipeline.yaml", yaml)
    }

    #[test]
    fn replaces_variables() {
        let vars = json!({"vars": {"TOPIC": "orders", "N": 3, "ON": true, "LIST": [1, "a"]}});
        let yaml = "name: {{TOPIC}}-copy\ncount: {{ N }}\nflag: {{ON}}\nitems: {{LIST}}\nplain: {not a var}\n";
        assert_eq!(rewrite(vars, yaml).unwrap(), "name: orders-copy\ncount: 3\nflag: true\nitems: [1,\"a\"]\nplain: {not a var}\n");
        assert_eq!(rewrite(json!({}), "no variables").unwrap(), "no variables");
    }

    #[test]
    fn unknown_variables_and_bad_options_fail() {
        let error = rewrite(json!({"vars": {"A": "x"}}), "a: {{A}}\nb: {{B}}\nc: {{C}}\n").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Error);
        assert_eq!(error.message(), "template: /p/pipeline.yaml:2: unknown variable '{{B}}' (not in option 'vars')");
        let error = rewrite(json!({}), "x\n{{A").unwrap_err();
        assert_eq!(error.message(), "template: /p/pipeline.yaml:2: '{{' without a closing '}}'");
        let error = rewrite(json!({"vars": [1]}), "").unwrap_err();
        assert_eq!((error.kind(), error.message()), (ErrorKind::InvalidOptions, "option 'vars' must be of type object, got [1]"));
        let error = rewrite(json!({"var": {}}), "").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidOptions);
    }
}
