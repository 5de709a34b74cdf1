// Package node gives each node (user system:node:<name> in system:nodes)
// the permissions of kube's system:node role, narrowed to its own objects
// as kube's Node authorizer and NodeRestriction admission plugin narrow
// them.
//
// The Authorizer answers from a Graph of the pods bound to each node and
// what they reference: a node may read a Secret or ConfigMap (get, or
// list and watch with a metadata.name field selector), get a
// PersistentVolumeClaim, PersistentVolume or ResourceClaim, and create a
// token for a ServiceAccount, only when one of its pods references it;
// anything else of those kinds is denied with kube's reason ("no
// relationship found between node '<node>' and this object"). Its own
// Lease in kube-node-lease and its own CSINode are its to write, and so
// are the ResourceSlices naming it (listed, watched and deleted only with
// a spec.nodeName=<node> field selector); the rest is the system:node
// rules (rbac.NodeRules).
//
// Restriction, the NodeRestriction admission plugin, narrows the writes
// those rules allow: a node may write only its own Node (and may not set
// node-restriction.kubernetes.io labels, nor kubernetes.io and k8s.io
// labels a kubelet does not own, nor change its taints), its own Lease,
// mirror pods bound to itself, ResourceSlices naming itself, the status
// of its pods and the eviction or deletion of its pods, the status capacity and conditions of claims,
// and may ask a token only bound to one of its pods.
//
// Also unlike kube, the owner reference of a mirror pod is not checked
// against the Node's UID.
//
// Unlike kube (AuthorizeNodeWithSelectors), a node may still get, list
// and watch every Node and Pod: minik's simulated nodes share one watch of
// all bound pods.
package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"minik/internal/admission"
	"minik/internal/auth"
	"minik/internal/auth/rbac"
)

// LeaseNamespace holds the nodes' heartbeat Leases.
const LeaseNamespace = corev1.NamespaceNodeLease

// resourceGroup is the group of ResourceClaims and ResourceSlices.
const resourceGroup = "resource.k8s.io"

// Authorizer is kube's Node authorizer. It has no opinion on users that
// are not nodes.
type Authorizer struct {
	graph *Graph
	rules []rbacv1.PolicyRule
}

// NewAuthorizer returns a node authorizer answering from graph and
// granting rbac.NodeRules for what the graph does not decide.
func NewAuthorizer(graph *Graph) *Authorizer {
	return &Authorizer{graph: graph, rules: rbac.NodeRules()}
}

// Authorize implements auth.Authorizer.
func (a *Authorizer) Authorize(_ context.Context, attrs auth.Attributes) (auth.Decision, string, error) {
	name, ok := auth.NodeName(attrs.User)
	if !ok {
		return auth.NoOpinion, "", nil
	}
	if name == "" {
		return auth.NoOpinion, fmt.Sprintf("unknown node for user %q", attrs.User.Name), nil
	}
	if attrs.IsResource {
		switch attrs.APIGroup + "/" + attrs.Resource {
		case "/secrets":
			return a.authorizeRead(name, Secret, attrs)
		case "/configmaps":
			return a.authorizeRead(name, ConfigMap, attrs)
		case "/persistentvolumeclaims":
			if attrs.Subresource == "status" {
				return a.authorizeStatusUpdate(name, PersistentVolumeClaim, attrs)
			}
			return a.authorizeGet(name, PersistentVolumeClaim, attrs)
		case "/persistentvolumes":
			return a.authorizeGet(name, PersistentVolume, attrs)
		case resourceGroup + "/resourceclaims":
			return a.authorizeGet(name, ResourceClaim, attrs)
		case resourceGroup + "/resourceslices":
			return a.authorizeResourceSlice(name, attrs)
		case "/serviceaccounts":
			return a.authorizeCreateToken(name, attrs)
		case coordinationv1.GroupName + "/leases":
			return authorizeOwn(name, attrs, "a node lease", func() (auth.Decision, string, error) {
				if attrs.Namespace != LeaseNamespace {
					return auth.NoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", LeaseNamespace), nil
				}
				return auth.Allow, "", nil
			})
		case storagev1.GroupName + "/csinodes":
			if attrs.Subresource != "" {
				return auth.NoOpinion, "cannot authorize CSINode subresources", nil
			}
			return authorizeOwn(name, attrs, "a CSINode", nil)
		}
	}
	if rbac.RulesAllow(attrs, a.rules...) {
		return auth.Allow, "", nil
	}
	return auth.NoOpinion, "", nil
}

