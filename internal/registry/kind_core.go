package registry

import (
	"encoding/json"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"reflect"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// This file holds the core/v1 kinds with small strategies: Namespaces,
// ConfigMaps, Secrets, ServiceAccounts, Nodes and ResourceQuotas. Pods and
// Services have their own files.

// namespaces: Namespaces are Active from creation and carry the
// "kubernetes" finalizer, which the namespace controller removes through
// the finalize subresource. As kube's namespace registry, it has no
// collection delete.
var namespaces = &Resource{
	GroupVersion: coreV1, Name: "namespaces", SingularName: "namespace", Kind: "Namespace",
	ShortNames: []string{"ns"}, HasStatus: true, DeleteReturnsObject: true,
	UnservedVerbs: metav1.Verbs{"deletecollection"},
	Subresources: []Subresource{
		{Name: "finalize", Kind: "Namespace", Verbs: metav1.Verbs{"update"}, Update: &namespaceFinalize},
	},
	Strategy: Strategy{
		Default:          defaulter(defaultNamespace),
		PrepareForCreate: creator(prepareNamespaceForCreate),
		PrepareForUpdate: updater(prepareNamespaceForUpdate),
		Validate:         validator(validateNamespace),
		ValidateUpdate:   updateValidator(validateNamespaceUpdate),
		NoGeneration:     true,
		Fields:           selectable(namespaceFields),
		HoldsDeletion:    namespaceHeldBySpecFinalizers,
		PrepareForDelete: defaulter(func(ns *corev1.Namespace) { ns.Status.Phase = corev1.NamespaceTerminating }),
		Table:            tables.Namespace.Convertor(nil),
	},
}

func defaultNamespace(ns *corev1.Namespace) {
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

func prepareNamespaceForCreate(ns *corev1.Namespace) {
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return
		}
	}
	ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

func validateNamespace(ns *corev1.Namespace) field.ErrorList {
	errs := validateObjectMeta(&ns.ObjectMeta, false, nameIsDNSLabel)
	for _, f := range ns.Spec.Finalizers {
		errs = append(errs, validateFinalizerName(string(f), specPath.Child("finalizers"))...)
	}
	return errs
}

func validateNamespaceUpdate(ns, old *corev1.Namespace) field.ErrorList {
	errs := validateNamespace(ns)
	return append(errs, validateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta)...)
}

// namespaceFields are the field-selector fields of a Namespace; "name" is
// kept by kube-apiserver for old clients.
func namespaceFields(ns *corev1.Namespace) fields.Set {
	return fields.Set{
		"status.phase": string(ns.Status.Phase),
		"name":         ns.Name,
	}
}

// configMaps: ConfigMaps have no generation; immutable ones refuse
// data changes.
var configMaps = &Resource{
	GroupVersion: coreV1, Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap",
	Namespaced: true, ShortNames: []string{"cm"},
	Strategy: Strategy{
		Validate:       validator(validateConfigMap),
		ValidateUpdate: updateValidator(validateConfigMapUpdate),
		NoGeneration:   true,
		Table:          tables.ConfigMap.Convertor(nil),
	},
}

// maxDataSize bounds the data of a ConfigMap or Secret.
const maxDataSize = 1 * 1024 * 1024

func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	errs := validateObjectMeta(&cm.ObjectMeta, true, nameIsDNSSubdomain)
	size := 0
	dataPath := field.NewPath("data")
	for _, key := range sets.List(sets.KeySet(cm.Data)) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, "duplicate of key present in binaryData"))
		}
		size += len(cm.Data[key])
	}
	binaryPath := field.NewPath("binaryData")
	for _, key := range sets.List(sets.KeySet(cm.BinaryData)) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(binaryPath.Key(key), key, msg))
		}
		size += len(cm.BinaryData[key])
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxDataSize))
	}
	return errs
}

