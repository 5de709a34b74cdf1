package registry

import (
	"fmt"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/util/shufflesharding"

	"minik/internal/tables"
)

// This file holds flowcontrol.apiserver.k8s.io/v1, the API Priority and
// Fairness configuration: FlowSchemas classify requests into
// PriorityLevelConfigurations. Both are cluster-scoped, keep
// metadata.generation and have a status subresource. Defaults and
// validation are kube's (pkg/apis/flowcontrol/v1 defaults,
// pkg/apis/flowcontrol/validation); the mandatory objects (exempt,
// catch-all) must keep the specs of k8s.io/apiserver's bootstrap package.
// minik keeps the bootstrap configuration (internal/flowcontrol) but does
// not enforce concurrency limits.

// flowcontrolV1 is flowcontrol.apiserver.k8s.io/v1.
var flowcontrolV1 = schema.GroupVersion{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}

var flowSchemas = &Resource{
	GroupVersion: flowcontrolV1, Name: "flowschemas", SingularName: "flowschema", Kind: "FlowSchema",
	HasStatus: true,
	Strategy: Strategy{
		Default:  defaulter(DefaultFlowSchema),
		Validate: validator(validateFlowSchema),
		ValidateUpdate: updateValidator(func(fs, old *flowcontrolv1.FlowSchema) field.ErrorList {
			return append(validateFlowSchema(fs), validateObjectMetaUpdate(&fs.ObjectMeta, &old.ObjectMeta)...)
		}),
		Table: tables.FlowSchema.Convertor(nil),
	},
}

var priorityLevelConfigurations = &Resource{
	GroupVersion: flowcontrolV1, Name: "prioritylevelconfigurations", SingularName: "prioritylevelconfiguration", Kind: "PriorityLevelConfiguration",
	HasStatus: true,
	Strategy: Strategy{
		Default:  defaulter(DefaultPriorityLevelConfiguration),
		Validate: validator(validatePriorityLevelConfiguration),
		ValidateUpdate: updateValidator(func(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
			return append(validatePriorityLevelConfiguration(pl), validateObjectMetaUpdate(&pl.ObjectMeta, &old.ObjectMeta)...)
		}),
		Table: tables.PriorityLevelConfiguration.Convertor(nil),
	},
}

// Defaults, as kube's flowcontrol/v1 defaulters set them.
const (
	flowSchemaDefaultMatchingPrecedence int32 = 1000
	plDefaultHandSize                   int32 = 8
	plDefaultQueues                     int32 = 64
	plDefaultQueueLengthLimit           int32 = 50
	plDefaultNominalConcurrencyShares   int32 = 30
)

// DefaultFlowSchema sets kube's defaults of a FlowSchema: a
// matchingPrecedence of 1000.
func DefaultFlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = flowSchemaDefaultMatchingPrecedence
	}
}

// DefaultPriorityLevelConfiguration sets kube's defaults of a
// PriorityLevelConfiguration: an exempt level's nominalConcurrencyShares
// and lendablePercent 0; a limited level's nominalConcurrencyShares 30
// and lendablePercent 0; a queuing configuration's 64 queues, hand size
// 8 and queue length limit 50.
func DefaultPriorityLevelConfiguration(pl *flowcontrolv1.PriorityLevelConfiguration) {
	zero := func(p **int32, v int32) {
		if *p == nil {
			*p = &v
		}
	}
	if e := pl.Spec.Exempt; e != nil {
		zero(&e.NominalConcurrencyShares, 0)
		zero(&e.LendablePercent, 0)
	}
	if l := pl.Spec.Limited; l != nil {
		zero(&l.NominalConcurrencyShares, plDefaultNominalConcurrencyShares)
		zero(&l.LendablePercent, 0)
		if q := l.LimitResponse.Queuing; q != nil {
			if q.HandSize == 0 {
				q.HandSize = plDefaultHandSize
			}
			if q.Queues == 0 {
				q.Queues = plDefaultQueues
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = plDefaultQueueLengthLimit
			}
		}
	}
}

// Validation, with kube's messages.

