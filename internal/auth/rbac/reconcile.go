package rbac

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Reconcile makes the bootstrap policy exist through the API, as
// kube-apiserver's rbac/bootstrap-roles post-start hook does: missing roles
// and bindings are created; existing ones annotated
// rbac.authorization.kubernetes.io/autoupdate=true get the rules, labels,
// aggregation selectors and subjects they lack (nothing is removed; a
// binding whose roleRef changed is recreated); those annotated "false" are
// left alone. It then computes the aggregated ClusterRoles (admin, edit,
// view) once, so that they grant their rules as soon as the server is
// ready; the aggregation controller keeps them up to date afterwards.
//
// Roles, then bindings, are reconciled several at a time: each is an
// independent object, and concurrent writes share etcd's disk syncs, which
// keeps a fresh start fast.
func Reconcile(ctx context.Context, cs kubernetes.Interface) error {
	roles := ClusterRoles()
	if err := inParallel(len(roles), func(i int) error {
		if err := reconcileClusterRole(ctx, cs, roles[i]); err != nil {
			return fmt.Errorf("bootstrap clusterrole %s: %w", roles[i].Name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	bindings := ClusterRoleBindings()
	if err := inParallel(len(bindings), func(i int) error {
		if err := reconcileClusterRoleBinding(ctx, cs, bindings[i]); err != nil {
			return fmt.Errorf("bootstrap clusterrolebinding %s: %w", bindings[i].Name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	return aggregateOnce(ctx, cs)
}

// reconcileWorkers bounds the bootstrap writes in flight.
const reconcileWorkers = 16

// inParallel runs fn(0..n-1) on up to reconcileWorkers goroutines and
// returns the first error.
func inParallel(n int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for w := 0; w < min(n, reconcileWorkers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

func autoUpdate(m metav1.ObjectMeta) bool {
	return m.Annotations[rbacv1.AutoUpdateAnnotationKey] != "false"
}

func reconcileClusterRole(ctx context.Context, cs kubernetes.Interface, want rbacv1.ClusterRole) error {
	client := cs.RbacV1().ClusterRoles()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = client.Create(ctx, &want, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(rbacv1.Resource("clusterroles"), want.Name, err)
			}
			return err
		}
		if err != nil || !autoUpdate(cur.ObjectMeta) {
			return err
		}
		next := cur.DeepCopy()
		mergeMeta(&next.ObjectMeta, want.ObjectMeta)
		if want.AggregationRule != nil {
			if next.AggregationRule == nil {
				next.AggregationRule = &rbacv1.AggregationRule{}
			}
			for _, sel := range want.AggregationRule.ClusterRoleSelectors {
				if !slices.ContainsFunc(next.AggregationRule.ClusterRoleSelectors, func(s metav1.LabelSelector) bool {
					return equality.Semantic.DeepEqual(s, sel)
				}) {
					next.AggregationRule.ClusterRoleSelectors = append(next.AggregationRule.ClusterRoleSelectors, sel)
				}
			}
		} else if ok, missing := Covers(next.Rules, want.Rules); !ok {
			next.Rules = append(next.Rules, missing...)
		}
		if equality.Semantic.DeepEqual(next, cur) {
			return nil
		}
		_, err = client.Update(ctx, next, metav1.UpdateOptions{})
		return err
	})
}

func reconcileClusterRoleBinding(ctx context.Context, cs kubernetes.Interface, want rbacv1.ClusterRoleBinding) error {
	client := cs.RbacV1().ClusterRoleBindings()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = client.Create(ctx, &want, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(rbacv1.Resource("clusterrolebindings"), want.Name, err)
			}
			return err
		}
		if err != nil || !autoUpdate(cur.ObjectMeta) {
			return err
		}
		if cur.RoleRef != want.RoleRef {
			// roleRef is immutable: the binding is recreated.
			if err := client.Delete(ctx, cur.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cur.UID}}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			next := want.DeepCopy()
			next.Subjects = mergeSubjects(cur.Subjects, want.Subjects)
			mergeMeta(&next.ObjectMeta, cur.ObjectMeta)
			_, err = client.Create(ctx, next, metav1.CreateOptions{})
			return err
		}
		next := cur.DeepCopy()
		mergeMeta(&next.ObjectMeta, want.ObjectMeta)
		next.Subjects = mergeSubjects(cur.Subjects, want.Subjects)
		if equality.Semantic.DeepEqual(next, cur) {
			return nil
		}
		_, err = client.Update(ctx, next, metav1.UpdateOptions{})
		return err
	})
}

func mergeSubjects(have, want []rbacv1.Subject) []rbacv1.Subject {
	out := slices.Clone(have)
	for _, s := range want {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func mergeMeta(dst *metav1.ObjectMeta, src metav1.ObjectMeta) {
	for k, v := range src.Labels {
		if _, ok := dst.Labels[k]; !ok {
			if dst.Labels == nil {
				dst.Labels = map[string]string{}
			}
			dst.Labels[k] = v
		}
	}
	for k, v := range src.Annotations {
		if _, ok := dst.Annotations[k]; !ok {
			if dst.Annotations == nil {
				dst.Annotations = map[string]string{}
			}
			dst.Annotations[k] = v
		}
	}
}

// aggregateOnce sets the rules of every aggregated ClusterRole once.
func aggregateOnce(ctx context.Context, cs kubernetes.Interface) error {
	list, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list clusterroles: %w", err)
	}
	roles := make([]*rbacv1.ClusterRole, len(list.Items))
	for i := range list.Items {
		roles[i] = &list.Items[i]
	}
	changed, err := AggregateAll(roles)
	if err != nil {
		return err
	}
	for _, r := range changed {
		if _, err := cs.RbacV1().ClusterRoles().Update(ctx, r, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("aggregate clusterrole %s: %w", r.Name, err)
		}
	}
	return nil
}

// AggregateAll sets, in place, the rules of every aggregated ClusterRole
// among roles, repeating until nothing changes (view aggregates into edit,
// edit into admin). It returns the roles it changed, by name.
func AggregateAll(roles []*rbacv1.ClusterRole) ([]*rbacv1.ClusterRole, error) {
	changed := map[string]*rbacv1.ClusterRole{}
	for pass := 0; pass < 10; pass++ {
		again := false
		for _, r := range roles {
			if r.AggregationRule == nil {
				continue
			}
			rules, err := AggregatedRules(r, roles)
			if err != nil {
				return nil, fmt.Errorf("aggregate clusterrole %s: %w", r.Name, err)
			}
			if !equality.Semantic.DeepEqual(rules, r.Rules) {
				r.Rules = rules
				changed[r.Name] = r
				again = true
			}
		}
		if !again {
			break
		}
	}
	out := make([]*rbacv1.ClusterRole, 0, len(changed))
	for _, r := range changed {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// AggregatedRules computes an aggregated ClusterRole's rules from all
// ClusterRoles as kube's aggregation controller does: for each selector in
// order, the rules of the matching roles (by name, itself excluded), each
// rule once.
func AggregatedRules(role *rbacv1.ClusterRole, all []*rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		var matched []*rbacv1.ClusterRole
		for _, r := range all {
			if r.Name != role.Name && sel.Matches(labels.Set(r.Labels)) {
				matched = append(matched, r)
			}
		}
		sort.Slice(matched, func(a, b int) bool { return matched[a].Name < matched[b].Name })
		for _, r := range matched {
			for _, rule := range r.Rules {
				if !slices.ContainsFunc(rules, func(x rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(x, rule) }) {
					rules = append(rules, rule)
				}
			}
		}
	}
	return rules, nil
}
