package ecosystem_test

import (
	"context"
	"errors"
	"fmt"

	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

const (
	finalizer  = "webapp.minik.test/cleanup"
	ownerLabel = "webapp.minik.test/guestbook"
)

// reconciler runs each Guestbook as a Deployment of its size, reports the
// ready replicas and the labelled ConfigMaps (read from a metadata-only
// cache) in status, and cleans up behind a finalizer.
type reconciler struct {
	client.Client
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var gb Guestbook
	if err := r.Get(ctx, req.NamespacedName, &gb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !gb.DeletionTimestamp.IsZero() {
		if controllerutil.RemoveFinalizer(&gb, finalizer) {
			return ctrl.Result{}, r.Update(ctx, &gb)
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&gb, finalizer) {
		return ctrl.Result{}, r.Update(ctx, &gb)
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: gb.Name, Namespace: gb.Namespace}}
	labels := map[string]string{ownerLabel: gb.Name}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		dep.Spec.Replicas = ptr.To(gb.Spec.Size)
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		dep.Spec.Template.Labels = labels
		dep.Spec.Template.Spec.Containers = []corev1.Container{{
			Name: "web", Image: "nginx:1.27",
			Ports:          []corev1.ContainerPort{{ContainerPort: 80}},
			Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}}},
		}}
		return controllerutil.SetControllerReference(&gb, dep, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("deployment of %s: %w", req, err)
	}
	var cms metav1.PartialObjectMetadataList
	cms.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := r.List(ctx, &cms, client.InNamespace(gb.Namespace), client.MatchingLabels(labels)); err != nil {
		return ctrl.Result{}, err
	}
	status := GuestbookStatus{ReadyReplicas: dep.Status.ReadyReplicas, ConfigMaps: int32(len(cms.Items))}
	if gb.Status != status {
		gb.Status = status
		return ctrl.Result{}, r.Status().Update(ctx, &gb)
	}
	return ctrl.Result{}, nil
}

// sizeValidator refuses guestbooks of more than ten.
type sizeValidator struct{}

func (sizeValidator) ValidateCreate(_ context.Context, g *Guestbook) (admission.Warnings, error) {
	return check(g)
}

func (sizeValidator) ValidateUpdate(_ context.Context, _, g *Guestbook) (admission.Warnings, error) {
	return check(g)
}

func (sizeValidator) ValidateDelete(context.Context, *Guestbook) (admission.Warnings, error) {
	return nil, nil
}

func check(g *Guestbook) (admission.Warnings, error) {
	if g.Spec.Size > 10 {
		return nil, errors.New("size must be at most 10")
	}
	return nil, nil
}

// validatingWebhook is what controller-gen writes for sizeValidator;
// envtest points it at the test's webhook server.
func validatingWebhook() *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook-validation"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "vguestbook.webapp.minik.test",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "system", Name: "webhook-service", Path: ptr.To("/validate-webapp-minik-test-v1-guestbook"),
			}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{groupV1.Group}, APIVersions: []string{"v1"}, Resources: []string{"guestbooks"}},
			}},
		}},
	}
}

func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within 90s (last error: %v)", what, last)
	}
}