var (
	fcSupportedDistinguishers = sets.New(string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType))
	fcSupportedVerbs          = sets.New("get", "list", "create", "update", "delete", "deletecollection", "patch", "watch", "proxy")
	fcSupportedSubjectKinds   = sets.New(string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindUser))
	fcSupportedEnablements    = sets.New(string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited))
	fcSupportedLimitResponses = sets.New(string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject))
)

const (
	// plMaxQueues is kube's limit of a priority level's queues, 10^7.
	plMaxQueues int32 = 10 * 1000 * 1000
	// fcNamespaceErrIntro opens kube's message of a bad rule namespace.
	fcNamespaceErrIntro = "each member of this list must be '*' or a DNS-1123 label; "
)

// mandatoryFlowSchemas and mandatoryPriorityLevels are the bootstrap
// package's mandatory objects by name, whose specs no one may change.
var (
	mandatoryFlowSchemas    = map[string]*flowcontrolv1.FlowSchema{}
	mandatoryPriorityLevels = map[string]*flowcontrolv1.PriorityLevelConfiguration{}
)

func init() {
	for _, fs := range bootstrap.MandatoryFlowSchemas {
		mandatoryFlowSchemas[fs.Name] = fs
	}
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations {
		mandatoryPriorityLevels[pl.Name] = pl
	}
}

