//! The four request kinds and their strict parser.

use crate::limits::{
    CHOICES, CHOICE_CHARS, DEFAULT_MAX_OUTPUT_CHARS, FIELDS, FIELD_DESCRIPTION_MAX_CHARS,
    FIELD_NAME_MAX_CHARS, INPUT_MAX_DEPTH, MAX_OUTPUT_CHARS, PROMPT_MAX_CHARS, TEXT_FIELD_MAX_LENGTH,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fields::{check_document, distinct_strings, type_name, Fields};
use crate::problems::{Path, Problems};

/// What a task asks the model for. Serializes to the normalized form that is stored and
/// hashed: defaults are written out, so equal requests hash equally however they were spelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AiRequest {
    GenerateText(GenerateText),
    Classify(Classify),
    ClassifyMany(ClassifyMany),
    ExtractData(ExtractData),
}

/// Free text of at most `max_output_chars` characters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateText {
    pub prompt: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    pub max_output_chars: u32,
}

/// Exactly one of the declared choices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Classify {
    pub prompt: String,
    pub input: Value,
    pub choices: Vec<String>,
}

/// Between `min_choices` and `max_choices` distinct choices, in declared order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassifyMany {
    pub prompt: String,
    pub input: Value,
    pub choices: Vec<String>,
    pub min_choices: u32,
    pub max_choices: u32,
}

/// An object with the declared fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtractData {
    pub prompt: String,
    pub input: Value,
    pub fields: Vec<FieldSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    Text,
    Number,
    Boolean,
    DateTime,
    Choice,
}

/// One field of an `extract_data` request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub field_type: FieldType,
    pub description: String,
    pub required: bool,
    /// Text fields only (default 20000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// Choice fields only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
}

/// The kind of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    GenerateText,
    Classify,
    ClassifyMany,
    ExtractData,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::GenerateText, Kind::Classify, Kind::ClassifyMany, Kind::ExtractData];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::GenerateText => "generate_text",
            Kind::Classify => "classify",
            Kind::ClassifyMany => "classify_many",
            Kind::ExtractData => "extract_data",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

impl AiRequest {
    pub fn kind(&self) -> Kind {
        match self {
            AiRequest::GenerateText(_) => Kind::GenerateText,
            AiRequest::Classify(_) => Kind::Classify,
            AiRequest::ClassifyMany(_) => Kind::ClassifyMany,
            AiRequest::ExtractData(_) => Kind::ExtractData,
        }
    }

    pub fn prompt(&self) -> &str {
        match self {
            AiRequest::GenerateText(r) => &r.prompt,
            AiRequest::Classify(r) => &r.prompt,
            AiRequest::ClassifyMany(r) => &r.prompt,
            AiRequest::ExtractData(r) => &r.prompt,
        }
    }

    pub fn input(&self) -> Option<&Value> {
        match self {
            AiRequest::GenerateText(r) => r.input.as_ref(),
            AiRequest::Classify(r) => Some(&r.input),
            AiRequest::ClassifyMany(r) => Some(&r.input),
            AiRequest::ExtractData(r) => Some(&r.input),
        }
    }

