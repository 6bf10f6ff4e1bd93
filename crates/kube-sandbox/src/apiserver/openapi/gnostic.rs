//! The OpenAPI v2 document in protobuf, as client-go's discovery client
//! asks for it (`Accept: application/com.github.proto-openapi.spec.v2@v1.0
//! +protobuf`) and kubectl's validation, `apply` and `explain` read it.
//! The messages are gnostic's openapi_v2.Document (google/gnostic
//! openapiv2/OpenAPIv2.proto); the field numbers below are that file's.
//! Only what the sandbox's documents use is written: schemas (`$ref`,
//! format, description, required, enum, additionalProperties, type, items,
//! allOf, properties, vendor extensions), paths with their operations,
//! parameters and responses. A vendor extension's value is gnostic's `Any`
//! with the value as YAML text (JSON is YAML).

use serde_json::{Map, Value};

/// A protobuf message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn bytes(&mut self, field: u64, b: &[u8]) {
        self.varint(field << 3 | 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn string(&mut self, field: u64, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }

    fn message(&mut self, field: u64, m: &Msg) {
        self.bytes(field, &m.0);
    }

    fn boolean(&mut self, field: u64, b: bool) {
        if b {
            self.varint(field << 3);
            self.varint(1);
        }
    }

    fn str_field(&mut self, field: u64, v: &Value, key: &str) {
        if let Some(s) = v.get(key).and_then(Value::as_str) {
            self.string(field, s);
        }
    }

    fn strings(&mut self, field: u64, v: Option<&Value>) {
        for s in v.and_then(Value::as_array).into_iter().flatten() {
            if let Some(s) = s.as_str() {
                self.bytes(field, s.as_bytes());
            }
        }
    }

    /// The `x-` keys of an object as NamedAny { name = 1, value = 2: Any { yaml = 2 } }.
    fn extensions(&mut self, field: u64, v: &Value) {
        for (k, val) in v.as_object().into_iter().flatten() {
            if k.starts_with("x-") {
                self.message(field, &named(k, &any(val)));
            }
        }
    }
}

fn any(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(2, &v.to_string());
    m
}

fn named(name: &str, value: &Msg) -> Msg {
    let mut m = Msg::default();
    m.string(1, name);
    m.message(2, value);
    m
}

fn schema(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.str_field(1, v, "$ref");
    m.str_field(2, v, "format");
    m.str_field(3, v, "title");
    m.str_field(4, v, "description");
    if let Some(d) = v.get("default") {
        m.message(5, &any(d));
    }
    m.strings(19, v.get("required"));
    for e in v
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(20, &any(e));
    }
    match v.get("additionalProperties") {
        Some(Value::Bool(b)) => {
            let mut item = Msg::default();
            item.varint(2 << 3);
            item.varint(u64::from(*b));
            m.message(21, &item);
        }
        Some(s @ Value::Object(_)) => {
            let mut item = Msg::default();
            item.message(1, &schema(s));
            m.message(21, &item);
        }
        _ => {}
    }
    match v.get("type") {
        Some(Value::String(t)) => {
            let mut item = Msg::default();
            item.string(1, t);
            m.message(22, &item);
        }
        Some(types @ Value::Array(_)) => {
            let mut item = Msg::default();
            item.strings(1, Some(types));
            m.message(22, &item);
        }
        _ => {}
    }
    match v.get("items") {
        Some(s @ Value::Object(_)) => {
            let mut item = Msg::default();
            item.message(1, &schema(s));
            m.message(23, &item);
        }
        Some(Value::Array(all)) => {
            let mut item = Msg::default();
            for s in all {
                item.message(1, &schema(s));
            }
            m.message(23, &item);
        }
        _ => {}
    }
    for s in v
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(24, &schema(s));
    }
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        m.message(25, &named_schemas(props));
    }
    m.boolean(27, v.get("readOnly").and_then(Value::as_bool) == Some(true));
    m.extensions(31, v);
    m
}

/// Properties and Definitions alike: { additional_properties = 1: NamedSchema }.
fn named_schemas(map: &Map<String, Value>) -> Msg {
    let mut m = Msg::default();
    for (name, s) in map {
        m.message(1, &named(name, &schema(s)));
    }
    m
}

/// ParametersItem { parameter = 1: Parameter { body_parameter = 1 |
/// non_body_parameter = 2: NonBodyParameter { query = 3 | path = 4 } } }.
fn parameter(p: &Value) -> Msg {
    let mut param = Msg::default();
    if p["in"] == "body" {
        let mut body = Msg::default();
        body.str_field(1, p, "description");
        body.str_field(2, p, "name");
        body.str_field(3, p, "in");
        body.boolean(4, p["required"] == true);
        body.message(5, &schema(&p["schema"]));
        param.message(1, &body);
    } else {
        // Query and path sub-schemas differ in where `type` lives.
        let (which, type_field) = if p["in"] == "path" { (4, 5) } else { (3, 6) };
        let mut sub = Msg::default();
        sub.boolean(1, p["required"] == true);
        sub.str_field(2, p, "in");
        sub.str_field(3, p, "description");
        sub.str_field(4, p, "name");
        sub.str_field(type_field, p, "type");
        let mut non_body = Msg::default();
        non_body.message(which, &sub);
        param.message(2, &non_body);
    }
    let mut item = Msg::default();
    item.message(1, &param);
    item
}

fn operation(op: &Value) -> Msg {
    let mut m = Msg::default();
    m.str_field(3, op, "description");
    m.str_field(5, op, "operationId");
    m.strings(6, op.get("produces"));
    m.strings(7, op.get("consumes"));
    for p in op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(8, &parameter(p));
    }
    // Responses { response_code = 1: NamedResponseValue { name, value:
    // ResponseValue { response = 1: Response { description = 1, schema = 2:
    // SchemaItem { schema = 1 } } } } }.
    let mut responses = Msg::default();
    for (code, r) in op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let mut response = Msg::default();
        response.str_field(1, r, "description");
        if let Some(s) = r.get("schema") {
            let mut item = Msg::default();
            item.message(1, &schema(s));
            response.message(2, &item);
        }
        let mut value = Msg::default();
        value.message(1, &response);
        responses.message(1, &named(code, &value));
    }
    m.message(9, &responses);
    m.extensions(13, op);
    m
}

fn path_item(p: &Value) -> Msg {
    let mut m = Msg::default();
    for (field, method) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (8, "patch"),
    ] {
        if let Some(op) = p.get(method) {
            m.message(field, &operation(op));
        }
    }
    for param in p
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(9, &parameter(param));
    }
    m
}

/// The whole document: Document { swagger = 1, info = 2 { title = 1,
/// version = 2 }, paths = 8 { path = 2 }, definitions = 9 }.
pub(super) fn encode(doc: &Value) -> Vec<u8> {
    let mut m = Msg::default();
    m.str_field(1, doc, "swagger");
    let mut info = Msg::default();
    info.str_field(1, &doc["info"], "title");
    info.str_field(2, &doc["info"], "version");
    m.message(2, &info);
    let mut paths = Msg::default();
    for (url, item) in doc["paths"].as_object().into_iter().flatten() {
        paths.message(2, &named(url, &path_item(item)));
    }
    m.message(8, &paths);
    if let Some(defs) = doc["definitions"].as_object() {
        m.message(9, &named_schemas(defs));
    }
    m.0
}
