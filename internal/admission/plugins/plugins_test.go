package plugins_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/admission/plugins"
	"minik/internal/cli"
	"minik/internal/controllers/ctrltest"
	"minik/internal/pki"
	"minik/internal/testserver"
)

func createNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func pod(name string, requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "nginx", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}},
	}}
}

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestNamesAreKubesInOrder(t *testing.T) {
	got := strings.Join(plugins.Names(), ",")
	want := "NamespaceLifecycle,LimitRanger,ServiceAccount,Priority,DefaultTolerationSeconds,DefaultStorageClass,RuntimeClass," +
		"CertificateApproval,CertificateSigning,ClusterTrustBundleAttest,CertificateSubjectRestriction,MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,ResourceQuota"
	if got != want {
		t.Errorf("Names() = %s", got)
	}
	if _, err := plugins.New(plugins.Config{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1"}, Disabled: []string{"AlwaysPullImages"}}); err == nil ||
		err.Error() != `--disable-admission-plugins: unknown plugin "AlwaysPullImages"` {
		t.Errorf("unknown plugin: %v", err)
	}
}

// TestBuiltinPlugins runs a pod through NamespaceLifecycle, LimitRanger,
// ServiceAccount and DefaultTolerationSeconds on a real server.
func TestBuiltinPlugins(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{ServiceAccountAdmission: true})
	ctx := context.Background()
	cs := srv.Client(t)
	createNamespace(ctx, t, cs, "demo")

	t.Run("a pod in a namespace without its default service account is refused", func(t *testing.T) {
		_, err := cs.CoreV1().Pods("demo").Create(ctx, pod("web", nil, nil), metav1.CreateOptions{})
		want := `pods "web" is forbidden: error looking up service account demo/default: serviceaccount "default" not found`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	if _, err := cs.CoreV1().ServiceAccounts("demo").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1", "memory", "512Mi"), DefaultRequest: rl("cpu", "100m", "memory", "128Mi")},
	}}}
	got, err := cs.CoreV1().LimitRanges("demo").Create(ctx, lr, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a LimitRange's Container defaults are filled in as kube does", func(t *testing.T) {
		d := got.Spec.Limits[0].Default
		if d.Cpu().String() != "1" || d.Memory().String() != "512Mi" {
			t.Errorf("default = %v", d)
		}
	})
	t.Run("the limits short name is served", func(t *testing.T) {
		lists, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range lists.APIResources {
			if r.Name == "limitranges" {
				if len(r.ShortNames) != 1 || r.ShortNames[0] != "limits" || !r.Namespaced {
					t.Errorf("limitranges = %+v", r)
				}
				return
			}
		}
		t.Error("limitranges not served")
	})
	ctrltest.Wait(t, "the service account and limit range in the admission caches", func() bool {
		p, err := cs.CoreV1().Pods("demo").Create(ctx, pod("probe", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && p.Spec.Containers[0].Resources.Limits.Cpu().String() == "1"
	})

	t.Run("an admitted pod has its account, token volume, tolerations and default resources", func(t *testing.T) {
		p, err := cs.CoreV1().Pods("demo").Create(ctx, pod("web", nil, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.ServiceAccountName != "default" || p.Spec.DeprecatedServiceAccount != "default" {
			t.Errorf("service account %q", p.Spec.ServiceAccountName)
		}
		if len(p.Spec.Volumes) != 1 || !strings.HasPrefix(p.Spec.Volumes[0].Name, "kube-api-access-") || p.Spec.Volumes[0].Projected == nil {
			t.Errorf("volumes = %+v", p.Spec.Volumes)
		} else if m := p.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].Name != p.Spec.Volumes[0].Name || m[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" || !m[0].ReadOnly {
			t.Errorf("mounts = %+v", m)
		}
		var tols []string
		for _, tol := range p.Spec.Tolerations {
			tols = append(tols, fmt.Sprintf("%s:%s:%d", tol.Key, tol.Effect, *tol.TolerationSeconds))
		}
		if strings.Join(tols, " ") != "node.kubernetes.io/not-ready:NoExecute:300 node.kubernetes.io/unreachable:NoExecute:300" {
			t.Errorf("tolerations = %v", tols)
		}
		r := p.Spec.Containers[0].Resources
		if r.Requests.Cpu().String() != "100m" || r.Limits.Cpu().String() != "1" || r.Limits.Memory().String() != "512Mi" {
			t.Errorf("resources = %+v", r)
		}
		if a := p.Annotations["kubernetes.io/limit-ranger"]; a != "LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit for container nginx" {
			t.Errorf("annotation = %q", a)
		}
		if p.Status.QOSClass != corev1.PodQOSBurstable {
			t.Errorf("QoS class %q: the strategy did not see the defaulted resources", p.Status.QOSClass)
		}
	})
	t.Run("a pod over the LimitRange's maximum is refused", func(t *testing.T) {
		_, err := cs.CoreV1().Pods("demo").Create(ctx, pod("big", rl("cpu", "1"), rl("cpu", "2")), metav1.CreateOptions{})
		want := `pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a pod in a namespace that does not exist is refused by NamespaceLifecycle first", func(t *testing.T) {
		_, err := cs.CoreV1().Pods("nowhere").Create(ctx, pod("web", nil, nil), metav1.CreateOptions{})
		if !apierrors.IsNotFound(err) || err.Error() != `namespaces "nowhere" not found` {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestPodRightAfterItsNamespace: with the serviceaccount controller
// running, a pod created the moment its namespace is waits (as in kube)
// for the namespace's default ServiceAccount instead of being refused.
func TestPodRightAfterItsNamespace(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"serviceaccount"}})
	ctx := context.Background()
	cs := srv.Client(t)
	createNamespace(ctx, t, cs, "fresh")
	p, err := cs.CoreV1().Pods("fresh").Create(ctx, pod("web", nil, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.ServiceAccountName != "default" || len(p.Spec.Volumes) != 1 {
		t.Errorf("service account %q, volumes %+v", p.Spec.ServiceAccountName, p.Spec.Volumes)
	}
}

// TestResourceQuota: quota stops a ReplicaSet's scale-up, its controller
// reports FailedCreate, and the quota controller keeps status.used right.
func TestResourceQuota(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"resourcequota", "replicaset"}})
	ctx := context.Background()
	cs := srv.Client(t)
	const ns = "quota-demo"
	createNamespace(ctx, t, cs, ns)
	// Closed first (pods=0), then opened, each seen by the API server's
	// quota admission through a dry-run pod: its informer may trail the
	// quota controller's.
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods-quota"}, Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "0", "count/replicasets.apps", "1")}}
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	probe := func() error {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	ctrltest.Wait(t, "quota admission to see the closed quota", func() bool { return apierrors.IsForbidden(probe()) })
	ctrltest.Wait(t, "the quota to open to 2 pods", func() bool {
		cur, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "pods-quota", metav1.GetOptions{})
		if err != nil {
			return false
		}
		cur.Spec.Hard = rl("pods", "2", "count/replicasets.apps", "1")
		_, err = cs.CoreV1().ResourceQuotas(ns).Update(ctx, cur, metav1.UpdateOptions{})
		return err == nil
	})
	ctrltest.Wait(t, "quota admission to see the open quota", func() bool { return probe() == nil })
	used := func(name corev1.ResourceName) string {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "pods-quota", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := q.Status.Used[name]
		if !ok {
			return "-"
		}
		return v.String()
	}
	ctrltest.Wait(t, "the quota controller to publish status", func() bool { return used("pods") == "0" && used("count/replicasets.apps") == "0" })

	replicas := int32(3)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.ReplicaSetSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}},
	}}
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("a second ReplicaSet is over count/replicasets.apps", func(t *testing.T) {
		other := rs.DeepCopy()
		other.Name = "other"
		_, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, other, metav1.CreateOptions{})
		want := `replicasets.apps "other" is forbidden: exceeded quota: pods-quota, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("the scale-up stops at the quota and the ReplicaSet says why", func(t *testing.T) {
		var cond *appsv1.ReplicaSetCondition
		ctrltest.Wait(t, "a ReplicaFailure condition", func() bool {
			got, err := cs.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range got.Status.Conditions {
				if c.Type == appsv1.ReplicaSetReplicaFailure {
					cond = &c
					return true
				}
			}
			return false
		})
		if cond.Reason != "FailedCreate" || !strings.Contains(cond.Message, "exceeded quota: pods-quota, requested: pods=1, used: pods=2, limited: pods=2") {
			t.Errorf("condition = %+v", cond)
		}
		ctrltest.Wait(t, "a FailedCreate event", func() bool {
			evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("reason", "FailedCreate").String()})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs.Items {
				if e.InvolvedObject.Name == "web" && strings.HasPrefix(e.Message, `Error creating: pods "web-`) &&
					strings.HasSuffix(e.Message, `is forbidden: exceeded quota: pods-quota, requested: pods=1, used: pods=2, limited: pods=2`) {
					return true
				}
			}
			return false
		})
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 2 || used("pods") != "2" {
			t.Errorf("%d pods, used pods=%s", len(pods.Items), used("pods"))
		}
	})
	t.Run("a deleted pod gives its quota back and the ReplicaSet replaces it", func(t *testing.T) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) == 0 {
			t.Fatalf("pods: %v", err)
		}
		gone := pods.Items[0].Name
		if err := cs.CoreV1().Pods(ns).Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "a replacement pod within the quota", func() bool {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods.Items {
				if p.Name == gone {
					return false
				}
			}
			return len(pods.Items) == 2 && used("pods") == "2"
		})
	})
}

