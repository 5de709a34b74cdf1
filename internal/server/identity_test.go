package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/utils/ptr"

	"minik/internal/api"
	"minik/internal/testserver"
)

// controllerSA is the user name of a controller's ServiceAccount.
func controllerSA(name string) string { return "system:serviceaccount:kube-system:" + name }

// auditEvents reads the completed requests of the server's audit log.
func auditEvents(t *testing.T, dataDir string) []auditv1.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(dataDir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditv1.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line being written
		}
		if ev.Stage == auditv1.StageResponseComplete {
			out = append(out, ev)
		}
	}
	return out
}

// audited tells whether user's verb on resource (resource or
// resource/subresource) was answered with a success.
func audited(evs []auditv1.Event, user, verb, resource string) bool {
	for _, ev := range evs {
		if ev.User.Username != user || ev.Verb != verb || ev.ObjectRef == nil || ev.ResponseStatus == nil || ev.ResponseStatus.Code >= 300 {
			continue
		}
		r := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			r += "/" + ev.ObjectRef.Subresource
		}
		if r == resource {
			return true
		}
	}
	return false
}

// TestControllersRunAsTheirServiceAccounts starts minikd as minikd runs by
// default (every controller, the scheduler, a node) and checks that the
// controllers do their work as their own ServiceAccounts, authorized by
// kube's bootstrap roles alone, as kube-controller-manager
// --use-service-account-credentials does: a Deployment gets its ReplicaSet
// and pods, its Service an EndpointSlice, a Job completes, the garbage collector deletes a dependent, a
// namespace's deletion finishes, each write made (and each event recorded)
// by system:serviceaccount:kube-system:<controller>, none of those
// identities refused anything, and system:kube-controller-manager itself
// only created ServiceAccounts and asked for their tokens.
func TestControllersRunAsTheirServiceAccounts(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"*"}, Scheduler: true, Nodes: 1})
	cs := srv.Client(t)
	ctx := t.Context()
	const ns = "identity"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the namespace's default ServiceAccount", time.Minute, func() bool {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})

	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox:1.36", Command: []string{"sh", "-c", "exit 0"}}},
		}}},
	}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID},
	}}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var rs *appsv1.ReplicaSet
	waitUntil(t, "the Deployment's ReplicaSet and its 2 pods", time.Minute, func() bool {
		l, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(l.Items) != 1 {
			return false
		}
		rs = &l.Items[0]
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 2
	})
	managers := map[string]bool{}
	for _, mf := range rs.ManagedFields {
		managers[mf.Manager] = true
	}
	if !managers["kube-controller-manager"] {
		t.Errorf("ReplicaSet managed by %v, want kube-controller-manager as in kube", managers)
	}
	waitUntil(t, "the Job to complete", time.Minute, func() bool {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the garbage collector to delete the dependent ConfigMap", time.Minute, func() bool {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, dependent.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	waitUntil(t, "the Deployment's events", time.Minute, func() bool {
		l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Deployment"})
		return err == nil && len(l.Items) > 0
	})
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the namespace's deletion to finish", 2*time.Minute, func() bool {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})

	want := []struct{ user, verb, resource string }{
		{controllerSA("deployment-controller"), "create", "replicasets"},
		{controllerSA("deployment-controller"), "create", "events"},
		{controllerSA("replicaset-controller"), "create", "pods"},
		{controllerSA("job-controller"), "create", "pods"},
		{controllerSA("job-controller"), "update", "jobs/status"},
		{controllerSA("generic-garbage-collector"), "delete", "configmaps"},
		{controllerSA("namespace-controller"), "update", "namespaces/finalize"},
		{controllerSA("service-account-controller"), "create", "serviceaccounts"},
		{controllerSA("endpointslice-controller"), "create", "endpointslices"},
		{controllerSA("root-ca-cert-publisher"), "create", "configmaps"},
		{"system:kube-controller-manager", "create", "serviceaccounts/token"},
	}
	// The audit log is flushed every 50 ms: poll it until it holds every
	// expected write, then report those still missing.
	missing := func(evs []auditv1.Event) []string {
		var out []string
		for _, w := range want {
			if !audited(evs, w.user, w.verb, w.resource) {
				out = append(out, w.verb+" "+w.resource+" by "+w.user)
			}
		}
		return out
	}
	var evs []auditv1.Event
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		evs = auditEvents(t, srv.DataDir)
		if m := missing(evs); len(m) == 0 || time.Now().After(deadline) {
			for _, w := range m {
				t.Errorf("the audit log has no %s", w)
			}
			break
		}
	}
	for _, ev := range evs {
		if ev.ObjectRef == nil || ev.ResponseStatus == nil {
			continue
		}
		what := fmt.Sprintf("%s %s/%s %s/%s (%s)", ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Subresource, ev.ObjectRef.Namespace, ev.ObjectRef.Name, ev.UserAgent)
		switch u := ev.User.Username; {
		case strings.HasPrefix(u, controllerSA("")):
			// A 403 of a create in the terminating namespace is
			// admission's, not a refusal of the authorizer.
			if ev.Annotations[api.AuditDecisionAnnotation] == "forbid" {
				t.Errorf("%s was refused %s: its role lacks a permission", u, what)
			}
			if !strings.HasPrefix(ev.UserAgent, "kube-controller-manager/") || !strings.HasSuffix(ev.UserAgent, "/"+u) {
				t.Errorf("%s sent %s with User-Agent %q, want kube-controller-manager/…/%s", u, what, ev.UserAgent, u)
			}
		case u == "system:kube-controller-manager":
			switch ev.Verb {
			case "get", "list", "watch":
			case "create":
				if r := ev.ObjectRef.Resource; r != "serviceaccounts" {
					t.Errorf("the controller manager itself wrote %s", what)
				}
			default:
				t.Errorf("the controller manager itself wrote %s", what)
			}
		}
	}
}

// TestControllersWithoutServiceAccountCredentials runs the controllers as
// system:kube-controller-manager (--use-service-account-credentials=false),
// which minikd then grants every controller's permissions: a Deployment
// still gets its ReplicaSet and pods, written by that user.
func TestControllersWithoutServiceAccountCredentials(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{
		Controllers: []string{"deployment", "replicaset", "serviceaccount"}, NoServiceAccountCredentials: true,
	})
	cs := srv.Client(t)
	ctx := t.Context()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	waitUntil(t, "the default ServiceAccount", time.Minute, func() bool {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the Deployment's pod", time.Minute, func() bool {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 1
	})
	var evs []auditv1.Event
	waitUntil(t, "the ReplicaSet and pod created by system:kube-controller-manager in the audit log", time.Minute, func() bool {
		evs = auditEvents(t, srv.DataDir)
		return audited(evs, "system:kube-controller-manager", "create", "replicasets") && audited(evs, "system:kube-controller-manager", "create", "pods")
	})
	for _, ev := range evs {
		if strings.HasPrefix(ev.User.Username, controllerSA("")) {
			t.Errorf("%s sent %s without service account credentials", ev.User.Username, ev.Verb)
		}
	}
}
