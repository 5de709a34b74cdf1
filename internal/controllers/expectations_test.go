package controllers

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpectations(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	e := NewExpectations(clk)
	const key = "demo/web"
	if !e.Satisfied(key) {
		t.Fatal("an owner with no expectations should sync")
	}
	e.ExpectCreations(key, 2)
	e.CreationObserved(key)
	if e.Satisfied(key) {
		t.Fatal("one of two creations seen: should wait")
	}
	e.CreationObserved(key)
	if !e.Satisfied(key) {
		t.Fatal("both creations seen: should sync")
	}
	e.ExpectDeletions(key, []string{"demo/web-a", "demo/web-b"})
	e.DeletionObserved(key, "demo/web-a")
	e.DeletionObserved(key, "demo/web-a") // graceful: seen as update, then as delete
	if e.Satisfied(key) {
		t.Fatal("a deletion counted twice")
	}
	e.DeletionObserved(key, "demo/web-other")
	if e.Satisfied(key) {
		t.Fatal("an unexpected pod's deletion counted")
	}
	e.DeletionObserved(key, "demo/web-b")
	if !e.Satisfied(key) {
		t.Fatal("both deletions seen: should sync")
	}
	e.ExpectCreations(key, 1)
	clk.SetTime(now.Add(ExpectationsTimeout + time.Second))
	if !e.Satisfied(key) {
		t.Fatal("expired expectations should let the owner sync")
	}
	e.ExpectCreations(key, 1)
	e.Forget(key)
	if !e.Satisfied(key) {
		t.Fatal("forgotten expectations should let the owner sync")
	}
}
