// Package quota measures what objects charge against a ResourceQuota, the
// way kube's quota evaluators do. The ResourceQuota admission plugin uses it
// to charge a request before it is stored; the quota controller uses it to
// recompute status.used from the objects that exist. Both read the same
// rules, so the two never disagree about what an object costs.
package quota

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Add returns a + b, key by key.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range a {
		out[k] = v.DeepCopy()
	}
	for k, v := range b {
		if cur, ok := out[k]; ok {
			cur.Add(v)
			out[k] = cur
		} else {
			out[k] = v.DeepCopy()
		}
	}
	return out
}

// SubtractWithNonNegativeResult returns a - b, key by key, with no value
// below zero.
func SubtractWithNonNegativeResult(a, b corev1.ResourceList) corev1.ResourceList {
	zero := resource.MustParse("0")
	out := corev1.ResourceList{}
	for k, v := range a {
		value := v.DeepCopy()
		if other, ok := b[k]; ok {
			value.Sub(other)
		}
		if value.Cmp(zero) > 0 {
			out[k] = value
		} else {
			out[k] = zero.DeepCopy()
		}
	}
	for k := range b {
		if _, ok := out[k]; !ok {
			out[k] = zero.DeepCopy()
		}
	}
	return out
}

// Mask returns the entries of list whose names are in names.
func Mask(list corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	keep := sets.New(names...)
	out := corev1.ResourceList{}
	for k, v := range list {
		if keep.Has(k) {
			out[k] = v.DeepCopy()
		}
	}
	return out
}

// LessThanOrEqual tells whether every value of a is at most the value of
// the same name in b (names absent from b are not limited), and names
// those that exceed.
func LessThanOrEqual(a, b corev1.ResourceList) (bool, []corev1.ResourceName) {
	var exceeded []corev1.ResourceName
	for k, v := range a {
		if limit, ok := b[k]; ok && v.Cmp(limit) > 0 {
			exceeded = append(exceeded, k)
		}
	}
	sort.Slice(exceeded, func(i, j int) bool { return exceeded[i] < exceeded[j] })
	return len(exceeded) == 0, exceeded
}

// Equals tells whether two lists have the same names and values.
func Equals(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		other, ok := b[k]
		if !ok || v.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// ResourceNames returns the names of a list, sorted.
func ResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for k := range list {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Intersection returns the names in both a and b, sorted.
func Intersection(a, b []corev1.ResourceName) []corev1.ResourceName {
	out := sets.List(sets.New(a...).Intersection(sets.New(b...)))
	return out
}

// RemoveZeros returns list without its zero values.
func RemoveZeros(list corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range list {
		if !v.IsZero() {
			out[k] = v
		}
	}
	return out
}

// IsNegative returns the names whose value is below zero.
func IsNegative(list corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for k, v := range list {
		if v.Sign() < 0 {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// PrettyPrint formats a list as kube's quota messages do:
// "limits.cpu=1,pods=2", sorted by name.
func PrettyPrint(list corev1.ResourceList) string {
	keys := ResourceNames(list)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := list[k]
		parts = append(parts, string(k)+"="+v.String())
	}
	return strings.Join(parts, ",")
}

// PrettyPrintNames joins names with commas, sorted.
func PrettyPrintNames(names []corev1.ResourceName) string {
	s := make([]string, 0, len(names))
	for _, n := range names {
		s = append(s, string(n))
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}