// validateFlowSchema is kube's ValidateFlowSchema.
func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	errs := validateObjectMeta(&fs.ObjectMeta, false, nameIsDNSSubdomain)
	spec := &fs.Spec
	mp := specPath.Child("matchingPrecedence")
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && fs.Name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if dm := spec.DistinguisherMethod; dm != nil && !fcSupportedDistinguishers.Has(string(dm.Type)) {
		errs = append(errs, field.NotSupported(specPath.Child("distinguisherMethod", "type"), dm, sets.List(fcSupportedDistinguishers)))
	}
	plp := specPath.Child("priorityLevelConfiguration", "name")
	if name := spec.PriorityLevelConfiguration.Name; name != "" {
		for _, msg := range nameIsDNSSubdomain(name, false) {
			errs = append(errs, field.Invalid(plp, name, msg))
		}
	} else {
		errs = append(errs, field.Required(plp, "must reference a priority level"))
	}
	for i := range spec.Rules {
		errs = append(errs, validatePolicyRulesWithSubjects(&spec.Rules[i], specPath.Child("rules").Index(i))...)
	}
	if mand, ok := mandatoryFlowSchemas[fs.Name]; ok && !apiequality.Semantic.DeepEqual(fs.Spec, mand.Spec) {
		errs = append(errs, field.Invalid(specPath, fs.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
	}
	cp := field.NewPath("status", "conditions")
	seen := sets.New[string]()
	for i, c := range fs.Status.Conditions {
		errs = append(errs, validateConditionType(string(c.Type), seen, cp.Index(i))...)
	}
	return errs
}

// validateConditionType checks a flowcontrol status condition has a type
// no condition before it has.
func validateConditionType(typ string, seen sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if seen.Has(typ) {
		errs = append(errs, field.Duplicate(p.Child("type"), typ))
	}
	seen.Insert(typ)
	if typ == "" {
		errs = append(errs, field.Required(p.Child("type"), ""))
	}
	return errs
}

func validatePolicyRulesWithSubjects(rule *flowcontrolv1.PolicyRulesWithSubjects, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Subjects) == 0 {
		errs = append(errs, field.Required(p.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rule.Subjects {
		errs = append(errs, validateFlowSubject(&rule.Subjects[i], p.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		errs = append(errs, field.Required(p, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rule.ResourceRules {
		errs = append(errs, validateResourcePolicyRule(&rule.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range rule.NonResourceRules {
		errs = append(errs, validateNonResourcePolicyRule(&rule.NonResourceRules[i], p.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

func validateFlowSubject(s *flowcontrolv1.Subject, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(set bool, name, kind string) {
		if set {
			errs = append(errs, field.Forbidden(p.Child(name), fmt.Sprintf("%s is forbidden when subject kind is not '%s'", name, kind)))
		}
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		sp := p.Child("serviceAccount")
		if sa := s.ServiceAccount; sa == nil {
			errs = append(errs, field.Required(sp, "serviceAccount is required when subject kind is 'ServiceAccount'"))
		} else {
			if sa.Name == "" {
				errs = append(errs, field.Required(sp.Child("name"), ""))
			} else if sa.Name != flowcontrolv1.NameAll {
				for _, msg := range apivalidation.ValidateServiceAccountName(sa.Name, false) {
					errs = append(errs, field.Invalid(sp.Child("name"), sa.Name, msg))
				}
			}
			if sa.Namespace == "" {
				errs = append(errs, field.Required(sp.Child("namespace"), "must specify namespace for service account"))
			} else {
				for _, msg := range apivalidation.ValidateNamespaceName(sa.Namespace, false) {
					errs = append(errs, field.Invalid(sp.Child("namespace"), sa.Namespace, msg))
				}
			}
		}
		forbid(s.User != nil, "user", "User")
		forbid(s.Group != nil, "group", "Group")
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			errs = append(errs, field.Required(p.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			errs = append(errs, field.Required(p.Child("user", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", "ServiceAccount")
		forbid(s.Group != nil, "group", "Group")
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			errs = append(errs, field.Required(p.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			errs = append(errs, field.Required(p.Child("group", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", "ServiceAccount")
		forbid(s.User != nil, "user", "User")
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, sets.List(fcSupportedSubjectKinds)))
	}
	return errs
}

// validateRuleVerbs is kube's check of a flow schema rule's verbs.
func validateRuleVerbs(verbs []string, p *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(p, "verbs must contain at least one value")}
	case hasWildcard(verbs):
		if len(verbs) > 1 {
			return field.ErrorList{field.Invalid(p, verbs, "if '*' is present, must not specify other verbs")}
		}
	case !fcSupportedVerbs.HasAll(verbs...):
		return field.ErrorList{field.NotSupported(p, verbs, sets.List(fcSupportedVerbs))}
	}
	return nil
}

func validateNonResourcePolicyRule(r *flowcontrolv1.NonResourcePolicyRule, p *field.Path) field.ErrorList {
	errs := validateRuleVerbs(r.Verbs, p.Child("verbs"))
	up := p.Child("nonResourceURLs")
	switch {
	case len(r.NonResourceURLs) == 0:
		errs = append(errs, field.Required(up, "nonResourceURLs must contain at least one value"))
	case hasWildcard(r.NonResourceURLs):
		if len(r.NonResourceURLs) > 1 {
			errs = append(errs, field.Invalid(up, r.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range r.NonResourceURLs {
			if msg := nonResourceURLPathError(u); msg != "" {
				errs = append(errs, field.Invalid(up.Index(i), u, msg))
			}
		}
	}
	return errs
}

// nonResourceURLPathError is kube's ValidateNonResourceURLPath: a path
// starts with a slash, has no white-space nor double slash, and a
// wildcard only as its last segment.
func nonResourceURLPathError(path string) string {
	switch {
	case path == "":
		return "must not be empty"
	case path == "/":
		return ""
	case !strings.HasPrefix(path, "/"):
		return "must start with slash"
	case strings.Contains(path, " "):
		return "must not contain white-space"
	case strings.Contains(path, "//"):
		return "must not contain double slash"
	}
	if n := strings.Count(path, "*"); n > 1 || (n == 1 && path[len(path)-2:] != "/*") {
		return "wildcard can only do suffix matching"
	}
	return ""
}

func validateResourcePolicyRule(r *flowcontrolv1.ResourcePolicyRule, p *field.Path) field.ErrorList {
	errs := validateRuleVerbs(r.Verbs, p.Child("verbs"))
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	} else if len(r.APIGroups) > 1 && hasWildcard(r.APIGroups) {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other api groups"))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	} else if len(r.Resources) > 1 && hasWildcard(r.Resources) {
		errs = append(errs, field.Invalid(p.Child("resources"), r.Resources, "if '*' is present, must not specify other resources"))
	}
	np := p.Child("namespaces")
	switch {
	case len(r.Namespaces) == 0 && !r.ClusterScope:
		errs = append(errs, field.Required(np, "resource rules that are not cluster scoped must supply at least one namespace"))
	case hasWildcard(r.Namespaces):
		if len(r.Namespaces) > 1 {
			errs = append(errs, field.Invalid(np, r.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range r.Namespaces {
			for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
				errs = append(errs, field.Invalid(np.Index(i), ns, fcNamespaceErrIntro+msg))
			}
		}
	}
	return errs
}

// validatePriorityLevelConfiguration is kube's
// ValidatePriorityLevelConfiguration for flowcontrol/v1.
func validatePriorityLevelConfiguration(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	errs := validateObjectMeta(&pl.ObjectMeta, false, nameIsDNSSubdomain)
	if _, ok := pl.Annotations[flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey]; ok {
		errs = append(errs, field.Forbidden(metadataPath.Child("annotations"), fmt.Sprintf("annotation '%s' is forbidden", flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey)))
	}
	spec := &pl.Spec
	if (pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		errs = append(errs, field.Invalid(specPath.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(specPath.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := spec.Exempt; e != nil {
			ep := specPath.Child("exempt")
			if e.NominalConcurrencyShares != nil && *e.NominalConcurrencyShares < 0 {
				errs = append(errs, field.Invalid(ep.Child("nominalConcurrencyShares"), *e.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			errs = append(errs, validateLendablePercent(e.LendablePercent, ep)...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(specPath.Child("exempt"), "must be nil if the type is Limited"))
		}
		if spec.Limited == nil {
			errs = append(errs, field.Required(specPath.Child("limited"), "must not be empty when type is Limited"))
		} else {
			errs = append(errs, validateLimitedPriorityLevel(spec.Limited, specPath.Child("limited"))...)
		}
	case "":
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), spec.Type, sets.List(fcSupportedEnablements)))
	}
	if mand, ok := mandatoryPriorityLevels[pl.Name]; ok {
		want, have := &mand.Spec, pl.Spec.DeepCopy()
		msg := fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			// Only spec.exempt of the exempt level may change.
			have.Exempt = want.Exempt
			msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
		}
		if !apiequality.Semantic.DeepEqual(want, have) {
			errs = append(errs, field.Invalid(specPath, pl.Spec, msg))
		}
	}
	cp := field.NewPath("status", "conditions")
	seen := sets.New[string]()
	for i, c := range pl.Status.Conditions {
		errs = append(errs, validateConditionType(string(c.Type), seen, cp.Index(i))...)
	}
	return errs
}

func validateLendablePercent(v *int32, p *field.Path) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(p.Child("lendablePercent"), *v, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func validateLimitedPriorityLevel(l *flowcontrolv1.LimitedPriorityLevelConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
		errs = append(errs, field.Invalid(p.Child("nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
	}
	lp := p.Child("limitResponse")
	switch lr := l.LimitResponse; lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			errs = append(errs, field.Forbidden(lp.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing == nil {
			errs = append(errs, field.Required(lp.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited"))
		} else {
			errs = append(errs, validateQueuing(lr.Queuing, lp.Child("queuing"))...)
		}
	case "":
		errs = append(errs, field.Required(lp.Child("type"), ""))
	default:
		errs = append(errs, field.NotSupported(lp.Child("type"), lr.Type, sets.List(fcSupportedLimitResponses)))
	}
	errs = append(errs, validateLendablePercent(l.LendablePercent, p)...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(p.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	return errs
}

func validateQueuing(q *flowcontrolv1.QueuingConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(p.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > plMaxQueues {
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", plMaxQueues)))
	}
	hp := p.Child("handSize")
	switch {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(hp, q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(hp, q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case shufflesharding.RequiredEntropyBits(int(q.Queues), int(q.HandSize)) > shufflesharding.MaxHashBits:
		errs = append(errs, field.Invalid(hp, q.HandSize, fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, shufflesharding.MaxHashBits)))
	}
	return errs
}
