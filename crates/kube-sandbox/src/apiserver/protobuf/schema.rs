//! The messages the sandbox reads from protobuf bodies, by field number, as
//! the `generated.proto` files of k8s.io/api and k8s.io/apimachinery number
//! them (k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto,
//! k8s.io/api/{core,apps,batch,policy,rbac,autoscaling,authorization}/v1/
//! generated.proto). A message lists what `kubectl create`, `run`,
//! `scale`, `delete` and `auth can-i` write and what a drain rehearsal
//! reads back; a field not listed here that carries a value is refused, never
//! dropped (`super::decode`), so what the sandbox stores is what was sent.

/// How a field's value reads as JSON.
#[derive(Clone, Copy)]
pub(super) enum Ty {
    Str,
    /// Any varint integer; int32 and int64 are both sign-extended on the wire.
    Int,
    Bool,
    Msg(&'static Message),
    /// A message Go embeds, whose fields JSON inlines into the parent's
    /// (`ConfigMapKeySelector.localObjectReference` is JSON's `name`).
    Inline(&'static Message),
    /// meta/v1 Time {seconds = 1, nanos = 2}, RFC 3339 in JSON.
    Time,
    /// intstr.IntOrString {type = 1, intVal = 2, strVal = 3}.
    IntOrString,
    /// `map<string, string>`: entries {key = 1, value = 2}.
    StrMap,
    /// `map<string, bytes>`.
    BytesMap,
    /// `map<string, resource.Quantity>`, a Quantity being {string = 1}.
    QuantityMap,
    /// meta/v1 FieldsV1 {raw = 1}, whose bytes are JSON.
    Json,
}

pub(super) struct Field {
    pub(super) num: u64,
    pub(super) name: &'static str,
    pub(super) ty: Ty,
    pub(super) list: bool,
    /// A pointer in Go, so 0 and false are values and kept; JSON omits
    /// the zero of any other field (`omitempty`).
    pub(super) keeps_zero: bool,
}

pub(super) struct Message {
    pub(super) name: &'static str,
    pub(super) fields: &'static [Field],
}

const fn one(num: u64, name: &'static str, ty: Ty) -> Field {
    Field {
        num,
        name,
        ty,
        list: false,
        keeps_zero: false,
    }
}

/// A field Go holds by pointer (`*int32`, `*bool`).
const fn set(num: u64, name: &'static str, ty: Ty) -> Field {
    Field {
        num,
        name,
        ty,
        list: false,
        keeps_zero: true,
    }
}

const fn list(num: u64, name: &'static str, ty: Ty) -> Field {
    Field {
        num,
        name,
        ty,
        list: true,
        keeps_zero: false,
    }
}

/// The message a body's `kind` (from its `runtime.Unknown` typeMeta) holds.
pub(super) fn by_kind(kind: &str) -> Option<&'static Message> {
    Some(match kind {
        "Namespace" => &NAMESPACE,
        "ConfigMap" => &CONFIG_MAP,
        "Secret" => &SECRET,
        "ServiceAccount" => &SERVICE_ACCOUNT,
        "Pod" => &POD,
        "PodDisruptionBudget" => &PDB,
        "Deployment" => &DEPLOYMENT,
        "ReplicaSet" => &REPLICA_SET,
        "StatefulSet" => &STATEFUL_SET,
        "DaemonSet" => &DAEMON_SET,
        "Job" => &JOB,
        "Role" | "ClusterRole" => &ROLE,
        "RoleBinding" | "ClusterRoleBinding" => &ROLE_BINDING,
        "Scale" => &SCALE,
        "DeleteOptions" => &DELETE_OPTIONS,
        "SelfSubjectAccessReview" => &ACCESS_REVIEW,
        "SelfSubjectReview" => &SELF_REVIEW,
        _ => return None,
    })
}

// meta/v1

static OBJECT_META: Message = Message {
    name: "ObjectMeta",
    fields: &[
        one(1, "name", Ty::Str),
        one(2, "generateName", Ty::Str),
        one(3, "namespace", Ty::Str),
        one(4, "selfLink", Ty::Str),
        one(5, "uid", Ty::Str),
        one(6, "resourceVersion", Ty::Str),
        one(7, "generation", Ty::Int),
        one(8, "creationTimestamp", Ty::Time),
        one(9, "deletionTimestamp", Ty::Time),
        set(10, "deletionGracePeriodSeconds", Ty::Int),
        one(11, "labels", Ty::StrMap),
        one(12, "annotations", Ty::StrMap),
        list(13, "ownerReferences", Ty::Msg(&OWNER_REFERENCE)),
        list(14, "finalizers", Ty::Str),
        list(17, "managedFields", Ty::Msg(&MANAGED_FIELDS)),
    ],
};

static OWNER_REFERENCE: Message = Message {
    name: "OwnerReference",
    fields: &[
        one(1, "kind", Ty::Str),
        one(3, "name", Ty::Str),
        one(4, "uid", Ty::Str),
        one(5, "apiVersion", Ty::Str),
        set(6, "controller", Ty::Bool),
        set(7, "blockOwnerDeletion", Ty::Bool),
    ],
};

static MANAGED_FIELDS: Message = Message {
    name: "ManagedFieldsEntry",
    fields: &[
        one(1, "manager", Ty::Str),
        one(2, "operation", Ty::Str),
        one(3, "apiVersion", Ty::Str),
        one(4, "time", Ty::Time),
        one(6, "fieldsType", Ty::Str),
        one(7, "fieldsV1", Ty::Json),
        one(8, "subresource", Ty::Str),
    ],
};

static LABEL_SELECTOR: Message = Message {
    name: "LabelSelector",
    fields: &[
        one(1, "matchLabels", Ty::StrMap),
        list(2, "matchExpressions", Ty::Msg(&SELECTOR_REQUIREMENT)),
    ],
};

static SELECTOR_REQUIREMENT: Message = Message {
    name: "LabelSelectorRequirement",
    fields: &[
        one(1, "key", Ty::Str),
        one(2, "operator", Ty::Str),
        list(3, "values", Ty::Str),
    ],
};

static DELETE_OPTIONS: Message = Message {
    name: "DeleteOptions",
    fields: &[
        set(1, "gracePeriodSeconds", Ty::Int),
        one(2, "preconditions", Ty::Msg(&PRECONDITIONS)),
        set(3, "orphanDependents", Ty::Bool),
        one(4, "propagationPolicy", Ty::Str),
        list(5, "dryRun", Ty::Str),
        set(
            6,
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            Ty::Bool,
        ),
    ],
};

static PRECONDITIONS: Message = Message {
    name: "Preconditions",
    fields: &[one(1, "uid", Ty::Str), one(2, "resourceVersion", Ty::Str)],
};

// core/v1

static NAMESPACE: Message = Message {
    name: "Namespace",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&NAMESPACE_SPEC)),
    ],
};

