// Package history keeps the ControllerRevisions of controllers that
// version a pod template (StatefulSets, DaemonSets), as kube's
// pkg/controller/history does: each revision stores a strategic-merge
// patch that restores the template, is named <owner>-<hash of the patch>,
// and carries a revision number that grows with every change, including a
// return to an earlier template.
package history

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
)

// HashLabel is the label carrying a revision's hash.
const HashLabel = "controller.kubernetes.io/hash"

// Patch returns the revision data of a template: {"spec":{"template":
// {..., "$patch":"replace"}}}, which applied to the owner restores it.
func Patch(template *corev1.PodTemplateSpec) ([]byte, error) {
	raw, err := json.Marshal(template)
	if err != nil {
		return nil, fmt.Errorf("encode template: %w", err)
	}
	var m map[string]interface{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode template: %w", err)
	}
	m["$patch"] = "replace"
	return json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": m}})
}

// Template decodes the pod template a revision stores.
func Template(r *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var data struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(r.Data.Raw, &data); err != nil {
		return nil, fmt.Errorf("decode revision %s: %w", r.Name, err)
	}
	return &data.Spec.Template, nil
}

// Hash hashes revision data with the owner's collision count (fnv-32, as
// kube's HashControllerRevision), in the safe alphabet of generated names.
func Hash(data []byte, collisionCount *int32) string {
	h := fnv.New32()
	h.Write(data)
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// Equal tells whether two revisions store the same template.
func Equal(a, b *appsv1.ControllerRevision) bool {
	if bytes.Equal(a.Data.Raw, b.Data.Raw) {
		return true
	}
	ta, errA := Template(a)
	tb, errB := Template(b)
	return errA == nil && errB == nil && apiequality.Semantic.DeepEqual(ta, tb)
}

// Sort orders revisions by revision number, then creation, then name.
func Sort(revs []*appsv1.ControllerRevision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// Next returns the revision number after the highest of sorted revs.
func Next(revs []*appsv1.ControllerRevision) int64 {
	if len(revs) == 0 {
		return 1
	}
	return revs[len(revs)-1].Revision + 1
}

// New builds the revision of owner's template: labels of the template,
// annotations of the owner (so that kubernetes.io/change-cause shows in
// rollout history), the owner as controller, and the given number. Its
// name and hash label are set by Create.
func New(owner metav1.Object, ownerKind string, template *corev1.PodTemplateSpec, revision int64) (*appsv1.ControllerRevision, error) {
	data, err := Patch(template)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for k, v := range template.Labels {
		labels[k] = v
	}
	var annotations map[string]string
	if a := owner.GetAnnotations(); len(a) > 0 {
		annotations = make(map[string]string, len(a))
		for k, v := range a {
			annotations[k] = v
		}
	}
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       owner.GetNamespace(),
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind(ownerKind))},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: revision,
	}, nil
}

// Create creates rev under the name <owner>-<hash>, with the hash in the
// label hashLabel (StatefulSets use HashLabel, DaemonSets
// controller-revision-hash, as in kube). When another revision
// already has that name with a different template, it bumps
// *collisionCount and tries the next name; when the existing one has the
// same template, it returns it. The caller persists *collisionCount in the
// owner's status.
func Create(ctx context.Context, cs kubernetes.Interface, ownerName, hashLabel string, rev *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	for {
		hash := Hash(rev.Data.Raw, collisionCount)
		r := rev.DeepCopy()
		r.Name = ownerName + "-" + hash
		r.Labels[hashLabel] = hash
		created, err := cs.AppsV1().ControllerRevisions(r.Namespace).Create(ctx, r, metav1.CreateOptions{})
		if err == nil {
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create controllerrevision %s/%s: %w", r.Namespace, r.Name, err)
		}
		existing, err := cs.AppsV1().ControllerRevisions(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get controllerrevision %s/%s: %w", r.Namespace, r.Name, err)
		}
		if Equal(existing, r) && metav1.IsControlledBy(existing, ownerMeta(rev)) {
			return existing, nil
		}
		*collisionCount++
	}
}

// ownerMeta is the owner of rev as an object with only its UID, for
// IsControlledBy.
func ownerMeta(rev *appsv1.ControllerRevision) metav1.Object {
	m := &metav1.ObjectMeta{}
	if ref := metav1.GetControllerOfNoCopy(rev); ref != nil {
		m.UID = ref.UID
	}
	return m
}

// Bump gives an existing revision a new number (a rollback to its
// template), returning the updated revision.
func Bump(ctx context.Context, cs kubernetes.Interface, rev *appsv1.ControllerRevision, revision int64) (*appsv1.ControllerRevision, error) {
	if rev.Revision == revision {
		return rev, nil
	}
	r := rev.DeepCopy()
	r.Revision = revision
	updated, err := cs.AppsV1().ControllerRevisions(r.Namespace).Update(ctx, r, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update controllerrevision %s/%s: %w", r.Namespace, r.Name, err)
	}
	return updated, nil
}

// Truncate deletes the oldest revisions that no live pod uses and that
// are not in keep, leaving at most limit of those unused. revs must be
// sorted.
func Truncate(ctx context.Context, cs kubernetes.Interface, revs []*appsv1.ControllerRevision, keep map[string]bool, limit int) error {
	var unused []*appsv1.ControllerRevision
	for _, r := range revs {
		if !keep[r.Name] {
			unused = append(unused, r)
		}
	}
	for i := 0; i < len(unused)-limit; i++ {
		err := cs.AppsV1().ControllerRevisions(unused[i].Namespace).Delete(ctx, unused[i].Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete controllerrevision %s/%s: %w", unused[i].Namespace, unused[i].Name, err)
		}
	}
	return nil
}