// authorizeOwn allows get, create, update, patch and delete of the
// object named as the node (a Lease, a CSINode); the name of one being
// created is checked at admission.
func authorizeOwn(node string, attrs auth.Attributes, what string, more func() (auth.Decision, string, error)) (auth.Decision, string, error) {
	switch attrs.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return auth.NoOpinion, "can only get, create, update, patch, or delete " + what, nil
	}
	if more != nil {
		if d, reason, err := more(); d != auth.Allow {
			return d, reason, err
		}
	}
	if attrs.Verb != "create" && attrs.Name != node {
		if what == "a CSINode" {
			return auth.NoOpinion, "can only access CSINode with the same name as the requesting node", nil
		}
		return auth.NoOpinion, "can only access node lease with the same name as the requesting node", nil
	}
	return auth.Allow, "", nil
}

// authorizeResourceSlice is kube's: a node creates ResourceSlices
// (NodeRestriction checks they are its own), reads and writes those that
// name it, and lists, watches and deletes them only with a
// spec.nodeName=<node> field selector.
func (a *Authorizer) authorizeResourceSlice(node string, attrs auth.Attributes) (auth.Decision, string, error) {
	if attrs.Subresource != "" {
		return auth.NoOpinion, "cannot authorize ResourceSlice subresources", nil
	}
	switch attrs.Verb {
	case "create":
		return auth.Allow, "", nil
	case "get", "update", "patch", "delete":
		return a.authorize(node, ResourceSlice, attrs)
	case "watch", "list", "deletecollection":
		reqs, _ := attrs.FieldRequirements()
		for _, r := range reqs {
			if r.Field == resourcev1.ResourceSliceSelectorNodeName && r.Operator == selection.Equals && r.Value == node {
				return auth.Allow, "", nil
			}
		}
		return auth.NoOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector", nil
	}
	return auth.NoOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection", nil
}

// authorizeRead allows get, list and watch of one object (a list or watch
// names it with a metadata.name field selector) that the node's pods
// reference.
func (a *Authorizer) authorizeRead(node string, kind Kind, attrs auth.Attributes) (auth.Decision, string, error) {
	switch attrs.Verb {
	case "get", "list", "watch":
	default:
		return auth.NoOpinion, "can only read resources of this type", nil
	}
	if attrs.Subresource != "" {
		return auth.NoOpinion, "cannot read subresource", nil
	}
	if attrs.Namespace == "" {
		return auth.NoOpinion, "can only read namespaced object of this type", nil
	}
	return a.authorize(node, kind, attrs)
}

// authorizeGet allows get of one object the node's pods reference.
func (a *Authorizer) authorizeGet(node string, kind Kind, attrs auth.Attributes) (auth.Decision, string, error) {
	if attrs.Verb != "get" {
		return auth.NoOpinion, "can only get individual resources of this type", nil
	}
	if attrs.Subresource != "" {
		return auth.NoOpinion, "cannot get subresource", nil
	}
	return a.authorize(node, kind, attrs)
}

// authorizeStatusUpdate allows update and patch of the status of an
// object the node's pods reference.
func (a *Authorizer) authorizeStatusUpdate(node string, kind Kind, attrs auth.Attributes) (auth.Decision, string, error) {
	switch attrs.Verb {
	case "update", "patch":
	default:
		return auth.NoOpinion, "can only get/update/patch this type", nil
	}
	return a.authorize(node, kind, attrs)
}

// authorizeCreateToken allows a token for a service account the node's
// pods run as; NodeRestriction then requires the token be bound to one of
// them.
func (a *Authorizer) authorizeCreateToken(node string, attrs auth.Attributes) (auth.Decision, string, error) {
	if attrs.Verb != "create" || attrs.Name == "" {
		return auth.NoOpinion, "can only create tokens for individual service accounts", nil
	}
	if attrs.Subresource != "token" {
		return auth.NoOpinion, "can only create token subresource of serviceaccount", nil
	}
	return a.authorize(node, ServiceAccount, attrs)
}

