// Package node gives each node (user system:node:<name> in system:nodes)
// the permissions of kube's system:node role, narrowed to its own objects
// as kube's Node authorizer and NodeRestriction admission plugin narrow
// them: a node may write only its own Node, its own Lease in
// kube-node-lease, and the status of the pods bound to it (and delete only
// those pods).
//
// Not narrowed, unlike kube: reads of Secrets and ConfigMaps (kube allows
// only those referenced by the node's pods, from a graph of pods).
package node

import (
	"context"
	"errors"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/auth/rbac"
)

// LeaseNamespace holds the nodes' heartbeat Leases.
const LeaseNamespace = corev1.NamespaceNodeLease

// Authorizer is kube's Node authorizer, without the object graph. It has
// no opinion on users that are not nodes.
type Authorizer struct {
	rules []rbacv1.PolicyRule
}

// NewAuthorizer returns a node authorizer granting rbac.NodeRules.
func NewAuthorizer() *Authorizer {
	return &Authorizer{rules: rbac.NodeRules()}
}

// Authorize implements auth.Authorizer.
func (a *Authorizer) Authorize(_ context.Context, attrs auth.Attributes) (auth.Decision, string, error) {
	name, ok := auth.NodeName(attrs.User)
	if !ok {
		return auth.NoOpinion, "", nil
	}
	if name == "" {
		return auth.NoOpinion, "unknown node", nil
	}
	if attrs.IsResource && attrs.APIGroup == coordinationv1.GroupName && attrs.Resource == "leases" {
		return authorizeLease(name, attrs)
	}
	if rbac.RulesAllow(attrs, a.rules...) {
		return auth.Allow, "", nil
	}
	return auth.NoOpinion, "", nil
}

func authorizeLease(node string, attrs auth.Attributes) (auth.Decision, string, error) {
	switch attrs.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return auth.NoOpinion, "can only get, create, update, patch, or delete a node lease", nil
	}
	if attrs.Namespace != LeaseNamespace {
		return auth.NoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", LeaseNamespace), nil
	}
	// The name of a lease being created is checked at admission.
	if attrs.Verb != "create" && attrs.Name != node {
		return auth.NoOpinion, "can only access node lease with the same name as the requesting node", nil
	}
	return auth.Allow, "", nil
}

// RulesFor implements auth.RuleResolver: a node's permissions depend on
// the objects asked about, so its rules cannot be listed.
func (a *Authorizer) RulesFor(_ context.Context, u *auth.User, _ string) ([]rbacv1.PolicyRule, bool, error) {
	if _, ok := auth.NodeName(u); ok {
		return nil, true, errors.New("node authorizer does not support user rule resolution")
	}
	return nil, false, nil
}

// Restriction is kube's NodeRestriction admission plugin: it refuses a
// node's writes to other nodes' Node and Lease objects and to pods not
// bound to it, with kube's messages.
type Restriction struct{}

// Name implements admission.Validator.
func (Restriction) Name() string { return "NodeRestriction" }

// Validate implements admission.Validator.
func (Restriction) Validate(_ context.Context, a *admission.Attributes) error {
	node, ok := auth.NodeName(a.User)
	if !ok {
		return nil
	}
	forbidden := func(err error) error {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	switch {
	case a.Resource.Group == "" && a.Resource.Resource == "nodes":
		if a.Name != node {
			return forbidden(fmt.Errorf("node %q is not allowed to modify node %q", node, a.Name))
		}
	case a.Resource.Group == coordinationv1.GroupName && a.Resource.Resource == "leases":
		if a.Namespace != LeaseNamespace {
			return forbidden(fmt.Errorf("can only access leases in the %q system namespace", LeaseNamespace))
		}
		if a.Name != node {
			return forbidden(errors.New("can only access node lease with the same name as the requesting node"))
		}
	case a.Resource.Group == "" && a.Resource.Resource == "pods":
		return admitPod(node, a, forbidden)
	}
	return nil
}

func admitPod(node string, a *admission.Attributes, forbidden func(error) error) error {
	switch a.Subresource {
	case "":
		switch a.Operation {
		case admission.Create:
			pod, _ := a.Object.(*corev1.Pod)
			if pod == nil {
				return nil
			}
			if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
				return forbidden(fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, node))
			}
			if pod.Spec.NodeName != node {
				return forbidden(fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", node))
			}
		case admission.Update:
			return forbidden(fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, node))
		case admission.Delete:
			if pod, _ := a.OldObject.(*corev1.Pod); pod != nil && pod.Spec.NodeName != node {
				return forbidden(fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", node))
			}
		}
	case "status":
		if pod, _ := a.OldObject.(*corev1.Pod); pod != nil && pod.Spec.NodeName != node {
			return forbidden(fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", node))
		}
	}
	return nil
}
