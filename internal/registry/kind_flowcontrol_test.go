package registry

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

// Validation and defaults of FlowSchemas, PriorityLevelConfigurations,
// StorageVersionMigrations and MutatingAdmissionPolicies with their
// bindings, with kube's messages.

const fsHead = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: fs}
`

const fsUserRule = `  rules:
  - subjects: [{kind: User, user: {name: alice}}]
    nonResourceRules: [{verbs: ["*"], nonResourceURLs: ["*"]}]
`

func TestFlowSchemaValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a schema naming its priority level is valid", fsHead + "spec:\n  priorityLevelConfiguration: {name: global-default}\n" + fsUserRule, ""},
		{"a priority level is required", fsHead + "spec: {priorityLevelConfiguration: {name: \"\"}}",
			"spec.priorityLevelConfiguration.name: Required value: must reference a priority level"},
		{"precedence is in [1,10000], 1 only for exempt", fsHead + "spec: {priorityLevelConfiguration: {name: p}, matchingPrecedence: 1}",
			"spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"},
		{"precedence is at most 10000", fsHead + "spec: {priorityLevelConfiguration: {name: p}, matchingPrecedence: 10001}",
			"spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"},
		{"precedence is positive", fsHead + "spec: {priorityLevelConfiguration: {name: p}, matchingPrecedence: -3}",
			"spec.matchingPrecedence: Invalid value: -3: must be a positive value"},
		{"distinguishers are ByUser or ByNamespace", fsHead + "spec: {priorityLevelConfiguration: {name: p}, distinguisherMethod: {type: ByColour}}",
			`spec.distinguisherMethod.type: Unsupported value: {"type":"ByColour"}: supported values: "ByNamespace", "ByUser"`},
		{"a rule needs subjects and rules", fsHead + "spec: {priorityLevelConfiguration: {name: p}, rules: [{}]}",
			"spec.rules[0].subjects: Required value: subjects must contain at least one value\n" +
				"spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"},
		{"subjects carry their kind's field only", fsHead + `spec:
  priorityLevelConfiguration: {name: p}
  rules:
  - subjects:
    - {kind: User, group: {name: g}}
    - {kind: ServiceAccount, serviceAccount: {name: "*"}}
    - {kind: Robot}
    nonResourceRules: [{verbs: [get], nonResourceURLs: [/healthz]}]