func validateConfigMapUpdate(cm, old *corev1.ConfigMap) field.ErrorList {
	errs := validateObjectMetaUpdate(&cm.ObjectMeta, &old.ObjectMeta)
	if old.Immutable != nil && *old.Immutable {
		const msg = "field is immutable when `immutable` is set"
		if cm.Immutable == nil || !*cm.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), msg))
		}
		if !reflect.DeepEqual(cm.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), msg))
		}
		if !reflect.DeepEqual(cm.BinaryData, old.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), msg))
		}
	}
	return append(errs, validateConfigMap(cm)...)
}

// secrets: Secrets have no generation; stringData is folded into data
// and never stored.
var secrets = &Resource{
	GroupVersion: coreV1, Name: "secrets", SingularName: "secret", Kind: "Secret",
	Namespaced: true, SecretBearing: true,
	Strategy: Strategy{
		Default:        defaulter(defaultSecret),
		Validate:       validator(validateSecret),
		ValidateUpdate: updateValidator(validateSecretUpdate),
		NoGeneration:   true,
		Fields:         selectable(secretFields),
		Table:          tables.Secret.Convertor(nil),
	},
}

func defaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	errs := validateObjectMeta(&s.ObjectMeta, true, nameIsDNSSubdomain)
	dataPath := field.NewPath("data")
	size := 0
	for _, key := range sets.List(sets.KeySet(s.Data)) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, msg))
		}
		size += len(s.Data[key])
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(dataPath, "", maxDataSize))
	}
	requireKey := func(key string) {
		if _, ok := s.Data[key]; !ok {
			errs = append(errs, field.Required(dataPath.Key(key), ""))
		}
	}
	requireJSON := func(key string) {
		b, ok := s.Data[key]
		if !ok {
			errs = append(errs, field.Required(dataPath.Key(key), ""))
			return
		}
		if err := json.Unmarshal(b, &map[string]any{}); err != nil {
			errs = append(errs, field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error()))
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(metadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		requireJSON(corev1.DockerConfigKey)
	case corev1.SecretTypeDockerConfigJson:
		requireJSON(corev1.DockerConfigJsonKey)
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			requireKey(corev1.BasicAuthUsernameKey)
			requireKey(corev1.BasicAuthPasswordKey)
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		requireKey(corev1.TLSCertKey)
		requireKey(corev1.TLSPrivateKeyKey)
	}
	return errs
}

func validateSecretUpdate(s, old *corev1.Secret) field.ErrorList {
	errs := validateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateImmutable(s.Type, old.Type, field.NewPath("type"))...)
	if old.Immutable != nil && *old.Immutable {
		const msg = "field is immutable when `immutable` is set"
		if s.Immutable == nil || !*s.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), msg))
		}
		if !reflect.DeepEqual(s.Data, old.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), msg))
		}
	}
	return append(errs, validateSecret(s)...)
}

func secretFields(s *corev1.Secret) fields.Set {
	return fields.Set{"type": string(s.Type)}
}

// serviceAccounts: ServiceAccounts have no generation and only their
// metadata is checked.
var serviceAccounts = &Resource{
	GroupVersion: coreV1, Name: "serviceaccounts", SingularName: "serviceaccount", Kind: "ServiceAccount",
	Namespaced: true, ShortNames: []string{"sa"}, DeleteReturnsObject: true,
	Subresources: []Subresource{
		{Name: "token", GroupVersion: authenticationv1.SchemeGroupVersion, Kind: "TokenRequest", Verbs: metav1.Verbs{"create"}, SecretBearing: true, Create: createToken},
	},
	Strategy: Strategy{
		Validate: validator(func(sa *corev1.ServiceAccount) field.ErrorList {
			return validateObjectMeta(&sa.ObjectMeta, true, nameIsDNSSubdomain)
		}),
		ValidateUpdate: updateValidator(func(sa, old *corev1.ServiceAccount) field.ErrorList {
			errs := validateObjectMetaUpdate(&sa.ObjectMeta, &old.ObjectMeta)
			return append(errs, validateObjectMeta(&sa.ObjectMeta, true, nameIsDNSSubdomain)...)
		}),
		NoGeneration: true,
		Table:        tables.ServiceAccount.Convertor(nil),
	},
}

