package rbac

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	rbacv1client "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
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
// kube's Roles and RoleBindings of kube-system and kube-public are
// reconciled the same way, after the cluster-wide objects.
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
	if err := reconcileNamespaced(ctx, cs); err != nil {
		return err
	}
	return aggregateOnce(ctx, cs)
}

// reconcileNamespaced reconciles kube's Roles and RoleBindings of
// kube-system and kube-public as the ClusterRoles and their bindings,
// creating a namespace that is missing first, as kube's hook does.
func reconcileNamespaced(ctx context.Context, cs kubernetes.Interface) error {
	roles, bindings := NamespaceRoles(), NamespaceRoleBindings()
	namespaces := map[string]bool{}
	for _, r := range roles {
		namespaces[r.Namespace] = true
	}
	for _, b := range bindings {
		namespaces[b.Namespace] = true
	}
	for ns := range namespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("bootstrap namespace %s: %w", ns, err)
		}
	}
	if err := inParallel(len(roles), func(i int) error {
		want := roles[i]
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			opts := reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.RoleRuleOwner{Role: want.DeepCopy()},
				Client:  namespacedRoles{ctx: ctx, client: cs.RbacV1()},
				Confirm: true,
			}
			_, err := opts.Run()
			return err
		})
		if err != nil {
			return fmt.Errorf("bootstrap role %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	return inParallel(len(bindings), func(i int) error {
		want := bindings[i]
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			opts := reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: want.DeepCopy()},
				Client:      namespacedRoleBindings{ctx: ctx, client: cs.RbacV1()},
				Confirm:     true,
			}
			_, err := opts.Run()
			return err
		})
		if err != nil {
			return fmt.Errorf("bootstrap rolebinding %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	})
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

func reconcileClusterRole(ctx context.Context, cs kubernetes.Interface, want rbacv1.ClusterRole) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		opts := reconciliation.ReconcileRoleOptions{
			Role:    reconciliation.ClusterRoleRuleOwner{ClusterRole: want.DeepCopy()},
			Client:  clusterRoles{ctx: ctx, client: cs.RbacV1().ClusterRoles()},
			Confirm: true,
		}
		_, err := opts.Run()
		return err
	})
}

func reconcileClusterRoleBinding(ctx context.Context, cs kubernetes.Interface, want rbacv1.ClusterRoleBinding) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		opts := reconciliation.ReconcileRoleBindingOptions{
			RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: want.DeepCopy()},
			Client:      clusterRoleBindings{ctx: ctx, client: cs.RbacV1().ClusterRoleBindings()},
			Confirm:     true,
		}
		_, err := opts.Run()
		return err
	})
}

// clusterRoles is reconciliation's view of the ClusterRole API, with the
// caller's context (component-helpers' own adapter uses context.TODO).
type clusterRoles struct {
	ctx    context.Context
	client rbacv1client.ClusterRoleInterface
}

func (c clusterRoles) Get(_, name string) (reconciliation.RuleOwner, error) {
	r, err := c.client.Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: r}, nil
}

func (c clusterRoles) Create(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	r, err := c.client.Create(c.ctx, in.(reconciliation.ClusterRoleRuleOwner).ClusterRole, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: r}, nil
}

func (c clusterRoles) Update(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	r, err := c.client.Update(c.ctx, in.(reconciliation.ClusterRoleRuleOwner).ClusterRole, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleRuleOwner{ClusterRole: r}, nil
}

// clusterRoleBindings is reconciliation's view of the ClusterRoleBinding
// API, with the caller's context.
type clusterRoleBindings struct {
	ctx    context.Context
	client rbacv1client.ClusterRoleBindingInterface
}

func (c clusterRoleBindings) Get(_, name string) (reconciliation.RoleBinding, error) {
	b, err := c.client.Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b}, nil
}

func (c clusterRoleBindings) Create(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	b, err := c.client.Create(c.ctx, in.(reconciliation.ClusterRoleBindingAdapter).ClusterRoleBinding, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b}, nil
}

func (c clusterRoleBindings) Update(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	b, err := c.client.Update(c.ctx, in.(reconciliation.ClusterRoleBindingAdapter).ClusterRoleBinding, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b}, nil
}

func (c clusterRoleBindings) Delete(_, name string, uid types.UID) error {
	return c.client.Delete(c.ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
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

// namespacedRoles is reconciliation's view of the Role API, with the
// caller's context.
type namespacedRoles struct {
	ctx    context.Context
	client rbacv1client.RbacV1Interface
}

func (c namespacedRoles) Get(namespace, name string) (reconciliation.RuleOwner, error) {
	r, err := c.client.Roles(namespace).Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleRuleOwner{Role: r}, nil
}

func (c namespacedRoles) Create(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	role := in.(reconciliation.RoleRuleOwner).Role
	r, err := c.client.Roles(role.Namespace).Create(c.ctx, role, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleRuleOwner{Role: r}, nil
}

func (c namespacedRoles) Update(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	role := in.(reconciliation.RoleRuleOwner).Role
	r, err := c.client.Roles(role.Namespace).Update(c.ctx, role, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleRuleOwner{Role: r}, nil
}

// namespacedRoleBindings is reconciliation's view of the RoleBinding API,
// with the caller's context.
type namespacedRoleBindings struct {
	ctx    context.Context
	client rbacv1client.RbacV1Interface
}

func (c namespacedRoleBindings) Get(namespace, name string) (reconciliation.RoleBinding, error) {
	b, err := c.client.RoleBindings(namespace).Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleBindingAdapter{RoleBinding: b}, nil
}

func (c namespacedRoleBindings) Create(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	rb := in.(reconciliation.RoleBindingAdapter).RoleBinding
	b, err := c.client.RoleBindings(rb.Namespace).Create(c.ctx, rb, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleBindingAdapter{RoleBinding: b}, nil
}

func (c namespacedRoleBindings) Update(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	rb := in.(reconciliation.RoleBindingAdapter).RoleBinding
	b, err := c.client.RoleBindings(rb.Namespace).Update(c.ctx, rb, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return reconciliation.RoleBindingAdapter{RoleBinding: b}, nil
}

func (c namespacedRoleBindings) Delete(namespace, name string, uid types.UID) error {
	return c.client.RoleBindings(namespace).Delete(c.ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}
