// Package podutil holds the pod predicates that the scheduler, the
// controllers and the CLI share, so that they cannot disagree: whether a
// pod tolerates a taint. The predicates themselves are Kubernetes' own
// (k8s.io/api, k8s.io/component-helpers); this package only fixes the
// choices kube makes with feature gates, in one place.
package podutil

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// TolerationComparisonOperators tells whether tolerations' Lt and Gt
// operators compare the values as integers (kube's
// TaintTolerationComparisonOperators feature) wherever minik matches a
// toleration: the scheduler, the DaemonSet controller and taint eviction.
// The API server's validation still refuses Lt and Gt, as kube-apiserver
// v1.37 does with the feature's default (alpha, off).
const TolerationComparisonOperators = true

// ToleratesTaint tells whether some toleration tolerates taint, as kube's
// TolerationsTolerateTaint. An Lt or Gt value that is not an integer
// tolerates nothing; it is not logged (the API refuses Lt and Gt today).
func ToleratesTaint(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	return corev1helpers.TolerationsTolerateTaint(logr.Discard(), tolerations, taint, TolerationComparisonOperators)
}

// FindUntoleratedTaint returns the first taint that passes include and
// that no toleration tolerates, as kube's FindMatchingUntoleratedTaint
// (include nil: every taint).
func FindUntoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration, include func(*corev1.Taint) bool) (corev1.Taint, bool) {
	return corev1helpers.FindMatchingUntoleratedTaint(logr.Discard(), taints, tolerations, include, TolerationComparisonOperators)
}
