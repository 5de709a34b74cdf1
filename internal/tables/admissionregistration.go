package tables

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The admissionregistration tables, with kube's columns.

// webhooksColumn counts a webhook configuration's webhooks.
var webhooksColumn = col("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration")

// MutatingWebhookConfiguration is kube's table of mutating webhook
// configurations.
var MutatingWebhookConfiguration = kindTable(
	[]metav1.TableColumnDefinition{nameColumn(), webhooksColumn, ageColumn()},
	func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) []interface{} {
		return []interface{}{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp, now)}
	},
)

// ValidatingWebhookConfiguration is kube's table of validating webhook
// configurations.
var ValidatingWebhookConfiguration = kindTable(
	[]metav1.TableColumnDefinition{nameColumn(), webhooksColumn, ageColumn()},
	func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) []interface{} {
		return []interface{}{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp, now)}
	},
)

// ValidatingAdmissionPolicy is kube's table of validating admission
// policies: the number of validations and the param kind
// ("apiVersion/Kind", or <unset>).
var ValidatingAdmissionPolicy = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Validations", "integer", "Validations indicates the number of validation rules defined in this configuration"),
		col("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
		ageColumn(),
	},
	func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) []interface{} {
		return []interface{}{p.Name, int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), age(p.CreationTimestamp, now)}
	},
)

// ValidatingAdmissionPolicyBinding is kube's table of validating
// admission policy bindings: the policy and the param reference
// ("namespace/name", "*/name" without a namespace, else the selector as
// kube prints it, or <unset>).
var ValidatingAdmissionPolicyBinding = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
		col("ParamRef", "string", "ParamRef indicates the param resource which sets the configuration param"),
		ageColumn(),
	},
	func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) []interface{} {
		return []interface{}{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b.CreationTimestamp, now)}
	},
)

// paramRefCell is a policy binding's ParamRef cell: "namespace/name",
// "*/name" without a namespace, else the selector as kube prints it, or
// <unset>.
func paramRefCell(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		// As kube: a param without a namespace may be cluster-scoped.
		return "*/" + pr.Name
	case pr.Selector != nil:
		return pr.Selector.String()
	}
	return "<unset>"
}

// paramKindCell is a policy's ParamKind cell: "apiVersion/Kind", or
// <unset>.
func paramKindCell(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return "<unset>"
	}
	return pk.APIVersion + "/" + pk.Kind
}

// MutatingAdmissionPolicy is kube's table of mutating admission
// policies: the number of mutations and the param kind.
var MutatingAdmissionPolicy = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Mutations", "integer", "Mutation indicates the number of mutations rules defined in this configuration"),
		col("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
		ageColumn(),
	},
	func(p *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) []interface{} {
		return []interface{}{p.Name, int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), age(p.CreationTimestamp, now)}
	},
)

// MutatingAdmissionPolicyBinding is kube's table of mutating admission
// policy bindings, as ValidatingAdmissionPolicyBinding's.
var MutatingAdmissionPolicyBinding = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
		col("ParamRef", "string", "ParamRef indicates the param resource which sets the configuration param"),
		ageColumn(),
	},
	func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) []interface{} {
		return []interface{}{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), age(b.CreationTimestamp, now)}
	},
)