static NAMESPACE_SPEC: Message = Message {
    name: "NamespaceSpec",
    fields: &[list(1, "finalizers", Ty::Str)],
};

static CONFIG_MAP: Message = Message {
    name: "ConfigMap",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "data", Ty::StrMap),
        one(3, "binaryData", Ty::BytesMap),
        set(4, "immutable", Ty::Bool),
    ],
};

static SECRET: Message = Message {
    name: "Secret",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "data", Ty::BytesMap),
        one(3, "type", Ty::Str),
        one(4, "stringData", Ty::StrMap),
        set(5, "immutable", Ty::Bool),
    ],
};

static SERVICE_ACCOUNT: Message = Message {
    name: "ServiceAccount",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        list(2, "secrets", Ty::Msg(&OBJECT_REFERENCE)),
        list(3, "imagePullSecrets", Ty::Msg(&LOCAL_REFERENCE)),
        set(4, "automountServiceAccountToken", Ty::Bool),
    ],
};

static OBJECT_REFERENCE: Message = Message {
    name: "ObjectReference",
    fields: &[
        one(1, "kind", Ty::Str),
        one(2, "namespace", Ty::Str),
        one(3, "name", Ty::Str),
        one(4, "uid", Ty::Str),
        one(5, "apiVersion", Ty::Str),
        one(6, "resourceVersion", Ty::Str),
        one(7, "fieldPath", Ty::Str),
    ],
};

static LOCAL_REFERENCE: Message = Message {
    name: "LocalObjectReference",
    fields: &[one(1, "name", Ty::Str)],
};

static POD: Message = Message {
    name: "Pod",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&POD_SPEC)),
    ],
};

static POD_TEMPLATE: Message = Message {
    name: "PodTemplateSpec",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&POD_SPEC)),
    ],
};