// nodes: Nodes have no generation, and their status (capacity,
// addresses, conditions) is accepted on create, as kubelets register with it.
var nodes = &Resource{
	GroupVersion: coreV1, Name: "nodes", SingularName: "node", Kind: "Node",
	ShortNames: []string{"no"}, HasStatus: true,
	Subresources: []Subresource{
		{Name: "proxy", Kind: "NodeProxyOptions", Verbs: proxyVerbs, Connect: connectNodeProxy},
	},
	Strategy: Strategy{
		Default:            defaulter(defaultNode),
		PrepareForCreate:   creator(prepareNodeForCreate),
		Validate:           validator(validateNode),
		ValidateUpdate:     updateValidator(validateNodeUpdate),
		NoGeneration:       true,
		KeepStatusOnCreate: true,
		Fields:             selectable(nodeFields),
		Table:              tables.Node.Convertor(nil),
	},
}

func defaultNode(n *corev1.Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	}
	roundResourceList(n.Status.Capacity)
	roundResourceList(n.Status.Allocatable)
	if n.Spec.PodCIDR != "" && len(n.Spec.PodCIDRs) == 0 {
		n.Spec.PodCIDRs = []string{n.Spec.PodCIDR}
	}
	if n.Spec.PodCIDR == "" && len(n.Spec.PodCIDRs) > 0 {
		n.Spec.PodCIDR = n.Spec.PodCIDRs[0]
	}
}

func prepareNodeForCreate(n *corev1.Node) {
	//lint:ignore SA1019 kube drops the removed field on writes
	n.Spec.ConfigSource = nil
	n.Status.Config = nil
}

func validateNode(n *corev1.Node) field.ErrorList {
	errs := validateObjectMeta(&n.ObjectMeta, false, nameIsDNSSubdomain)
	if len(n.Spec.Taints) > 0 {
		// kube-apiserver reports taint errors under metadata.
		errs = append(errs, validateNodeTaints(n.Spec.Taints, metadataPath.Child("taints"))...)
	}
	errs = append(errs, validateNodeResources(n)...)
	if len(n.Spec.PodCIDRs) > 0 {
		p := specPath.Child("podCIDRs")
		for i, c := range n.Spec.PodCIDRs {
			errs = append(errs, validateCIDR(c, p.Index(i))...)
		}
		if len(n.Spec.PodCIDRs) > 1 {
			if len(n.Spec.PodCIDRs) > 2 || cidrIsIPv6(n.Spec.PodCIDRs[0]) == cidrIsIPv6(n.Spec.PodCIDRs[1]) {
				errs = append(errs, field.Invalid(p, n.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
			}
			seen := sets.New[string]()
			for i, c := range n.Spec.PodCIDRs {
				if seen.Has(c) {
					errs = append(errs, field.Duplicate(p.Index(i), c))
				}
				seen.Insert(c)
			}
		}
	}
	return errs
}

func cidrIsIPv6(cidr string) bool {
	ip, _, _ := strings.Cut(cidr, "/")
	return isIPv6(ip)
}

func validateNodeResources(n *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedResourceNames(n.Status.Capacity) {
		errs = append(errs, validateResourceQuantity(name, n.Status.Capacity[name], field.NewPath("status", "capacity", string(name)))...)
	}
	for _, name := range sortedResourceNames(n.Status.Allocatable) {
		errs = append(errs, validateResourceQuantity(name, n.Status.Allocatable[name], field.NewPath("status", "allocatable", string(name)))...)
	}
	return errs
}

func validateNodeTaints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		ip := p.Index(i)
		errs = append(errs, validateLabelName(t.Key, ip.Child("key"))...)
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) != 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		errs = append(errs, validateTaintEffect(t.Effect, false, ip.Child("effect"))...)
		if unique[t.Effect].Has(t.Key) {
			dup := field.Duplicate(ip, taintValue{Key: t.Key, Value: t.Value, Effect: t.Effect, TimeAdded: t.TimeAdded})
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = sets.New[string]()
		}
		unique[t.Effect].Insert(t.Key)
	}
	return errs
}