// TestOperatorSuiteOnMinikd runs what a kubebuilder project's suite runs,
// with envtest pointed at an existing cluster (USE_EXISTING_CLUSTER), here
// a minikd started with default flags.
func TestOperatorSuiteOnMinikd(t *testing.T) {
	kubeconfig := minikd(t)
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv("USE_EXISTING_CLUSTER", "true")
	ctrl.SetLogger(zap.New(zap.WriteTo(testWriter{t}), zap.UseDevMode(true)))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := addGuestbooks(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{
		Scheme:                scheme,
		CRDs:                  []*apiextensionsv1.CustomResourceDefinition{guestbookCRD()},
		CRDInstallOptions:     envtest.CRDInstallOptions{Scheme: scheme, CleanUpAfterUse: true},
		WebhookInstallOptions: envtest.WebhookInstallOptions{ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{validatingWebhook()}, LocalServingHost: "127.0.0.1"},
		ErrorIfCRDPathMissing: false,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest against minikd: %v", err)
	}
	stopped := false
	stopEnv := func() {
		if !stopped {
			stopped = true
			if err := env.Stop(); err != nil {
				t.Errorf("envtest stop: %v", err)
			}
		}
	}
	defer stopEnv()

	wo := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir}),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &reconciler{Client: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&Guestbook{}).
		Owns(&appsv1.Deployment{}).
		WatchesMetadata(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			if name := o.GetLabels()[ownerLabel]; name != "" {
				return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
			}
			return nil
		}), builder.WithPredicates()).
		Complete(r); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &Guestbook{}).WithValidator(sizeValidator{}).Complete(); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &GuestbookV2{}).Complete(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	var stopOnce sync.Once
	stopManager := func() {
		stopOnce.Do(func() {
			cancel()
			if err := <-mgrDone; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	defer stopManager()
	c := mgr.GetClient()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("caches did not sync")
	}
	// The webhook server answers before the API server may call it.
	eventually(t, "the webhook server to serve", func(context.Context) (bool, error) {
		return mgr.GetWebhookServer().StartedChecker()(nil) == nil, nil
	})

	gb := &Guestbook{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"}, Spec: GuestbookSpec{Size: 2}}
	t.Run("the validating webhook refuses through the API server", func(t *testing.T) {
		big := &Guestbook{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default"}, Spec: GuestbookSpec{Size: 11}}
		err := c.Create(ctx, big)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "size must be at most 10") {
			t.Fatalf("create of size 11: %v, want the webhook's denial", err)
		}
	})
	if err := c.Create(ctx, gb); err != nil {
		t.Fatal(err)
	}
	t.Run("the reconciler runs the Deployment and reports ready replicas in status", func(t *testing.T) {
		eventually(t, "status.readyReplicas 2", func(ctx context.Context) (bool, error) {
			var got Guestbook
			err := c.Get(ctx, client.ObjectKeyFromObject(gb), &got)
			return err == nil && got.Status.ReadyReplicas == 2 && controllerutil.ContainsFinalizer(&got, finalizer), err
		})
	})
	t.Run("a metadata-only watch sees labelled ConfigMaps", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo-extra", Namespace: "default", Labels: map[string]string{ownerLabel: "demo"}}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		eventually(t, "status.configMaps 1", func(ctx context.Context) (bool, error) {
			var got Guestbook
			err := c.Get(ctx, client.ObjectKeyFromObject(gb), &got)
			return err == nil && got.Status.ConfigMaps == 1, err
		})
	})
	t.Run("v2 is served through the conversion webhook", func(t *testing.T) {
		var v2 GuestbookV2
		if err := c.Get(ctx, client.ObjectKeyFromObject(gb), &v2); err != nil {
			t.Fatal(err)
		}
		if v2.Spec.Replicas != 2 || v2.APIVersion != "" && v2.APIVersion != groupV2.String() {
			t.Fatalf("v2 = %+v, want replicas 2", v2)
		}
		v2.Spec.Replicas = 3
		if err := c.Update(ctx, &v2); err != nil {
			t.Fatalf("update at v2: %v", err)
		}
		eventually(t, "v1 to read size 3 and 3 ready replicas", func(ctx context.Context) (bool, error) {
			var got Guestbook
			err := c.Get(ctx, client.ObjectKeyFromObject(gb), &got)
			return err == nil && got.Spec.Size == 3 && got.Status.ReadyReplicas == 3, err
		})
	})
	t.Run("deleting the guestbook runs the finalizer and collects the Deployment", func(t *testing.T) {
		// controller-runtime sends DeleteOptions in the custom resource's
		// own group version.
		if err := c.Delete(ctx, gb, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the guestbook and its Deployment to go", func(ctx context.Context) (bool, error) {
			errGB := c.Get(ctx, client.ObjectKeyFromObject(gb), &Guestbook{})
			errDep := c.Get(ctx, client.ObjectKeyFromObject(gb), &appsv1.Deployment{})
			return apierrors.IsNotFound(errGB) && apierrors.IsNotFound(errDep), errors.Join(errGB, errDep)
		})
	})
	stopManager()
	stopEnv()
	// envtest removed the definition it installed.
	kc, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the CRD to be deleted", func(ctx context.Context) (bool, error) {
		err := kc.Get(ctx, client.ObjectKey{Name: guestbookCRD().Name}, &apiextensionsv1.CustomResourceDefinition{})
		return apierrors.IsNotFound(err), err
	})
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