static POD_SPEC: Message = Message {
    name: "PodSpec",
    fields: &[
        list(2, "containers", Ty::Msg(&CONTAINER)),
        one(3, "restartPolicy", Ty::Str),
        set(4, "terminationGracePeriodSeconds", Ty::Int),
        set(5, "activeDeadlineSeconds", Ty::Int),
        one(6, "dnsPolicy", Ty::Str),
        one(7, "nodeSelector", Ty::StrMap),
        one(8, "serviceAccountName", Ty::Str),
        one(9, "serviceAccount", Ty::Str),
        one(10, "nodeName", Ty::Str),
        one(11, "hostNetwork", Ty::Bool),
        one(12, "hostPID", Ty::Bool),
        one(13, "hostIPC", Ty::Bool),
        list(15, "imagePullSecrets", Ty::Msg(&LOCAL_REFERENCE)),
        one(16, "hostname", Ty::Str),
        one(17, "subdomain", Ty::Str),
        one(19, "schedulerName", Ty::Str),
        list(20, "initContainers", Ty::Msg(&CONTAINER)),
        set(21, "automountServiceAccountToken", Ty::Bool),
        list(22, "tolerations", Ty::Msg(&TOLERATION)),
        one(24, "priorityClassName", Ty::Str),
        set(25, "priority", Ty::Int),
        set(27, "shareProcessNamespace", Ty::Bool),
        one(29, "runtimeClassName", Ty::Str),
        set(30, "enableServiceLinks", Ty::Bool),
        one(31, "preemptionPolicy", Ty::Str),
        one(32, "overhead", Ty::QuantityMap),
        set(35, "setHostnameAsFQDN", Ty::Bool),
        set(37, "hostUsers", Ty::Bool),
        list(38, "schedulingGates", Ty::Msg(&LOCAL_REFERENCE)),
    ],
};

static CONTAINER: Message = Message {
    name: "Container",
    fields: &[
        one(1, "name", Ty::Str),
        one(2, "image", Ty::Str),
        list(3, "command", Ty::Str),
        list(4, "args", Ty::Str),
        one(5, "workingDir", Ty::Str),
        list(6, "ports", Ty::Msg(&CONTAINER_PORT)),
        list(7, "env", Ty::Msg(&ENV_VAR)),
        one(8, "resources", Ty::Msg(&RESOURCES)),
        list(9, "volumeMounts", Ty::Msg(&VOLUME_MOUNT)),
        one(13, "terminationMessagePath", Ty::Str),
        one(14, "imagePullPolicy", Ty::Str),
        one(16, "stdin", Ty::Bool),
        one(17, "stdinOnce", Ty::Bool),
        one(18, "tty", Ty::Bool),
        one(20, "terminationMessagePolicy", Ty::Str),
        one(24, "restartPolicy", Ty::Str),
    ],
};

static CONTAINER_PORT: Message = Message {
    name: "ContainerPort",
    fields: &[
        one(1, "name", Ty::Str),
        one(2, "hostPort", Ty::Int),
        one(3, "containerPort", Ty::Int),
        one(4, "protocol", Ty::Str),
        one(5, "hostIP", Ty::Str),
    ],
};

static ENV_VAR: Message = Message {
    name: "EnvVar",
    fields: &[
        one(1, "name", Ty::Str),
        one(2, "value", Ty::Str),
        one(3, "valueFrom", Ty::Msg(&ENV_VAR_SOURCE)),
    ],
};

static ENV_VAR_SOURCE: Message = Message {
    name: "EnvVarSource",
    fields: &[
        one(1, "fieldRef", Ty::Msg(&FIELD_SELECTOR)),
        one(3, "configMapKeyRef", Ty::Msg(&KEY_SELECTOR)),
        one(4, "secretKeyRef", Ty::Msg(&KEY_SELECTOR)),
    ],
};

static FIELD_SELECTOR: Message = Message {
    name: "ObjectFieldSelector",
    fields: &[one(1, "apiVersion", Ty::Str), one(2, "fieldPath", Ty::Str)],
};

/// ConfigMapKeySelector and SecretKeySelector, numbered alike.
static KEY_SELECTOR: Message = Message {
    name: "KeySelector",
    fields: &[
        one(1, "", Ty::Inline(&LOCAL_REFERENCE)),
        one(2, "key", Ty::Str),
        set(3, "optional", Ty::Bool),
    ],
};

static RESOURCES: Message = Message {
    name: "ResourceRequirements",
    fields: &[
        one(1, "limits", Ty::QuantityMap),
        one(2, "requests", Ty::QuantityMap),
    ],
};

static VOLUME_MOUNT: Message = Message {
    name: "VolumeMount",
    fields: &[
        one(1, "name", Ty::Str),
        one(2, "readOnly", Ty::Bool),
        one(3, "mountPath", Ty::Str),
        one(4, "subPath", Ty::Str),
        one(5, "mountPropagation", Ty::Str),
        one(6, "subPathExpr", Ty::Str),
        one(7, "recursiveReadOnly", Ty::Str),
    ],
};

