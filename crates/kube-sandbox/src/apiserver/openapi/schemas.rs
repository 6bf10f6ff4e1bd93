//! The documents' definitions, generated from k8s-openapi's models (their
//! `schemars` schemas carry the upstream names and descriptions), with the
//! vendor extensions kubectl reads that the models do not carry:
//! `x-kubernetes-group-version-kind` on each served kind (how kubectl finds
//! a kind's schema, kube-openapi pkg/util/proto) and the strategic merge
//! patch keys (`x-kubernetes-patch-strategy`, `-merge-key`) from the same
//! table the sandbox patches with (crate::apiserver::patch), so that a
//! client computes the patches the sandbox applies.

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::apiserver::patch::{merge_key, merges_primitives};
use crate::models::{Model, WithModel, with_model};
use crate::resources::Resource;

/// Which OpenAPI version the definitions are for: where `$ref` points, and
/// whether a `$ref` may have siblings (v2) or is wrapped in `allOf` (v3).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavor {
    V2,
    V3,
}

impl Flavor {
    pub(super) fn reference(self, name: &str) -> Value {
        match self {
            Flavor::V2 => json!({"$ref": format!("#/definitions/{name}")}),
            Flavor::V3 => json!({"$ref": format!("#/components/schemas/{name}")}),
        }
    }
}

/// The definition name of a resource's kind (`io.k8s.api.core.v1.Pod`).
pub(super) fn definition_name(res: Resource) -> String {
    struct Name;
    impl WithModel for Name {
        type Out = String;
        fn with<T: Model>(self) -> String {
            T::schema_name().into_owned()
        }
    }
    with_model(res, Name).unwrap_or_else(|| {
        // A custom resource: named as the apiserver names CRD schemas,
        // the group reversed.
        let i = res.info();
        let group: Vec<&str> = i.group.split('.').rev().collect();
        format!("{}.{}.{}", group.join("."), i.version, i.kind)
    })
}

/// The definitions these resources' kinds reach, with kubectl's extensions.
pub(super) fn definitions(resources: &[Resource], flavor: Flavor) -> Map<String, Value> {
    struct Add<'a>(&'a mut SchemaGenerator);
    impl WithModel for Add<'_> {
        type Out = ();
        fn with<T: Model>(self) {
            self.0.subschema_for::<T>();
        }
    }
    let settings = match flavor {
        Flavor::V2 => SchemaSettings::draft07().with(|s| {
            s.meta_schema = None;
            s.transforms.clear();
        }),
        Flavor::V3 => SchemaSettings::openapi3().with(|s| s.meta_schema = None),
    };
    let mut generator = settings.into_generator();
    for res in resources {
        with_model(*res, Add(&mut generator));
    }
    let mut defs = generator.take_definitions(true);
    for def in defs.values_mut() {
        add_patch_keys(def);
    }
    for res in resources {
        let i = res.info();
        let def = defs.entry(definition_name(*res)).or_insert_with(|| {
            json!({
                "type": "object",
                "description": format!("{} of {} (a custom resource: its schema is not known to the sandbox).", i.kind, i.group),
                "x-kubernetes-preserve-unknown-fields": true,
            })
        });
        def["x-kubernetes-group-version-kind"] =
            json!([{"group": i.group, "version": i.version, "kind": i.kind}]);
    }
    defs
}

/// Marks the list properties the sandbox merges by key, as the upstream
/// struct tags do.
fn add_patch_keys(def: &mut Value) {
    let Some(props) = def.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, prop) in props.iter_mut() {
        if prop.get("type").and_then(Value::as_str) != Some("array") {
            continue;
        }
        if let Some(key) = merge_key(name) {
            prop["x-kubernetes-patch-strategy"] = json!("merge");
            prop["x-kubernetes-patch-merge-key"] = json!(key);
        } else if merges_primitives(name) {
            prop["x-kubernetes-patch-strategy"] = json!("merge");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_carry_their_group_version_kind_and_lists_their_merge_keys() {
        let defs = definitions(&[Resource::Pods, Resource::Deployments], Flavor::V2);
        let pod = &defs["io.k8s.api.core.v1.Pod"];
        assert_eq!(
            pod["x-kubernetes-group-version-kind"],
            json!([{"group": "", "version": "v1", "kind": "Pod"}])
        );
        assert_eq!(
            pod["properties"]["spec"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.PodSpec"
        );
        let containers = &defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert!(defs.contains_key("io.k8s.api.apps.v1.DeploymentSpec"));
        let v3 = definitions(&[Resource::Pods], Flavor::V3);
        let spec = &v3["io.k8s.api.core.v1.Pod"]["properties"]["spec"];
        assert_eq!(
            spec["allOf"][0]["$ref"], "#/components/schemas/io.k8s.api.core.v1.PodSpec",
            "{spec}"
        );
    }
}