// taintValue renders a taint in error messages as kube-apiserver does, from
// its internal type.
type taintValue struct {
	Key       string
	Value     string
	Effect    corev1.TaintEffect
	TimeAdded *metav1.Time
}

func validateNodeUpdate(n, old *corev1.Node) field.ErrorList {
	errs := validateNode(n)
	errs = append(errs, validateObjectMetaUpdate(&n.ObjectMeta, &old.ObjectMeta)...)
	errs = append(errs, validateNodeResources(n)...)
	seen := map[corev1.NodeAddress]bool{}
	for i, a := range n.Status.Addresses {
		if seen[a] {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen[a] = true
	}
	if len(old.Spec.PodCIDRs) > 0 {
		msg := "node updates may not change podCIDR except from \"\" to valid"
		if len(old.Spec.PodCIDRs) != len(n.Spec.PodCIDRs) {
			errs = append(errs, field.Forbidden(specPath.Child("podCIDRs"), msg))
		} else {
			for i, c := range old.Spec.PodCIDRs {
				if c != n.Spec.PodCIDRs[i] {
					errs = append(errs, field.Forbidden(specPath.Child("podCIDRs"), msg))
				}
			}
		}
	}
	if old.Spec.ProviderID != "" && old.Spec.ProviderID != n.Spec.ProviderID {
		errs = append(errs, field.Forbidden(specPath.Child("providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	if len(n.Spec.Taints) > 0 {
		errs = append(errs, validateNodeTaints(n.Spec.Taints, metadataPath.Child("taints"))...)
	}
	if n.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		errs = append(errs, field.Forbidden(specPath.Child("externalID"), "may not be updated"))
	}
	return errs
}

func nodeFields(n *corev1.Node) fields.Set {
	return fields.Set{"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable)}
}

// resourceQuotas: ResourceQuotas have no generation; their status
// (hard and used) is written by the quota controller only.
var resourceQuotas = &Resource{
	GroupVersion: coreV1, Name: "resourcequotas", SingularName: "resourcequota", Kind: "ResourceQuota",
	Namespaced: true, ShortNames: []string{"quota"}, HasStatus: true, DeleteReturnsObject: true,
	Strategy: Strategy{
		Default:        defaulter(defaultResourceQuota),
		Validate:       validator(validateResourceQuota),
		ValidateUpdate: updateValidator(validateResourceQuotaUpdate),
		NoGeneration:   true,
		Table:          tables.ResourceQuota.Convertor(nil),
	},
}

func defaultResourceQuota(q *corev1.ResourceQuota) {
	roundResourceList(q.Spec.Hard)
	roundResourceList(q.Status.Hard)
	roundResourceList(q.Status.Used)
}

func validateResourceQuota(q *corev1.ResourceQuota) field.ErrorList {
	errs := validateObjectMeta(&q.ObjectMeta, true, nameIsDNSSubdomain)
	errs = append(errs, validateResourceQuotaSpec(&q.Spec, specPath)...)
	errs = append(errs, validateQuotaList(q.Status.Hard, field.NewPath("status", "hard"))...)
	return append(errs, validateQuotaList(q.Status.Used, field.NewPath("status", "used"))...)
}

func validateQuotaList(l corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedResourceNames(l) {
		rp := p.Key(string(name))
		errs = append(errs, validateQuotaResourceName(name, rp)...)
		errs = append(errs, validateResourceQuantity(name, l[name], rp)...)
	}
	return errs
}

var (
	standardQuotaScopes = sets.New(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
		corev1.ResourceQuotaScopeVolumeAttributesClass)
	podComputeQuotaResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
)

// scopeValidForResource reports whether a quota scope may limit a resource.
func scopeValidForResource(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return name == corev1.ResourcePods || podComputeQuotaResources.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return name == corev1.ResourcePods
	}
	return true
}

func validateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, p *field.Path) field.ErrorList {
	errs := validateQuotaList(spec.Hard, p.Child("hard"))
	hard := sortedResourceNames(spec.Hard)
	scopes := sets.New[corev1.ResourceQuotaScope]()
	scopesPath := p.Child("scopes")
	for _, s := range spec.Scopes {
		if !standardQuotaScopes.Has(s) {
			errs = append(errs, field.Invalid(scopesPath, spec.Scopes, "unsupported scope"))
		}
		for _, name := range hard {
			if standardQuotaResources.Has(name) && !scopeValidForResource(s, name) {
				errs = append(errs, field.Invalid(scopesPath, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
		scopes.Insert(s)
	}
	if conflictingScopes(scopes) {
		errs = append(errs, field.Invalid(scopesPath, spec.Scopes, "conflicting scopes"))
	}
	if sel := spec.ScopeSelector; sel != nil {
		ep := p.Child("scopeSelector", "matchExpressions")
		selScopes := sets.New[corev1.ResourceQuotaScope]()
		for _, r := range sel.MatchExpressions {
			if !standardQuotaScopes.Has(r.ScopeName) {
				errs = append(errs, field.Invalid(ep.Child("scopeName"), r.ScopeName, "unsupported scope"))
			}
			for _, name := range hard {
				if standardQuotaResources.Has(name) && !scopeValidForResource(r.ScopeName, name) {
					errs = append(errs, field.Invalid(ep, sel, "unsupported scope applied to resource"))
				}
			}
			switch r.ScopeName {
			case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
				corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
				if r.Operator != corev1.ScopeSelectorOpExists {
					errs = append(errs, field.Invalid(ep.Child("operator"), r.Operator,
						"must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
				}
			}
			switch r.Operator {
			case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
				if len(r.Values) == 0 {
					errs = append(errs, field.Required(ep.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
				}
			case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
				if len(r.Values) != 0 {
					errs = append(errs, field.Invalid(ep.Child("values"), r.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
				}
			default:
				errs = append(errs, field.Invalid(ep.Child("operator"), r.Operator, "not a valid selector operator"))
			}
			selScopes.Insert(r.ScopeName)
		}
		if conflictingScopes(selScopes) {
			errs = append(errs, field.Invalid(ep, spec.Scopes, "conflicting scopes"))
		}
	}
	return errs
}

func conflictingScopes(s sets.Set[corev1.ResourceQuotaScope]) bool {
	return s.HasAll(corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort) ||
		s.HasAll(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating)
}

func validateResourceQuotaUpdate(q, old *corev1.ResourceQuota) field.ErrorList {
	errs := validateObjectMetaUpdate(&q.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateResourceQuotaSpec(&q.Spec, specPath)...)
	oldScopes, scopes := sets.New[string](), sets.New[string]()
	for _, s := range q.Spec.Scopes {
		scopes.Insert(string(s))
	}
	for _, s := range old.Spec.Scopes {
		oldScopes.Insert(string(s))
	}
	if !oldScopes.Equal(scopes) {
		errs = append(errs, field.Invalid(specPath.Child("scopes"), q.Spec.Scopes, immutableMsg))
	}
	return errs
}

// prepareNamespaceForUpdate keeps spec.finalizers: they change only
// through /finalize, as in kube's namespace strategy.
func prepareNamespaceForUpdate(ns, old *corev1.Namespace) {
	ns.Spec.Finalizers = old.Spec.Finalizers
}

// namespaceFinalize is namespaces/finalize: the one write of
// spec.finalizers, the namespace controller's, which the kind's
// defaulting and update validation do not touch.
var namespaceFinalize = SubresourceStrategy{
	Merge: func(current, sent runtime.Object) runtime.Object {
		cur, ok := current.(*corev1.Namespace)
		s, ok2 := sent.(*corev1.Namespace)
		if ok && ok2 {
			cur.Spec.Finalizers = s.Spec.Finalizers
		}
		return current
	},
	Narrow: true,
}

// namespaceHeldBySpecFinalizers tells whether a Namespace still has spec
// finalizers, which hold it in Terminating until removed through
// /finalize.
func namespaceHeldBySpecFinalizers(obj runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return ok && len(ns.Spec.Finalizers) > 0
}