static TOLERATION: Message = Message {
    name: "Toleration",
    fields: &[
        one(1, "key", Ty::Str),
        one(2, "operator", Ty::Str),
        one(3, "value", Ty::Str),
        one(4, "effect", Ty::Str),
        set(5, "tolerationSeconds", Ty::Int),
    ],
};

// policy/v1

static PDB: Message = Message {
    name: "PodDisruptionBudget",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&PDB_SPEC)),
    ],
};

static PDB_SPEC: Message = Message {
    name: "PodDisruptionBudgetSpec",
    fields: &[
        one(1, "minAvailable", Ty::IntOrString),
        one(2, "selector", Ty::Msg(&LABEL_SELECTOR)),
        one(3, "maxUnavailable", Ty::IntOrString),
        one(4, "unhealthyPodEvictionPolicy", Ty::Str),
    ],
};

// apps/v1

static DEPLOYMENT: Message = Message {
    name: "Deployment",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&DEPLOYMENT_SPEC)),
    ],
};

static DEPLOYMENT_SPEC: Message = Message {
    name: "DeploymentSpec",
    fields: &[
        set(1, "replicas", Ty::Int),
        one(2, "selector", Ty::Msg(&LABEL_SELECTOR)),
        one(3, "template", Ty::Msg(&POD_TEMPLATE)),
        one(4, "strategy", Ty::Msg(&UPDATE_STRATEGY)),
        one(5, "minReadySeconds", Ty::Int),
        set(6, "revisionHistoryLimit", Ty::Int),
        one(7, "paused", Ty::Bool),
        set(9, "progressDeadlineSeconds", Ty::Int),
    ],
};

/// DeploymentStrategy and DaemonSetUpdateStrategy, numbered alike.
static UPDATE_STRATEGY: Message = Message {
    name: "UpdateStrategy",
    fields: &[
        one(1, "type", Ty::Str),
        one(2, "rollingUpdate", Ty::Msg(&ROLLING_UPDATE)),
    ],
};

static ROLLING_UPDATE: Message = Message {
    name: "RollingUpdate",
    fields: &[
        one(1, "maxUnavailable", Ty::IntOrString),
        one(2, "maxSurge", Ty::IntOrString),
    ],
};

static REPLICA_SET: Message = Message {
    name: "ReplicaSet",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&REPLICA_SET_SPEC)),
    ],
};

static REPLICA_SET_SPEC: Message = Message {
    name: "ReplicaSetSpec",
    fields: &[
        set(1, "replicas", Ty::Int),
        one(2, "selector", Ty::Msg(&LABEL_SELECTOR)),
        one(3, "template", Ty::Msg(&POD_TEMPLATE)),
        one(4, "minReadySeconds", Ty::Int),
    ],
};

static STATEFUL_SET: Message = Message {
    name: "StatefulSet",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&STATEFUL_SET_SPEC)),
    ],
};

static STATEFUL_SET_SPEC: Message = Message {
    name: "StatefulSetSpec",
    fields: &[
        set(1, "replicas", Ty::Int),
        one(2, "selector", Ty::Msg(&LABEL_SELECTOR)),
        one(3, "template", Ty::Msg(&POD_TEMPLATE)),
        one(5, "serviceName", Ty::Str),
        one(6, "podManagementPolicy", Ty::Str),
        one(7, "updateStrategy", Ty::Msg(&STATEFUL_SET_STRATEGY)),
        set(8, "revisionHistoryLimit", Ty::Int),
        one(9, "minReadySeconds", Ty::Int),
    ],
};

static STATEFUL_SET_STRATEGY: Message = Message {
    name: "StatefulSetUpdateStrategy",
    fields: &[
        one(1, "type", Ty::Str),
        one(2, "rollingUpdate", Ty::Msg(&STATEFUL_SET_ROLLING)),
    ],
};

static STATEFUL_SET_ROLLING: Message = Message {
    name: "RollingUpdateStatefulSetStrategy",
    fields: &[
        set(1, "partition", Ty::Int),
        one(2, "maxUnavailable", Ty::IntOrString),
    ],
};

static DAEMON_SET: Message = Message {
    name: "DaemonSet",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&DAEMON_SET_SPEC)),
    ],
};

static DAEMON_SET_SPEC: Message = Message {
    name: "DaemonSetSpec",
    fields: &[
        one(1, "selector", Ty::Msg(&LABEL_SELECTOR)),
        one(2, "template", Ty::Msg(&POD_TEMPLATE)),
        one(3, "updateStrategy", Ty::Msg(&UPDATE_STRATEGY)),
        one(4, "minReadySeconds", Ty::Int),
        one(5, "templateGeneration", Ty::Int),
        set(6, "revisionHistoryLimit", Ty::Int),
    ],
};

