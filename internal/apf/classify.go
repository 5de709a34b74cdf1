package apf

import (
	"slices"
	"strings"
	"sync/atomic"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/tools/cache"
)

// Request is what classification reads of a request, as kube's
// RequestDigest: the user and the request info.
type Request struct {
	// User and Groups are the authenticated user's name and groups.
	User   string
	Groups []string
	// IsResource tells a resource request from a non-resource one.
	IsResource bool
	// Verb is the request's API verb ("get", "list", "create", ...).
	Verb string
	// APIGroup, Resource, Subresource and Namespace locate a resource
	// request.
	APIGroup, Resource, Subresource, Namespace string
	// Path is a non-resource request's URL path.
	Path string
}

// Classifier matches requests to FlowSchemas as kube-apiserver's APF
// filter does: the schemas whose priority level exists, in matching
// order (matchingPrecedence, then name), the mandatory exempt and
// catch-all ones imagined first and last when they are missing. It
// reads a snapshot rebuilt on every informer change, so classifying
// takes no lock.
type Classifier struct {
	fs, pl stored
	snap   atomic.Pointer[classifierSnapshot]
}

// stored is what the classifier reads of an informer: its store.
type stored interface{ GetStore() cache.Store }

type classifierSnapshot struct {
	schemas []*flowcontrolv1.FlowSchema
	plUIDs  map[string]types.UID
}

func newClassifier(fs, pl cache.SharedIndexInformer) *Classifier {
	c := &Classifier{fs: fs, pl: pl}
	c.snap.Store(&classifierSnapshot{})
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.rebuild() },
		UpdateFunc: func(any, any) { c.rebuild() },
		DeleteFunc: func(any) { c.rebuild() },
	}
	_, _ = fs.AddEventHandler(h)
	_, _ = pl.AddEventHandler(h)
	return c
}

// rebuild takes a new snapshot of the informers' objects.
func (c *Classifier) rebuild() {
	s := &classifierSnapshot{plUIDs: map[string]types.UID{}}
	for _, o := range c.pl.GetStore().List() {
		if pl, ok := o.(*flowcontrolv1.PriorityLevelConfiguration); ok {
			s.plUIDs[pl.Name] = pl.UID
		}
	}
	var haveExempt, haveCatchAll bool
	for _, o := range c.fs.GetStore().List() {
		fs, ok := o.(*flowcontrolv1.FlowSchema)
		if !ok {
			continue
		}
		if _, ok := s.plUIDs[fs.Spec.PriorityLevelConfiguration.Name]; !ok {
			continue
		}
		s.schemas = append(s.schemas, fs)
		haveExempt = haveExempt || fs.Name == flowcontrolv1.FlowSchemaNameExempt
		haveCatchAll = haveCatchAll || fs.Name == flowcontrolv1.FlowSchemaNameCatchAll
	}
	slices.SortFunc(s.schemas, func(a, b *flowcontrolv1.FlowSchema) int {
		if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
			return int(a.Spec.MatchingPrecedence) - int(b.Spec.MatchingPrecedence)
		}
		return strings.Compare(a.Name, b.Name)
	})
	if !haveExempt {
		s.schemas = append([]*flowcontrolv1.FlowSchema{bootstrap.MandatoryFlowSchemaExempt}, s.schemas...)
	}
	if !haveCatchAll {
		s.schemas = append(s.schemas, bootstrap.MandatoryFlowSchemaCatchAll)
	}
	c.snap.Store(s)
}

// Classify returns the UIDs of the FlowSchema a request matches and of
// its priority level, as kube-apiserver sends them in the
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID
// headers; ok is false before the informers have any schema. An
// imagined mandatory schema or level has an empty UID, as in kube.
func (c *Classifier) Classify(r *Request) (flowSchemaUID, priorityLevelUID types.UID, ok bool) {
	s := c.snap.Load()
	for _, fs := range s.schemas {
		if matchesFlowSchema(r, fs) {
			return fs.UID, s.plUIDs[fs.Spec.PriorityLevelConfiguration.Name], true
		}
	}
	return "", "", false
}

// The matching rules are kube's (k8s.io/apiserver/pkg/util/flowcontrol,
// rule.go).

func matchesFlowSchema(r *Request, fs *flowcontrolv1.FlowSchema) bool {
	for i := range fs.Spec.Rules {
		rule := &fs.Spec.Rules[i]
		if !matchesASubject(r, rule.Subjects) {
			continue
		}
		if r.IsResource {
			for _, rr := range rule.ResourceRules {
				if matchesResourceRule(r, &rr) {
					return true
				}
			}
			continue
		}
		for _, nr := range rule.NonResourceRules {
			if containsOrAll(r.Verb, nr.Verbs, flowcontrolv1.VerbAll) && matchesNonResourceURL(nr.NonResourceURLs, r.Path) {
				return true
			}
		}
	}
	return false
}

func matchesASubject(r *Request, subjects []flowcontrolv1.Subject) bool {
	for _, s := range subjects {
		switch s.Kind {
		case flowcontrolv1.SubjectKindUser:
			if s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == r.User) {
				return true
			}
		case flowcontrolv1.SubjectKindGroup:
			if s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(r.Groups, s.Group.Name)) {
				return true
			}
		case flowcontrolv1.SubjectKindServiceAccount:
			sa := s.ServiceAccount
			if sa == nil {
				continue
			}
			if sa.Name == flowcontrolv1.NameAll {
				rest, ok := strings.CutPrefix(r.User, serviceaccount.ServiceAccountUsernamePrefix)
				if rest, ok2 := strings.CutPrefix(rest, sa.Namespace); ok && ok2 && strings.HasPrefix(rest, ":") {
					return true
				}
			} else if serviceaccount.MatchesUsername(sa.Namespace, sa.Name, r.User) {
				return true
			}
		}
	}
	return false
}

func matchesResourceRule(r *Request, rule *flowcontrolv1.ResourcePolicyRule) bool {
	res := r.Resource
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	if !containsOrAll(r.Verb, rule.Verbs, flowcontrolv1.VerbAll) ||
		!containsOrAll(res, rule.Resources, flowcontrolv1.ResourceAll) ||
		!containsOrAll(r.APIGroup, rule.APIGroups, flowcontrolv1.APIGroupAll) {
		return false
	}
	if r.Namespace == "" {
		return rule.ClusterScope
	}
	return containsOrAll(r.Namespace, rule.Namespaces, flowcontrolv1.NamespaceEvery)
}

func matchesNonResourceURL(urls []string, path string) bool {
	for _, u := range urls {
		if u == flowcontrolv1.NonResourceAll || u == path {
			return true
		}
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// containsOrAll is kube's containsString: x is in list, or list is the
// wildcard alone.
func containsOrAll(x string, list []string, wildcard string) bool {
	if len(list) == 1 && list[0] == wildcard {
		return true
	}
	return slices.Contains(list, x)
}