func (a *Authorizer) authorize(node string, kind Kind, attrs auth.Attributes) (auth.Decision, string, error) {
	if attrs.Name == "" {
		return auth.NoOpinion, "No Object name found", nil
	}
	if a.graph == nil || !a.graph.Related(node, kind, attrs.Namespace, attrs.Name) {
		return auth.NoOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", node), nil
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

// PodGetter reads a pod (an informer cache, the API on a miss).
type PodGetter interface {
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// Restriction is kube's NodeRestriction admission plugin: it refuses a
// node's writes to other nodes' Node, Lease and CSINode objects, to pods
// not bound to it, to labels and taints a kubelet may not set, and tokens
// not bound to one of its pods, with kube's messages. Pods reads the
// pods an eviction or a token names; without it those are refused.
type Restriction struct {
	Pods PodGetter
}

// Name implements admission.Validator.
func (Restriction) Name() string { return "NodeRestriction" }

// Validate implements admission.Validator.
func (r Restriction) Validate(ctx context.Context, a *admission.Attributes) error {
	node, ok := auth.NodeName(a.User)
	if !ok {
		return nil
	}
	forbidden := func(err error) error {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, err)
	}
	if node == "" {
		return forbidden(fmt.Errorf("could not determine node from user %q", a.User.Name))
	}
	switch a.Resource.Group + "/" + a.Resource.Resource {
	case "/nodes":
		return admitNode(node, a, forbidden)
	case coordinationv1.GroupName + "/leases":
		if a.Namespace != LeaseNamespace {
			return forbidden(fmt.Errorf("can only access leases in the %q system namespace", LeaseNamespace))
		}
		if objectName(a) != node {
			return forbidden(errors.New("can only access node lease with the same name as the requesting node"))
		}
	case storagev1.GroupName + "/csinodes":
		if objectName(a) != node {
			return forbidden(errors.New("can only access CSINode with the same name as the requesting node"))
		}
	case resourceGroup + "/resourceslices":
		return admitResourceSlice(node, a, forbidden)
	case "/persistentvolumeclaims":
		if a.Subresource != "status" {
			return forbidden(errors.New("may only update PVC status"))
		}
		return admitClaimStatus(node, a, forbidden)
	case "/serviceaccounts":
		return r.admitToken(ctx, node, a, forbidden)
	case "/pods":
		switch a.Subresource {
		case "":
			return r.admitPod(ctx, node, a, forbidden)
		case "status":
			return admitPodStatus(node, a, forbidden)
		case "eviction":
			return r.admitEviction(ctx, node, a, forbidden)
		default:
			return forbidden(fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource))
		}
	}
	return nil
}

// admitResourceSlice is kube's: a node creates and deletes only the
// ResourceSlices that name it (the authorizer cannot see a new object,
// nor each one a deletecollection deletes).
func admitResourceSlice(node string, a *admission.Attributes, forbidden func(error) error) error {
	var obj runtime.Object
	var what string
	switch a.Operation {
	case admission.Create:
		obj, what = a.Object, "create"
	case admission.Delete:
		obj, what = a.OldObject, "delete"
	default:
		return nil
	}
	s, ok := obj.(*resourcev1.ResourceSlice)
	if !ok {
		return forbidden(fmt.Errorf("unexpected type %T", obj))
	}
	if s.Spec.NodeName == nil || *s.Spec.NodeName != node {
		return forbidden(fmt.Errorf("can only %s ResourceSlice with the same NodeName as the requesting node", what))
	}
	return nil
}

// objectName is the name of the object a request writes: on create, the
// object's own.
func objectName(a *admission.Attributes) string {
	if a.Operation == admission.Create && a.Object != nil {
		if m, ok := a.Object.(interface{ GetName() string }); ok {
			return m.GetName()
		}
	}
	return a.Name
}

func admitNode(node string, a *admission.Attributes, forbidden func(error) error) error {
	if a.Name != node {
		return forbidden(fmt.Errorf("node %q is not allowed to modify node %q", node, a.Name))
	}
	switch a.Operation {
	case admission.Create:
		n, _ := a.Object.(*corev1.Node)
		if n == nil {
			return nil
		}
		//lint:ignore SA1019 NodeRestriction still refuses the removed field, as kube's
		if n.Spec.ConfigSource != nil {
			return forbidden(fmt.Errorf("node %q is not allowed to create pods with a non-nil configSource", node))
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, nil)); len(bad) > 0 {
			return forbidden(fmt.Errorf("node %q is not allowed to set the following labels: %s", node, strings.Join(bad, ", ")))
		}
	case admission.Update:
		n, _ := a.Object.(*corev1.Node)
		old, _ := a.OldObject.(*corev1.Node)
		if n == nil || old == nil {
			return nil
		}
		//lint:ignore SA1019 NodeRestriction still refuses the removed field, as kube's
		if n.Spec.ConfigSource != nil && !equality.Semantic.DeepEqual(n.Spec.ConfigSource, old.Spec.ConfigSource) {
			return forbidden(fmt.Errorf("node %q is not allowed to update configSource to a new non-nil configSource", node))
		}
		if !equality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints) {
			return forbidden(fmt.Errorf("node %q is not allowed to modify taints", node))
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, old.Labels)); len(bad) > 0 {
			return forbidden(fmt.Errorf("is not allowed to modify labels: %s", strings.Join(bad, ", ")))
		}
	}
	return nil
}

