package metricsapi

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Before its informers have synced the provider answers as an APIService
// that is not available: 503.
func TestUnsyncedProviderIsUnavailable(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"list pods":  func() error { _, err := p.ListPods(ctx, ""); return err },
		"get pod":    func() error { _, err := p.GetPod(ctx, "default", "web"); return err },
		"list nodes": func() error { _, err := p.ListNodes(ctx, ""); return err },
		"get node":   func() error { _, err := p.GetNode(ctx, "", "minik-node-1"); return err },
	} {
		if err := call(); !apierrors.IsServiceUnavailable(err) || err.Error() != "the server is currently unable to handle the request" {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := New(Config{MaxAge: -1}); err == nil {
		t.Error("a negative MaxAge was accepted")
	}
}
