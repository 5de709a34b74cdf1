package podautoscaler_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/podautoscaler"
	"minik/internal/testserver"
)

// startController runs the HPA controller against cs with a short sync
// period until the test ends.
func startController(t *testing.T, cs kubernetes.Interface, cfg podautoscaler.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	cc := &controllers.Context{
		Client:    cs,
		Informers: informers.NewSharedInformerFactory(cs, 0),
		Recorder: func(component string) record.EventRecorder {
			return broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
		},
		Clock:  clock.RealClock{},
		Logger: slog.Default(),
	}
	c, err := podautoscaler.NewWithConfig(cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cc.Informers.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, 1)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cc.Informers.Shutdown()
		broadcaster.Shutdown()
	})
}

func deployment(name, usage string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"metrics.minik.dev/usage": usage}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				}}},
			},
		},
	}
}

func hpa(name string, minReplicas, maxReplicas, cpuPercent int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    &minReplicas, MaxReplicas: maxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &cpuPercent}}}},
		},
	}
}

func condition(h *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) string {
	for _, c := range h.Status.Conditions {
		if c.Type == typ {
			return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return ""
}

// TestHPAScalesOnCPU: a Deployment whose pods use twice their CPU
// request is scaled up to the HPA's maximum (4 first, the rate limit of
// one step, then 5), with kube's status, conditions and events; one
// whose pods idle is scaled down to its minimum once the stabilization
// window lets it; one whose target has no pods yet reports why.
func TestHPAScalesOnCPU(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Nodes: 1, Scheduler: true, Controllers: []string{"deployment", "replicaset"}})
	cs := srv.Client(t)
	// The controller runs as minikd runs it, as its ServiceAccount
	// kube-system/horizontal-pod-autoscaler, so that kube's bootstrap role
	// system:controller:horizontal-pod-autoscaler is what lets it read
	// metrics and scales.
	kcm := rest.CopyConfig(srv.RESTConfig)
	kcm.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kube-system:horizontal-pod-autoscaler",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}}
	ccs, err := kubernetes.NewForConfig(kcm)
	if err != nil {
		t.Fatal(err)
	}
	startController(t, ccs, podautoscaler.Config{
		SyncPeriod: 200 * time.Millisecond, DownscaleStabilization: time.Second,
		CPUInitializationPeriod: time.Millisecond, DelayOfInitialReadinessStatus: time.Millisecond,
	})
	ctx := context.Background()
	const ns = "default"

	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("busy", "*=cpu:200m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa("busy", 1, 5, 50), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *autoscalingv2.HorizontalPodAutoscaler
	ctrltest.Wait(t, "busy scaled to its maximum, 5", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "busy", metav1.GetOptions{})
		if err != nil || *d.Spec.Replicas != 5 {
			return false
		}
		got, err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "busy", metav1.GetOptions{})
		return err == nil && got.Status.DesiredReplicas == 5 && strings.HasPrefix(condition(got, autoscalingv2.ScalingLimited), "True TooManyReplicas")
	})
	if got.Status.LastScaleTime == nil || got.Status.ObservedGeneration == nil || *got.Status.ObservedGeneration != got.Generation {
		t.Errorf("status %+v; want a last scale time and the observed generation", got.Status)
	}
	if c := condition(got, autoscalingv2.ScalingActive); c != "True ValidMetricFound: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)" {
		t.Errorf("ScalingActive %q", c)
	}
	if c := condition(got, autoscalingv2.ScalingLimited); c != "True TooManyReplicas: the desired replica count is more than the maximum replica count" {
		t.Errorf("ScalingLimited %q", c)
	}
	if len(got.Status.CurrentMetrics) != 1 || got.Status.CurrentMetrics[0].Resource == nil || *got.Status.CurrentMetrics[0].Resource.Current.AverageUtilization < 100 {
		t.Errorf("currentMetrics %+v; want cpu utilization far above 50%%", got.Status.CurrentMetrics)
	}
	ctrltest.Wait(t, "the first rescale's event", func() bool {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{"involvedObject.name": "busy", "reason": "SuccessfulRescale"}.String()})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Message == "New size: 4; reason: cpu resource utilization (percentage of request) above target" &&
				e.Source.Component == podautoscaler.Component && e.InvolvedObject.Kind == "HorizontalPodAutoscaler" {
				return true
			}
		}
		return false
	})

	t.Run("idle pods scale down to the minimum", func(t *testing.T) {
		d := deployment("idle", "*=cpu:1m")
		d.Spec.Replicas = new(int32(3))
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa("idle", 2, 5, 50), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "idle scaled down to 2", func() bool {
			h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "idle", metav1.GetOptions{})
			d, derr := cs.AppsV1().Deployments(ns).Get(ctx, "idle", metav1.GetOptions{})
			return err == nil && derr == nil && *d.Spec.Replicas == 2 && h.Status.DesiredReplicas == 2 &&
				strings.HasPrefix(condition(h, autoscalingv2.ScalingLimited), "True TooFewReplicas")
		})
	})

	t.Run("pods without CPU requests have no utilization", func(t *testing.T) {
		d := deployment("norequests", "*=cpu:50m")
		d.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa("norequests", 1, 3, 50), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		const want = "False FailedGetResourceMetric: the HPA was unable to compute the replica count: failed to get cpu utilization: missing request for cpu in container web of Pod norequests-"
		ctrltest.Wait(t, "ScalingActive "+want, func() bool {
			h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "norequests", metav1.GetOptions{})
			return err == nil && strings.HasPrefix(condition(h, autoscalingv2.ScalingActive), want)
		})
		ctrltest.Wait(t, "a FailedGetResourceMetric event", func() bool {
			evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{"involvedObject.name": "norequests", "reason": "FailedGetResourceMetric"}.String()})
			return err == nil && len(evs.Items) > 0 && evs.Items[0].Type == corev1.EventTypeWarning
		})
	})

	t.Run("two HPAs over the same pods are refused", func(t *testing.T) {
		second := hpa("busy", 1, 5, 50)
		second.Name = "busy-again"
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, second, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "ScalingActive False AmbiguousSelector", func() bool {
			h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "busy-again", metav1.GetOptions{})
			return err == nil && strings.HasPrefix(condition(h, autoscalingv2.ScalingActive),
				"False AmbiguousSelector: pods by selector app=busy are controlled by more than one HPA (e.g. [")
		})
	})

	t.Run("a target without a scale is reported", func(t *testing.T) {
		if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa("missing", 1, 3, 50), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctrltest.Wait(t, "AbleToScale False FailedGetScale", func() bool {
			h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "missing", metav1.GetOptions{})
			return err == nil && strings.HasPrefix(condition(h, autoscalingv2.AbleToScale),
				`False FailedGetScale: the HPA controller was unable to get the target's current scale: deployments.apps "missing" not found`)
		})
	})
}