    /// The normalized request as JSON (what is stored and hashed).
    pub fn to_value(&self) -> Value {
        // Serializing these plain structs cannot fail: no maps with non-string keys, no floats.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Parse a request strictly: unknown fields are refused and every problem is reported,
    /// each with its path under `path`.
    pub fn parse(value: &Value, path: &Path) -> Result<AiRequest, Problems> {
        let mut problems = Problems::new();
        let Some(kind_value) = value.get("kind") else {
            if !value.is_object() {
                problems.add(path, format!("must be an object, not {}", type_name(value)));
            } else {
                problems.add(&path.key("kind"), "is required");
            }
            return Err(problems);
        };
        let Some(kind) = kind_value.as_str().and_then(Kind::parse) else {
            problems.add(
                &path.key("kind"),
                "must be one of generate_text, classify, classify_many, extract_data",
            );
            return Err(problems);
        };
        let request = match kind {
            Kind::GenerateText => {
                parse_generate_text(value, path, &mut problems).map(AiRequest::GenerateText)
            }
            Kind::Classify => parse_classify(value, path, &mut problems).map(AiRequest::Classify),
            Kind::ClassifyMany => {
                parse_classify_many(value, path, &mut problems).map(AiRequest::ClassifyMany)
            }
            Kind::ExtractData => parse_extract_data(value, path, &mut problems).map(AiRequest::ExtractData),
        };
        match request {
            Some(request) if problems.is_empty() => Ok(request),
            _ => Err(problems),
        }
    }
}

fn prompt_and_input<'a>(
    fields: &Fields<'a>,
    input_required: bool,
    problems: &mut Problems,
) -> (Option<String>, Option<&'a Value>) {
    let prompt = fields.string("prompt", 1, PROMPT_MAX_CHARS, problems);
    let input = if input_required { fields.required_any("input", problems) } else { fields.value("input") };
    if let Some(input) = input {
        check_document(input, &fields.path("input"), INPUT_MAX_DEPTH, problems);
    }
    (prompt, input)
}

fn parse_generate_text(value: &Value, path: &Path, problems: &mut Problems) -> Option<GenerateText> {
    let fields = Fields::object(value, path, &["kind", "prompt", "input", "maxOutputChars"], problems)?;
    let (prompt, input) = prompt_and_input(&fields, false, problems);
    let max_output_chars = match fields.value("maxOutputChars") {
        None => Some(DEFAULT_MAX_OUTPUT_CHARS),
        Some(_) => fields.opt_integer("maxOutputChars", 1, MAX_OUTPUT_CHARS, problems),
    };
    Some(GenerateText {
        prompt: prompt?,
        input: input.cloned(),
        max_output_chars: u32::try_from(max_output_chars?).ok()?,
    })
}

fn parse_choices(fields: &Fields<'_>, problems: &mut Problems) -> Option<Vec<String>> {
    let value = fields.required("choices", problems)?;
    distinct_strings(value, &fields.path("choices"), CHOICES, CHOICE_CHARS, problems)
}

fn parse_classify(value: &Value, path: &Path, problems: &mut Problems) -> Option<Classify> {
    let fields = Fields::object(value, path, &["kind", "prompt", "input", "choices"], problems)?;
    let (prompt, input) = prompt_and_input(&fields, true, problems);
    let choices = parse_choices(&fields, problems);
    Some(Classify { prompt: prompt?, input: input?.clone(), choices: choices? })
}

fn parse_classify_many(value: &Value, path: &Path, problems: &mut Problems) -> Option<ClassifyMany> {
    let fields = Fields::object(
        value,
        path,
        &["kind", "prompt", "input", "choices", "minChoices", "maxChoices"],
        problems,
    )?;
    let (prompt, input) = prompt_and_input(&fields, true, problems);
    let choices = parse_choices(&fields, problems);
    // Without valid choices the bounds can still be checked against the largest allowed count.
    let n = choices.as_ref().map_or(CHOICES.1, Vec::len) as i64;
    let min = match fields.value("minChoices") {
        None => Some(0),
        Some(_) => fields.opt_integer("minChoices", 0, n, problems),
    };
    let max = match fields.value("maxChoices") {
        None => Some(n),
        Some(_) => fields.opt_integer("maxChoices", min.unwrap_or(0), n, problems),
    };
    Some(ClassifyMany {
        prompt: prompt?,
        input: input?.clone(),
        choices: choices?,
        min_choices: u32::try_from(min?).ok()?,
        max_choices: u32::try_from(max?).ok()?,
    })
}

