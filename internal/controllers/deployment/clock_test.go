package deployment_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"minik/internal/controllers/ctrltest"
	"minik/internal/controllers/deployment"
)

// TestProgressDeadlineUsesTheInjectedClock runs the controller on a fake
// clock with kube's default ten-minute deadline: a stuck rollout is
// requeued for its deadline on that clock, so stepping it past the
// deadline reports ProgressDeadlineExceeded at once, without waiting ten
// minutes or any other event.
func TestProgressDeadlineUsesTheInjectedClock(t *testing.T) {
	e := newEnv(t, "replicaset")
	e.kubelet(notBroken)
	clk := clocktesting.NewFakeClock(time.Now())
	e.runControllers(clk, 2000, deployment.New)
	// Fake time flows with real time, so that retries with back-off (on
	// the fake clock too) go on.
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-e.ctx.Done():
				return
			case <-tick.C:
				clk.Step(5 * time.Millisecond)
			}
		}
	}()

	e.create(newDeployment("web", 3, "nginx:1.27"))
	e.waitComplete("web")
	d := e.update("web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:broken" })
	if *d.Spec.ProgressDeadlineSeconds != 600 {
		t.Fatalf("progressDeadlineSeconds %d, want kube's default 600", *d.Spec.ProgressDeadlineSeconds)
	}
	newRS := e.newRS(d)
	ctrltest.Wait(t, "the rollout stuck on an unready pod", func() bool {
		d, _ := e.dLister.Deployments(e.ns).Get("web")
		c := condition(d, appsv1.DeploymentProgressing)
		return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == 1 && c != nil && c.Reason == deployment.ReasonReplicaSetUpdated
	})

	clk.Step(11 * time.Minute)
	want := fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name)
	ctrltest.Wait(t, "Progressing ProgressDeadlineExceeded", func() bool {
		d, _ := e.dLister.Deployments(e.ns).Get("web")
		c := condition(d, appsv1.DeploymentProgressing)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == deployment.ReasonProgressDeadlineExceeded && c.Message == want
	})
}