// TestResourceQuotaUnderConcurrency: concurrent creates never spend the
// same headroom twice.
func TestResourceQuotaUnderConcurrency(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Controllers: []string{"resourcequota"}})
	ctx := context.Background()
	cs := srv.Client(t)
	const ns = "race"
	createNamespace(ctx, t, cs, ns)
	// The quota starts at 0, so that a dry-run create shows when the API
	// server's quota admission sees it (its informer may trail the quota
	// controller's); then it opens to 5, seen the same way.
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: rl("configmaps", "0")}}
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dryRun := func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	ctrltest.Wait(t, "quota admission to see the closed quota", func() bool {
		return apierrors.IsForbidden(dryRun())
	})
	ctrltest.Wait(t, "the quota to open to 5", func() bool {
		cur, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			return false
		}
		cur.Spec.Hard = rl("configmaps", "5")
		_, err = cs.CoreV1().ResourceQuotas(ns).Update(ctx, cur, metav1.UpdateOptions{})
		return err == nil
	})
	ctrltest.Wait(t, "quota admission to see the open quota", func() bool {
		return dryRun() == nil
	})
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			switch {
			case err == nil:
				ok.Add(1)
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: q, requested: configmaps=1, used: configmaps=5, limited: configmaps=5"):
				refused.Add(1)
			default:
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 5 || refused.Load() != 15 {
		t.Errorf("%d created, %d refused; want 5 and 15", ok.Load(), refused.Load())
	}
	got, _ := cs.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
	if u := got.Status.Used["configmaps"]; u.String() != "5" {
		t.Errorf("used = %s", u.String())
	}
}