fn parse_extract_data(value: &Value, path: &Path, problems: &mut Problems) -> Option<ExtractData> {
    let fields = Fields::object(value, path, &["kind", "prompt", "input", "fields"], problems)?;
    let (prompt, input) = prompt_and_input(&fields, true, problems);
    let specs = fields
        .required("fields", problems)
        .and_then(|v| parse_field_specs(v, &fields.path("fields"), problems));
    Some(ExtractData { prompt: prompt?, input: input?.clone(), fields: specs? })
}

fn parse_field_specs(value: &Value, path: &Path, problems: &mut Problems) -> Option<Vec<FieldSpec>> {
    let Some(items) = value.as_array() else {
        problems.add(path, format!("must be an array, not {}", type_name(value)));
        return None;
    };
    let before = problems.len();
    if items.len() < FIELDS.0 || items.len() > FIELDS.1 {
        problems.add(path, format!("must have between {} and {} fields", FIELDS.0, FIELDS.1));
        if items.len() > FIELDS.1 {
            // Its items are not walked: a megabyte of them would be as many problems.
            return None;
        }
    }
    let mut names = std::collections::HashSet::new();
    let mut specs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = path.index(i);
        if let Some(spec) = parse_field_spec(item, &item_path, problems) {
            if !names.insert(spec.name.clone()) {
                problems.add(&item_path.key("name"), format!("repeats the field name {:?}", spec.name));
            }
            specs.push(spec);
        }
    }
    (problems.len() == before).then_some(specs)
}

fn is_field_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_field_spec(value: &Value, path: &Path, problems: &mut Problems) -> Option<FieldSpec> {
    let fields = Fields::object(
        value,
        path,
        &["name", "type", "description", "required", "maxLength", "choices"],
        problems,
    )?;
    let name = fields.string("name", 1, FIELD_NAME_MAX_CHARS, problems).filter(|name| {
        let ok = is_field_name(name);
        if !ok {
            problems.add(&fields.path("name"), "must match [A-Za-z_][A-Za-z0-9_]*");
        }
        ok
    });
    let field_type = match fields.required("type", problems) {
        None => None,
        Some(value) => {
            let parsed = match value.as_str() {
                Some("text") => Some(FieldType::Text),
                Some("number") => Some(FieldType::Number),
                Some("boolean") => Some(FieldType::Boolean),
                Some("date_time") => Some(FieldType::DateTime),
                Some("choice") => Some(FieldType::Choice),
                _ => None,
            };
            if parsed.is_none() {
                problems.add(&fields.path("type"), "must be one of text, number, boolean, date_time, choice");
            }
            parsed
        }
    };
    let description = fields.string("description", 0, FIELD_DESCRIPTION_MAX_CHARS, problems);
    let required = fields.boolean("required", problems);

    let max_length = match (field_type, fields.has("maxLength")) {
        (Some(FieldType::Text), true) => {
            fields.opt_integer("maxLength", 1, TEXT_FIELD_MAX_LENGTH, problems).map(Some)
        }
        (Some(FieldType::Text), false) => Some(Some(TEXT_FIELD_MAX_LENGTH)),
        (_, true) => {
            problems.add(&fields.path("maxLength"), "is allowed on text fields only");
            None
        }
        (_, false) => Some(None),
    };
    let choices = match (field_type, fields.value("choices")) {
        (Some(FieldType::Choice), Some(value)) => {
            distinct_strings(value, &fields.path("choices"), CHOICES, CHOICE_CHARS, problems).map(Some)
        }
        (Some(FieldType::Choice), None) => {
            problems.add(&fields.path("choices"), "is required for choice fields");
            None
        }
        (_, Some(_)) => {
            problems.add(&fields.path("choices"), "is allowed on choice fields only");
            None
        }
        (_, None) => Some(None),
    };
    Some(FieldSpec {
        name: name?,
        field_type: field_type?,
        description: description?,
        required: required?,
        max_length: max_length?.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        choices: choices?,
    })
}