// batch/v1

static JOB: Message = Message {
    name: "Job",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&JOB_SPEC)),
    ],
};

static JOB_SPEC: Message = Message {
    name: "JobSpec",
    fields: &[
        set(1, "parallelism", Ty::Int),
        set(2, "completions", Ty::Int),
        set(3, "activeDeadlineSeconds", Ty::Int),
        one(4, "selector", Ty::Msg(&LABEL_SELECTOR)),
        set(5, "manualSelector", Ty::Bool),
        one(6, "template", Ty::Msg(&POD_TEMPLATE)),
        set(7, "backoffLimit", Ty::Int),
        set(8, "ttlSecondsAfterFinished", Ty::Int),
        one(9, "completionMode", Ty::Str),
        set(10, "suspend", Ty::Bool),
        set(12, "backoffLimitPerIndex", Ty::Int),
        set(13, "maxFailedIndexes", Ty::Int),
        one(14, "podReplacementPolicy", Ty::Str),
        one(15, "managedBy", Ty::Str),
    ],
};

// rbac/v1

static ROLE: Message = Message {
    name: "Role",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        list(2, "rules", Ty::Msg(&POLICY_RULE)),
        one(3, "aggregationRule", Ty::Msg(&AGGREGATION_RULE)),
    ],
};

static POLICY_RULE: Message = Message {
    name: "PolicyRule",
    fields: &[
        list(1, "verbs", Ty::Str),
        list(2, "apiGroups", Ty::Str),
        list(3, "resources", Ty::Str),
        list(4, "resourceNames", Ty::Str),
        list(5, "nonResourceURLs", Ty::Str),
    ],
};

static AGGREGATION_RULE: Message = Message {
    name: "AggregationRule",
    fields: &[list(1, "clusterRoleSelectors", Ty::Msg(&LABEL_SELECTOR))],
};

static ROLE_BINDING: Message = Message {
    name: "RoleBinding",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        list(2, "subjects", Ty::Msg(&SUBJECT)),
        one(3, "roleRef", Ty::Msg(&ROLE_REF)),
    ],
};

static SUBJECT: Message = Message {
    name: "Subject",
    fields: &[
        one(1, "kind", Ty::Str),
        one(2, "apiGroup", Ty::Str),
        one(3, "name", Ty::Str),
        one(4, "namespace", Ty::Str),
    ],
};

static ROLE_REF: Message = Message {
    name: "RoleRef",
    fields: &[
        one(1, "apiGroup", Ty::Str),
        one(2, "kind", Ty::Str),
        one(3, "name", Ty::Str),
    ],
};

// autoscaling/v1

static SCALE: Message = Message {
    name: "Scale",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&SCALE_SPEC)),
    ],
};

static SCALE_SPEC: Message = Message {
    name: "ScaleSpec",
    fields: &[set(1, "replicas", Ty::Int)],
};

// authentication/v1 (`kubectl auth whoami`) and authorization/v1

static SELF_REVIEW: Message = Message {
    name: "SelfSubjectReview",
    fields: &[one(1, "metadata", Ty::Msg(&OBJECT_META))],
};

static ACCESS_REVIEW: Message = Message {
    name: "SelfSubjectAccessReview",
    fields: &[
        one(1, "metadata", Ty::Msg(&OBJECT_META)),
        one(2, "spec", Ty::Msg(&ACCESS_REVIEW_SPEC)),
    ],
};

static ACCESS_REVIEW_SPEC: Message = Message {
    name: "SelfSubjectAccessReviewSpec",
    fields: &[
        one(1, "resourceAttributes", Ty::Msg(&RESOURCE_ATTRIBUTES)),
        one(
            2,
            "nonResourceAttributes",
            Ty::Msg(&NON_RESOURCE_ATTRIBUTES),
        ),
    ],
};

static RESOURCE_ATTRIBUTES: Message = Message {
    name: "ResourceAttributes",
    fields: &[
        one(1, "namespace", Ty::Str),
        one(2, "verb", Ty::Str),
        one(3, "group", Ty::Str),
        one(4, "version", Ty::Str),
        one(5, "resource", Ty::Str),
        one(6, "subresource", Ty::Str),
        one(7, "name", Ty::Str),
    ],
};

static NON_RESOURCE_ATTRIBUTES: Message = Message {
    name: "NonResourceAttributes",
    fields: &[one(1, "path", Ty::Str), one(2, "verb", Ty::Str)],
};
