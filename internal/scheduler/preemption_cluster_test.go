package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"minik/internal/testserver"
)

// priorityClass creates a PriorityClass.
func (c *cluster) priorityClass(name string, value int32, policy corev1.PreemptionPolicy) {
	c.t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	if policy != "" {
		pc.PreemptionPolicy = &policy
	}
	if _, err := c.cs.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{}); err != nil {
		c.t.Fatalf("create priorityclass %s: %v", name, err)
	}
}

// classPod is a pod of class asking for cpu, deleted at once when asked
// (no grace period: no kubelet runs in these tests).
func classPod(name, class, cpu string) *corev1.Pod {
	p := webPod(name, cpu)
	p.Spec.PriorityClassName = class
	p.Spec.TerminationGracePeriodSeconds = new(int64)
	return p
}

// watchPod starts watching pod demo/name from its current version.
func (c *cluster) watchPod(name string) watch.Interface {
	c.t.Helper()
	p, err := c.cs.CoreV1().Pods("demo").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	w, err := c.cs.CoreV1().Pods("demo").Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: p.ResourceVersion,
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(w.Stop)
	return w
}

func TestPreemptionEvictsALowerPriorityPod(t *testing.T) {
	c := newCluster(t)
	c.nodes(1, nodeSpec{cpu: "2"})
	c.priorityClass("low", 10, "")
	c.priorityClass("high", 1000, "")
	c.pod(classPod("victim", "low", "1500m"))
	victim := c.waitBound("victim")
	if victim.Spec.Priority == nil || *victim.Spec.Priority != 10 {
		t.Fatalf("victim priority = %v, want 10 from its class", victim.Spec.Priority)
	}
	w := c.watchPod("victim")

	vip := c.pod(classPod("vip", "high", "1"))

	// The victim is marked as disrupted, then deleted.
	var disrupted *corev1.PodCondition
	deadline := time.After(waitTimeout)
	for deleted := false; !deleted; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("victim watch closed")
			}
			p, _ := ev.Object.(*corev1.Pod)
			if p == nil {
				continue
			}
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
					disrupted = &p.Status.Conditions[i]
				}
			}
			deleted = ev.Type == watch.Deleted
		case <-deadline:
			t.Fatalf("victim not deleted within %v", waitTimeout)
		}
	}
	want := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler,
		Message: "default-scheduler: preempting to accommodate a higher priority pod"}
	if disrupted == nil || disrupted.Status != want.Status || disrupted.Reason != want.Reason || disrupted.Message != want.Message {
		t.Errorf("victim's DisruptionTarget condition = %+v, want %+v", disrupted, want)
	}
	e := c.waitEvent("victim", "Preempted", fmt.Sprintf("Preempted by pod %s on node minik-node-1", vip.UID))
	if e.Type != corev1.EventTypeNormal || e.Source.Component != "default-scheduler" {
		t.Errorf("Preempted event is %s from %q, want Normal from default-scheduler", e.Type, e.Source.Component)
	}

	// The preemptor was nominated, told why it waited, and then bound.
	c.waitEvent("vip", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.")
	p := c.waitBound("vip")
	if p.Spec.NodeName != "minik-node-1" || p.Status.NominatedNodeName != "minik-node-1" {
		t.Errorf("vip on %q nominated to %q, want both minik-node-1", p.Spec.NodeName, p.Status.NominatedNodeName)
	}
	if p.Spec.Priority == nil || *p.Spec.Priority != 1000 || p.Spec.PreemptionPolicy == nil || *p.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("vip priority %v policy %v, want 1000 PreemptLowerPriority", p.Spec.Priority, p.Spec.PreemptionPolicy)
	}
}

func TestPreemptionIsNotAttemptedWhenItMayNotHelp(t *testing.T) {
	c := newCluster(t)
	c.nodes(1, nodeSpec{cpu: "2"})
	c.priorityClass("low", 10, "")
	c.priorityClass("high-never", 1000, corev1.PreemptNever)
	c.pod(classPod("incumbent", "low", "1500m"))
	c.waitBound("incumbent")

	t.Run("a pod whose policy is Never waits", func(t *testing.T) {
		c.pod(classPod("polite", "high-never", "1"))
		c.expectUnschedulable("polite",
			"0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.")
	})
	t.Run("a pod of equal priority finds no victims", func(t *testing.T) {
		c.pod(classPod("peer", "low", "1"))
		c.expectUnschedulable("peer",
			"0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")
	})
	p, err := c.cs.CoreV1().Pods("demo").Get(context.Background(), "incumbent", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("incumbent: %v", err)
	}
	if p.DeletionTimestamp != nil || len(p.Status.Conditions) > 1 {
		t.Errorf("incumbent was touched: deletion %v, conditions %+v", p.DeletionTimestamp, p.Status.Conditions)
	}
}

// TestPreemptionWaitsForTheVictimToStop runs a simulated node: the victim
// stops within its grace period, and only then does the preemptor bind.
func TestPreemptionWaitsForTheVictimToStop(t *testing.T) {
	srv := testserver.StartWith(t, testserver.Options{Scheduler: true, Nodes: 1})
	c := &cluster{t: t, cs: srv.Client(t)}
	if _, err := c.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.priorityClass("low", 10, "")
	c.priorityClass("high", 1000, "")
	victim := webPod("victim", "3")
	victim.Spec.PriorityClassName = "low"
	c.pod(victim)
	c.waitBound("victim")
	vip := c.pod(classPod("vip", "high", "3"))
	c.waitEvent("victim", "Preempted", fmt.Sprintf("Preempted by pod %s on node minik-node-1", vip.UID))
	if p := c.waitBound("vip"); p.Spec.NodeName != "minik-node-1" {
		t.Errorf("vip went to %q", p.Spec.NodeName)
	}
	if _, err := c.cs.CoreV1().Pods("demo").Get(context.Background(), "victim", metav1.GetOptions{}); err == nil {
		t.Error("the preemptor was bound while its victim still exists")
	}
}