`,
			"spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'\n" +
				"spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'\n" +
				"spec.rules[0].subjects[1].serviceAccount.namespace: Required value: must specify namespace for service account\n" +
				`spec.rules[0].subjects[2].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"`},
		{"resource rules need verbs, groups, resources and namespaces", fsHead + `spec:
  priorityLevelConfiguration: {name: p}
  rules:
  - subjects: [{kind: Group, group: {name: system:authenticated}}]
    resourceRules:
    - {verbs: [get, fly], apiGroups: ["*", apps], resources: [pods]}
    - {verbs: ["*"], apiGroups: [""], resources: [pods], namespaces: [Bad_NS]}
`,
			`spec.rules[0].resourceRules[0].verbs: Unsupported value: ["get","fly"]: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"` + "\n" +
				`spec.rules[0].resourceRules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other api groups` + "\n" +
				"spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace\n" +
				`spec.rules[0].resourceRules[1].namespaces[0]: Invalid value: "Bad_NS": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"non-resource URLs are paths with a trailing wildcard only", fsHead + `spec:
  priorityLevelConfiguration: {name: p}
  rules:
  - subjects: [{kind: User, user: {name: alice}}]
    nonResourceRules: [{verbs: [get], nonResourceURLs: [healthz, "/a//b", "/a/*/b", "/ok/*"]}]
`,
			`spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "healthz": must start with slash` + "\n" +
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "/a//b": must not contain double slash` + "\n" +
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: "/a/*/b": wildcard can only do suffix matching`},
	})
	t.Run("matchingPrecedence defaults to 1000", func(t *testing.T) {
		fs := defaulted(decode(t, fsHead+"spec: {priorityLevelConfiguration: {name: p}}")).(*flowcontrolv1.FlowSchema)
		if fs.Spec.MatchingPrecedence != 1000 {
			t.Errorf("matchingPrecedence = %d, want 1000", fs.Spec.MatchingPrecedence)
		}
	})
	t.Run("the mandatory schemas keep their bootstrap spec", func(t *testing.T) {
		for _, fs := range bootstrap.MandatoryFlowSchemas {
			if errs := create(typedFS(fs)); len(errs) > 0 {
				t.Errorf("bootstrap %s: %v", fs.Name, errs)
			}
			changed := typedFS(fs)
			changed.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}
			want := "spec: Invalid value: "
			if got := messages(create(changed)); len(got) < len(want) || got[:len(want)] != want ||
				got[len(got)-len("must equal the fixed value"):] != "must equal the fixed value" {
				t.Errorf("changed %s: errors %q, want the fixed-value error", fs.Name, got)
			}
		}
		for _, fs := range bootstrap.SuggestedFlowSchemas {
			if errs := create(typedFS(fs)); len(errs) > 0 {
				t.Errorf("bootstrap %s: %v", fs.Name, errs)
			}
		}
	})
}

// typedFS and typedPL are copies of bootstrap objects with their kind
// set, as a client sends them.
func typedFS(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchema {
	c := fs.DeepCopy()
	c.SetGroupVersionKind(flowcontrolv1.SchemeGroupVersion.WithKind("FlowSchema"))
	return c
}

func typedPL(pl *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	c := pl.DeepCopy()
	c.SetGroupVersionKind(flowcontrolv1.SchemeGroupVersion.WithKind("PriorityLevelConfiguration"))
	return c
}

const plHead = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: pl}
`

func TestPriorityLevelConfigurationValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a queuing level is valid", plHead + "spec: {type: Limited, limited: {limitResponse: {type: Queue, queuing: {}}}}", ""},
		{"only exempt is Exempt", plHead + "spec: {type: Exempt}",
			"spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'"},
		{"a type is required", plHead + "spec: {}", "spec.type: Required value"},
		{"a limited level has limited only", plHead + "spec: {type: Limited, exempt: {}}",
			"spec.exempt: Forbidden: must be nil if the type is Limited\nspec.limited: Required value: must not be empty when type is Limited"},
		{"limits are in range", plHead + "spec: {type: Limited, limited: {nominalConcurrencyShares: -1, lendablePercent: 101, borrowingLimitPercent: -2, limitResponse: {type: Reject, queuing: {}}}}",
			"spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer\n" +
				"spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited\n" +
				"spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive\n" +
				"spec.limited.borrowingLimitPercent: Invalid value: -2: if specified, must be a non-negative integer"},
		{"a hand fits the queues", plHead + "spec: {type: Limited, limited: {limitResponse: {type: Queue, queuing: {queues: 4, handSize: 5}}}}",
			"spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)"},
		{"a hand has bounded entropy", plHead + "spec: {type: Limited, limited: {limitResponse: {type: Queue, queuing: {queues: 10000000, handSize: 10000}}}}",
			"spec.limited.limitResponse.queuing.handSize: Invalid value: 10000: required entropy bits of deckSize 10000000 and handSize 10000 should not be greater than 60"},
		{"responses are Queue or Reject", plHead + "spec: {type: Limited, limited: {limitResponse: {type: Drop}}}",
			`spec.limited.limitResponse.type: Unsupported value: "Drop": supported values: "Queue", "Reject"`},
	})
	t.Run("defaults are kube's", func(t *testing.T) {
		pl := defaulted(decode(t, plHead+"spec: {type: Limited, limited: {limitResponse: {type: Queue, queuing: {}}}}"))
		sameJSON(t, pl, `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: pl}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 30
    lendablePercent: 0
    limitResponse: {type: Queue, queuing: {queues: 64, handSize: 8, queueLengthLimit: 50}}
status: {}`)
		ex := defaulted(decode(t, "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: exempt}\nspec: {type: Exempt, exempt: {}}"))
		sameJSON(t, ex, `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: exempt}
spec: {type: Exempt, exempt: {nominalConcurrencyShares: 0, lendablePercent: 0}}
status: {}`)
	})
	t.Run("the mandatory levels keep their bootstrap spec, but exempt's exempt", func(t *testing.T) {
		for _, pl := range append(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations...) {
			if errs := create(typedPL(pl)); len(errs) > 0 {
				t.Errorf("bootstrap %s: %v", pl.Name, errs)
			}
		}
		ex := typedPL(bootstrap.MandatoryPriorityLevelConfigurationExempt)
		shares := int32(7)
		ex.Spec.Exempt.NominalConcurrencyShares = &shares
		if errs := create(ex); len(errs) > 0 {
			t.Errorf("exempt with other shares: %v", errs)
		}
		ca := typedPL(bootstrap.MandatoryPriorityLevelConfigurationCatchAll)
		ca.Spec.Limited.NominalConcurrencyShares = &shares
		errs := create(ca)
		if len(errs) != 1 || errs[0].Detail != "spec of 'catch-all' must equal the fixed value" {
			t.Errorf("changed catch-all: %v", errs)
		}
	})
}

const svmHead = `apiVersion: storagemigration.k8s.io/v1
kind: StorageVersionMigration
metadata: {name: m}
`

func TestStorageVersionMigrationValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a migration of a resource is valid", svmHead + "spec: {resource: {group: apps, resource: deployments}}", ""},
		{"a resource is required", svmHead + "spec: {resource: {group: apps}}",
			"spec.resource.resource: Required value: resource is required to be set"},
		{"names are DNS labels and subdomains", svmHead + "spec: {resource: {group: Bad_Group, resource: 9lives}}",
			`spec.resource.resource: Invalid value: "9lives": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')` + "\n" +
				`spec.resource.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	})
	old := decode(t, svmHead+"spec: {resource: {group: apps, resource: deployments}}").(*storagemigrationv1.StorageVersionMigration)
	old.ResourceVersion = "5"
	t.Run("the spec is immutable", func(t *testing.T) {
		m := old.DeepCopy()
		m.Spec.Resource.Resource = "replicasets"
		if got, want := messages(update(m, old)), `spec: Invalid value: {"resource":{"group":"apps","resource":"replicasets"}}: field is immutable`; got != want {
			t.Errorf("errors:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("a succeeded migration stays succeeded and its resourceVersion set", func(t *testing.T) {
		done := old.DeepCopy()
		done.Status = storagemigrationv1.StorageVersionMigrationStatus{ResourceVersion: "40", Conditions: []metav1.Condition{
			{Type: "Succeeded", Status: "True", Reason: "Done", LastTransitionTime: epoch},
		}}
		m := done.DeepCopy()
		m.Status.ResourceVersion = "41"
		m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: "Failed", Status: "True", Reason: "Oops", LastTransitionTime: epoch})
		got := messages(update(m, done))
		want := `status.resourceVersion: Invalid value: "41": field is immutable` + "\n" +
			`status.conditions: Invalid value: [{"type":"Succeeded","status":"True","lastTransitionTime":"1970-01-01T00:00:01Z","reason":"Done","message":""},{"type":"Failed","status":"True","lastTransitionTime":"1970-01-01T00:00:01Z","reason":"Oops","message":""}]: Both success and failed conditions cannot be true at the same time`
		if got != want {
			t.Errorf("errors:\n got %s\nwant %s", got, want)
		}
	})
}

// epoch is a fixed condition transition time.
var epoch = metav1.NewTime(time.Unix(1, 0).UTC())

const mapHead = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: p}
`

const mapMatch = `  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
`

func TestMutatingAdmissionPolicyValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a policy with an apply configuration is valid", mapHead + "spec:\n  reinvocationPolicy: Never\n" + mapMatch +
			"  mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: 'Object{metadata: Object.metadata{labels: {\"a\": \"b\"}}}'}}]\n", ""},
		{"mutations, match constraints and a reinvocation policy are required", mapHead + "spec: {}",
			"spec.matchConstraints: Required value\n" +
				"spec.mutations: Required value: mutations must contain at least one item\n" +
				"spec.reinvocationPolicy: Required value"},
		{"a policy cannot mutate deletes", mapHead + "spec:\n  reinvocationPolicy: Never\n  matchConstraints: {resourceRules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [DELETE], resources: [pods]}]}\n" +
			"  mutations: [{patchType: JSONPatch, jsonPatch: {expression: '[JSONPatch{op: \"remove\", path: \"/metadata/labels\"}]'}}]\n",
			`spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`},
		{"a mutation has its patch type's expression only", mapHead + "spec:\n  reinvocationPolicy: Sometimes\n" + mapMatch +
			"  mutations:\n  - {patchType: JSONPatch, applyConfiguration: {expression: x}}\n  - {patchType: ApplyConfiguration, applyConfiguration: {expression: ' '}}\n  - {patchType: Merge}\n  - {}\n",
			"spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch\n" +
				`spec.mutations[0].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch` + "\n" +
				"spec.mutations[1].applyConfiguration.expression: Required value\n" +
				`spec.mutations[2].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"` + "\n" +
				"spec.mutations[3].patchType: Required value\n" +
				`spec.reinvocationPolicy: Unsupported value: "Sometimes": supported values: "IfNeeded", "Never"`},
		{"a mutation's expression must yield its patch type", mapHead + "spec:\n  reinvocationPolicy: Never\n" + mapMatch +
			"  mutations: [{patchType: JSONPatch, jsonPatch: {expression: '\"not a patch\"'}}]\n",
			`spec.mutations[0].jsonPatch.expression: Invalid value: "\"not a patch\"": must evaluate to list(JSONPatch) but got string`},
	})
	t.Run("failurePolicy defaults to Fail", func(t *testing.T) {
		p := defaulted(decode(t, mapHead+"spec: {}")).(*admissionregistrationv1.MutatingAdmissionPolicy)
		if fp := p.Spec.FailurePolicy; fp == nil || *fp != admissionregistrationv1.Fail {
			t.Errorf("failurePolicy = %v, want Fail", fp)
		}
	})
}

const mapbHead = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: b}
`

func TestMutatingAdmissionPolicyBindingValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a binding naming its policy is valid", mapbHead + "spec: {policyName: p}", ""},
		{"a policy name is required", mapbHead + "spec: {}", "spec.policyName: Required value"},
		{"a param ref has a name or a selector and an action", mapbHead + "spec: {policyName: p, paramRef: {name: params, selector: {}}}",
			"spec.paramRef.name: Forbidden: name and selector are mutually exclusive\n" +
				"spec.paramRef.selector: Forbidden: name and selector are mutually exclusive\n" +
				"spec.paramRef.parameterNotFoundAction: Required value"},
		{"a binding cannot mutate deletes", mapbHead + "spec: {policyName: p, matchResources: {resourceRules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [DELETE], resources: [pods]}]}}",
			`spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`},
	})
}