// hook is an admission webhook on loopback HTTPS.
type hook struct {
	srv   *httptest.Server
	ca    []byte
	calls atomic.Int32
}

func startHook(t *testing.T, review func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *hook {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.LoadOrCreateServing(dir, "hook", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := kp.TLS()
	if err != nil {
		t.Fatal(err)
	}
	h := &hook{ca: ca.CertPEM}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := review(in.Request)
		resp.UID = in.Request.UID
		_ = json.NewEncoder(w).Encode(admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp})
	}))
	h.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	h.srv.StartTLS()
	t.Cleanup(h.srv.Close)
	return h
}

// warnings collects the Warning headers a client receives.
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.got...)
}

// apply runs "minikctl apply -f" on a manifest and returns its exit code
// and stderr.
func apply(t *testing.T, kubeconfig, manifest string) (int, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	streams, _, _, stderr := cli.TestStreams()
	code := cli.Run(context.Background(), []string{"--kubeconfig", kubeconfig, "apply", "-f", path}, streams)
	return code, stderr.String()
}

const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  replicas: %d
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`

func deployment(image string, replicas int32) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Name, d.Spec.Replicas = "web", &replicas
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	d.Spec.Template.Labels = map[string]string{"app": "web"}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "nginx", Image: image}}
	return d
}

// TestWebhooksAndPolicies: admission webhooks on a real HTTPS server and a
// ValidatingAdmissionPolicy, configured through the API and read from the
// server's caches, refuse an apply with kube's messages.
func TestWebhooksAndPolicies(t *testing.T) {
	srv := testserver.Start(t)
	ctx := context.Background()
	quiet := rest.CopyConfig(srv.RESTConfig)
	quiet.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(quiet)
	if err != nil {
		t.Fatal(err)
	}
	warned := &warnings{}
	cfg := rest.CopyConfig(srv.RESTConfig)
	cfg.WarningHandler = warned
	wcs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(ctx, t, cs, "demo")

	mutator := startHook(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt, Patch: []byte(`[{"op":"add","path":"/metadata/annotations","value":{"example.com/reviewed":"yes"}}]`),
			Warnings: []string{"deployment web was reviewed"}}
	})
	validator := startHook(t, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		var d appsv1.Deployment
		_ = json.Unmarshal(req.Object.Raw, &d)
		if d.Annotations["example.com/reviewed"] != "yes" {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "deployment was not reviewed"}}
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !strings.HasPrefix(c.Image, "registry.example.com/") {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Code: 403, Message: fmt.Sprintf("image %q is not from registry.example.com", c.Image)}}
			}
		}
		return &admissionv1.AdmissionResponse{Allowed: true}
	})
	none := admissionregistrationv1.SideEffectClassNone
	deployRule := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
	}}
	mURL, vURL := mutator.srv.URL+"/mutate", validator.srv.URL+"/validate"
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "review"}, Webhooks: []admissionregistrationv1.MutatingWebhook{{
		Name: "review.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &mURL, CABundle: mutator.ca},
		Rules: deployRule, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
	}}}
	created, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("webhook configurations are served with kube's defaults", func(t *testing.T) {
		w := created.Webhooks[0]
		if *w.FailurePolicy != admissionregistrationv1.Fail || *w.MatchPolicy != admissionregistrationv1.Equivalent || *w.TimeoutSeconds != 10 ||
			*w.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy || *w.Rules[0].Scope != admissionregistrationv1.AllScopes ||
			w.NamespaceSelector == nil || w.ObjectSelector == nil || created.Generation != 1 {
			t.Errorf("webhook = %+v", w)
		}
	})
	t.Run("an invalid configuration is refused", func(t *testing.T) {
		bad := mwc.DeepCopy()
		bad.Name = "bad"
		bad.Webhooks[0].Name = "short"
		bad.Webhooks[0].SideEffects = nil
		_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, bad, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "webhooks[0].name: Invalid value: \"short\": should be a domain with at least three segments separated by dots") ||
			!strings.Contains(err.Error(), "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun") {
			t.Errorf("err = %v", err)
		}
	})
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "registry"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{{
		Name: "registry.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &vURL, CABundle: validator.ca},
		Rules: deployRule, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
	}}}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrltest.Wait(t, "the webhooks in the admission caches", func() bool {
		_, err := cs.AppsV1().Deployments("demo").Create(ctx, deployment("registry.example.com/nginx:1.27", 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && mutator.calls.Load() > 0 && validator.calls.Load() > 0
	})

	t.Run("apply is refused by the validating webhook with kube's message", func(t *testing.T) {
		code, stderr := apply(t, srv.KubeconfigPath, fmt.Sprintf(webDeployment, 3))
		want := `admission webhook "registry.example.com" denied the request: image "nginx:1.27" is not from registry.example.com`
		if code == 0 || !strings.Contains(stderr, want) {
			t.Fatalf("exit %d, stderr %q\nwant it to contain %s", code, stderr, want)
		}
		if mutator.calls.Load() == 0 {
			t.Error("the mutating webhook was not called")
		}
	})
	t.Run("a patched object passes, with the hook's warning", func(t *testing.T) {
		got, err := wcs.AppsV1().Deployments("demo").Create(ctx, deployment("registry.example.com/nginx:1.27", 2), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Annotations["example.com/reviewed"] != "yes" {
			t.Errorf("annotations = %v", got.Annotations)
		}
		if w := warned.list(); len(w) != 1 || w[0] != "deployment web was reviewed" {
			t.Errorf("warnings = %q", w)
		}
	})

	// The webhooks step aside for the policy.
	if err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "registry", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "max-replicas"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: deployRule[0]}}},
		Validations: []admissionregistrationv1.Validation{{
			Expression: "object.spec.replicas <= 5", MessageExpression: "'replicas must be at most 5, not ' + string(object.spec.replicas)",
		}},
	}}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("a policy whose expression does not compile is refused", func(t *testing.T) {
		bad := pol.DeepCopy()
		bad.Name = "broken"
		bad.Spec.Validations[0].Expression = "object.spec.replicas <"
		_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, bad, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.validations[0].expression: Invalid value: "object.spec.replicas <": compilation failed: ERROR: <input>:1:`) {
			t.Errorf("err = %v", err)
		}
	})
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "max-replicas-demo"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
		PolicyName: "max-replicas", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "demo"}}},
	}}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(fmt.Sprintf(webDeployment, 7), "nginx:1.27", "registry.example.com/nginx:1.27", 1)
	want := `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-demo' denied request: replicas must be at most 5, not 7`
	var code int
	var stderr string
	ctrltest.Wait(t, "the policy in the admission caches", func() bool {
		code, stderr = apply(t, srv.KubeconfigPath, manifest)
		return code != 0
	})
	t.Run("apply is refused by the ValidatingAdmissionPolicy with kube's message", func(t *testing.T) {
		// minikctl prints an Invalid Status as kubectl does: "The
		// deployments "web" is invalid: : <cause>".
		cause := want[strings.Index(want, "ValidatingAdmissionPolicy"):]
		if !strings.Contains(stderr, cause) {
			t.Fatalf("stderr %q\nwant it to contain %s", stderr, cause)
		}
		_, err := cs.AppsV1().Deployments("demo").Patch(ctx, "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{})
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("patch: %v", err)
		}
	})
	t.Run("apply goes through within the policy", func(t *testing.T) {
		ok := strings.Replace(manifest, "replicas: 7", "replicas: 4", 1)
		if code, stderr := apply(t, srv.KubeconfigPath, ok); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}

// BenchmarkAdmission measures a ConfigMap create through the whole
// admission chain (no webhook or policy configured) against one with every
// plugin disabled; the ratio of the two is the chain's cost per request.
func BenchmarkAdmission(b *testing.B) {
	for _, bc := range []struct {
		name     string
		disabled []string
	}{{"chain", nil}, {"none", plugins.Names()}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := testserver.StartWith(b, testserver.Options{DisableAdmissionPlugins: bc.disabled})
			ctx := context.Background()
			cfg := rest.CopyConfig(srv.RESTConfig)
			cfg.QPS = -1
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			var n atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", n.Add(1))}, Data: map[string]string{"k": "v"}}
					if _, err := cs.CoreV1().ConfigMaps("bench").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