// modifiedLabels are the keys added, removed or changed from b to a.
func modifiedLabels(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// kubeletLabels are the kubernetes.io labels a kubelet sets on its Node,
// and kubeletLabelNamespaces the label namespaces it owns (kube's
// k8s.io/kubelet/pkg/apis).
var (
	kubeletLabels = []string{
		corev1.LabelHostname, corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
		corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
		corev1.LabelInstanceType, corev1.LabelInstanceTypeStable,
		corev1.LabelOSStable, corev1.LabelArchStable,
		"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
	}
	kubeletLabelNamespaces = []string{corev1.LabelNamespaceSuffixKubelet, corev1.LabelNamespaceSuffixNode}
)

// IsKubeletLabel tells whether a kubelet may set the label on its own
// Node: one of kubeletLabels, or in a namespace it owns.
func IsKubeletLabel(key string) bool {
	if slices.Contains(kubeletLabels, key) {
		return true
	}
	ns := labelNamespace(key)
	for _, allowed := range kubeletLabelNamespaces {
		if inNamespace(ns, allowed) {
			return true
		}
	}
	return false
}

// IsRestrictedLabel tells whether NodeRestriction refuses a node that
// sets, changes or removes the label on its own Node: an administrator
// must set it.
func IsRestrictedLabel(key string) bool {
	return len(forbiddenLabels([]string{key})) > 0
}

// forbiddenLabels are, sorted, the keys a node may not add, remove or
// change on its Node: node-restriction.kubernetes.io labels, and
// kubernetes.io and k8s.io labels that are not a kubelet's.
func forbiddenLabels(keys []string) []string {
	var out []string
	for _, k := range keys {
		ns := labelNamespace(k)
		kube := inNamespace(ns, "kubernetes.io") || inNamespace(ns, "k8s.io")
		if inNamespace(ns, corev1.LabelNamespaceNodeRestriction) || kube && !IsKubeletLabel(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func labelNamespace(key string) string {
	if ns, _, ok := strings.Cut(key, "/"); ok {
		return ns
	}
	return ""
}

// inNamespace tells whether label namespace ns is domain or one of its
// subdomains.
func inNamespace(ns, domain string) bool {
	return ns == domain || strings.HasSuffix(ns, "."+domain)
}

// admitClaimStatus lets a node change only a claim's status capacity,
// conditions and allocated resources (volume expansion).
func admitClaimStatus(node string, a *admission.Attributes, forbidden func(error) error) error {
	if a.Operation != admission.Update {
		return forbidden(fmt.Errorf("unexpected operation %q", a.Operation))
	}
	old, _ := a.OldObject.(*corev1.PersistentVolumeClaim)
	if old == nil {
		return forbidden(fmt.Errorf("unexpected type %T", a.OldObject))
	}
	claim, _ := a.Object.(*corev1.PersistentVolumeClaim)
	if claim == nil {
		return forbidden(fmt.Errorf("unexpected type %T", a.Object))
	}
	strip := func(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
		c = c.DeepCopy()
		c.ResourceVersion, c.ManagedFields = "", nil
		c.Status.Capacity, c.Status.Conditions = nil, nil
		c.Status.AllocatedResources, c.Status.AllocatedResourceStatuses = nil, nil
		return c
	}
	if o, n := strip(old), strip(claim); !equality.Semantic.DeepEqual(o, n) {
		return forbidden(fmt.Errorf("node %q is not allowed to update fields other than status.capacity and status.conditions: %v", node, cmp.Diff(o, n)))
	}
	return nil
}

func (r Restriction) getPod(ctx context.Context, namespace, name string, forbidden func(error) error) (*corev1.Pod, error) {
	if r.Pods == nil {
		return nil, forbidden(errors.New("no pod getter"))
	}
	pod, err := r.Pods.GetPod(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	if err != nil {
		return nil, forbidden(err)
	}
	return pod, nil
}

func (r Restriction) admitPod(ctx context.Context, node string, a *admission.Attributes, forbidden func(error) error) error {
	switch a.Operation {
	case admission.Create:
		pod, _ := a.Object.(*corev1.Pod)
		if pod == nil {
			return forbidden(fmt.Errorf("unexpected type %T", a.Object))
		}
		return admitMirrorPod(node, pod, forbidden)
	case admission.Delete:
		pod, _ := a.OldObject.(*corev1.Pod)
		if pod == nil {
			var err error
			if pod, err = r.getPod(ctx, a.Namespace, a.Name, forbidden); err != nil {
				return err
			}
		}
		if pod.Spec.NodeName != node {
			return forbidden(fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", node))
		}
		return nil
	default:
		return forbidden(fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, node))
	}
}

// admitMirrorPod allows a node to create only a mirror pod bound to
// itself, owned by its Node, that references no other object.
func admitMirrorPod(node string, pod *corev1.Pod, forbidden func(error) error) error {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		return forbidden(fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, node))
	}
	if pod.Spec.NodeName != node {
		return forbidden(fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", node))
	}
	switch owners := pod.OwnerReferences; {
	case len(owners) > 1:
		return forbidden(fmt.Errorf("node %q can only create pods with a single owner reference set to itself", node))
	case len(owners) == 0:
		return forbidden(fmt.Errorf("node %q can only create pods with an owner reference set to itself", node))
	default:
		o := owners[0]
		if o.APIVersion != "v1" || o.Kind != "Node" || o.Name != node {
			return forbidden(fmt.Errorf("node %q can only create pods with an owner reference set to itself", node))
		}
		if o.Controller == nil || !*o.Controller {
			return forbidden(fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", node))
		}
		if o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion {
			return forbidden(fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", node))
		}
	}
	if pod.Spec.ServiceAccountName != "" {
		return forbidden(fmt.Errorf("node %q can not create pods that reference a service account", node))
	}
	var secrets, configMaps, claims bool
	for _, r := range podRefs(pod) {
		switch r.kind {
		case Secret:
			secrets = true
		case ConfigMap:
			configMaps = true
		case PersistentVolumeClaim:
			claims = true
		}
	}
	switch {
	case secrets:
		return forbidden(fmt.Errorf("node %q can not create pods that reference secrets", node))
	case configMaps:
		return forbidden(fmt.Errorf("node %q can not create pods that reference configmaps", node))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ClusterTrustBundle != nil {
				return forbidden(fmt.Errorf("node %q can not create pods that reference clustertrustbundles", node))
			}
		}
	}
	if claims {
		return forbidden(fmt.Errorf("node %q can not create pods that reference persistentvolumeclaims", node))
	}
	return nil
}

func admitPodStatus(node string, a *admission.Attributes, forbidden func(error) error) error {
	if a.Operation != admission.Update {
		return forbidden(fmt.Errorf("unexpected operation %q", a.Operation))
	}
	old, _ := a.OldObject.(*corev1.Pod)
	if old == nil {
		return forbidden(fmt.Errorf("unexpected type %T", a.OldObject))
	}
	if old.Spec.NodeName != node {
		return forbidden(fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", node))
	}
	pod, _ := a.Object.(*corev1.Pod)
	if pod == nil {
		return forbidden(fmt.Errorf("unexpected type %T", a.Object))
	}
	if !maps.Equal(old.Labels, pod.Labels) {
		return forbidden(fmt.Errorf("node %q cannot update labels through pod status", node))
	}
	return nil
}

func (r Restriction) admitEviction(ctx context.Context, node string, a *admission.Attributes, forbidden func(error) error) error {
	if a.Operation != admission.Create {
		return forbidden(fmt.Errorf("unexpected operation %s", a.Operation))
	}
	name := a.Name
	if name == "" {
		if m, ok := a.Object.(interface{ GetName() string }); ok {
			name = m.GetName()
		}
	}
	if name == "" {
		return forbidden(errors.New("could not determine pod from request data"))
	}
	pod, err := r.getPod(ctx, a.Namespace, name, forbidden)
	if err != nil {
		return err
	}
	if pod.Spec.NodeName != node {
		return forbidden(fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", node))
	}
	return nil
}

// admitToken allows a node a token only bound to a pod bound to it.
func (r Restriction) admitToken(ctx context.Context, node string, a *admission.Attributes, forbidden func(error) error) error {
	if a.Operation != admission.Create || a.Subresource != "token" {
		return nil
	}
	tr, _ := a.Object.(*authenticationv1.TokenRequest)
	if tr == nil {
		return forbidden(fmt.Errorf("unexpected type %T", a.Object))
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return forbidden(errors.New("node requested token not bound to a pod"))
	}
	if ref.UID == "" {
		return forbidden(errors.New("node requested token with a pod binding without a uid"))
	}
	pod, err := r.getPod(ctx, a.Namespace, ref.Name, forbidden)
	if err != nil {
		return err
	}
	if ref.UID != pod.UID {
		return forbidden(fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	if pod.Spec.NodeName != node {
		return forbidden(errors.New("node requested token bound to a pod scheduled on a different node"))
	}
	return nil
}
