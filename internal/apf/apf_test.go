package apf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/rest"

	"minik/internal/apf"
	"minik/internal/testserver"
)

// timeout bounds each wait for a condition on a loaded machine.
const timeout = 60 * time.Second

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx := context.Background()
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestAPFConfiguration(t *testing.T) {
	srv := testserver.Start(t)
	cs := srv.Client(t)
	ctx := context.Background()
	fsc, plc := cs.FlowcontrolV1().FlowSchemas(), cs.FlowcontrolV1().PriorityLevelConfigurations()

	t.Run("a fresh minikd has kube's bootstrap configuration", func(t *testing.T) {
		for _, want := range append(bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations...) {
			got, err := plc.Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("prioritylevelconfiguration %s: %v", want.Name, err)
				continue
			}
			if !apiequality.Semantic.DeepEqual(got.Spec, want.Spec) {
				t.Errorf("prioritylevelconfiguration %s spec = %+v, want %+v", want.Name, got.Spec, want.Spec)
			}
			if a := got.Annotations[flowcontrolv1.AutoUpdateAnnotationKey]; a != "true" {
				t.Errorf("prioritylevelconfiguration %s autoupdate-spec = %q, want \"true\"", want.Name, a)
			}
		}
		for _, want := range append(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas...) {
			got, err := fsc.Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("flowschema %s: %v", want.Name, err)
				continue
			}
			if !apiequality.Semantic.DeepEqual(got.Spec, want.Spec) {
				t.Errorf("flowschema %s spec = %+v, want %+v", want.Name, got.Spec, want.Spec)
			}
			if a := got.Annotations[flowcontrolv1.AutoUpdateAnnotationKey]; a != "true" {
				t.Errorf("flowschema %s autoupdate-spec = %q, want \"true\"", want.Name, a)
			}
		}
		l, err := fsc.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(bootstrap.MandatoryFlowSchemas) + len(bootstrap.SuggestedFlowSchemas); len(l.Items) != n {
			t.Errorf("%d flowschemas, want the bootstrap's %d", len(l.Items), n)
		}
	})

	t.Run("every bootstrap flowschema is marked as finding its priority level", func(t *testing.T) {
		for _, fs := range append(bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas...) {
			want := danglingCondition(fs.Spec.PriorityLevelConfiguration.Name, true)
			waitFor(t, "Dangling=False on "+fs.Name, danglingIs(fsc, fs.Name, want))
		}
	})

	t.Run("kubectl get flowschemas lists them in matching order", func(t *testing.T) {
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var table metav1.Table
		if err := json.Unmarshal(raw, &table); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range table.Rows {
			got = append(got, fmt.Sprint(r.Cells[0]))
		}
		want := []string{"exempt", "probes", "system-leader-election", "system-node-high", "system-nodes",
			"kube-controller-manager", "kube-scheduler", "kube-system-service-accounts", "service-accounts", "global-default", "catch-all"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("rows %v, want %v", got, want)
		}
	})

	t.Run("responses name the matched flowschema and priority level", func(t *testing.T) {
		cases := []struct {
			name, impersonate, path, fs, pl string
		}{
			{"the admin is exempt", "", "/api/v1/namespaces", "exempt", "exempt"},
			{"a kube-system service account is workload-high", "system:serviceaccount:kube-system:replicaset-controller", "/api/v1/namespaces/default/pods",
				"kube-system-service-accounts", "workload-high"},
			{"other users are global-default, refused or not", "alice", "/apis/apps/v1/namespaces/default/deployments", "global-default", "global-default"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				fs, err := fsc.Get(ctx, tc.fs, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				pl, err := plc.Get(ctx, tc.pl, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				cfg := rest.CopyConfig(srv.RESTConfig)
				cfg.Impersonate.UserName = tc.impersonate
				if tc.impersonate != "" {
					cfg.Impersonate.Groups = []string{"system:authenticated"}
				}
				hc, err := rest.HTTPClientFor(cfg)
				if err != nil {
					t.Fatal(err)
				}
				waitFor(t, "headers of "+tc.path, func(ctx context.Context) (bool, error) {
					req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+tc.path, nil)
					if err != nil {
						return false, err
					}
					resp, err := hc.Do(req)
					if err != nil {
						return false, err
					}
					_ = resp.Body.Close()
					gotFS, gotPL := resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID), resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
					return gotFS == string(fs.UID) && gotPL == string(pl.UID), nil
				})
			})
		}
	})

	// kube-apiserver ensures the configuration again every minute; a
	// maintainer of the test's, ensuring it more often, stands for that
	// resync.
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	readyCh := make(chan struct{})
	go func() { done <- apf.New(cs, 50*time.Millisecond, nil).Run(runCtx, func() { close(readyCh) }) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-readyCh:
	case err := <-done:
		t.Fatalf("maintainer stopped: %v", err)
	}

	t.Run("deleted mandatory objects come back at the next resync", func(t *testing.T) {
		if err := fsc.Delete(ctx, flowcontrolv1.FlowSchemaNameExempt, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := plc.Delete(ctx, flowcontrolv1.PriorityLevelConfigurationNameCatchAll, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "exempt flowschema back", func(ctx context.Context) (bool, error) {
			fs, err := fsc.Get(ctx, flowcontrolv1.FlowSchemaNameExempt, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil && apiequality.Semantic.DeepEqual(fs.Spec, bootstrap.MandatoryFlowSchemaExempt.Spec), err
		})
		waitFor(t, "catch-all priority level back", func(ctx context.Context) (bool, error) {
			_, err := plc.Get(ctx, flowcontrolv1.PriorityLevelConfigurationNameCatchAll, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
	})

	t.Run("a suggested object keeps an administrator's spec once its autoupdate-spec is false", func(t *testing.T) {
		pinned, err := fsc.Get(ctx, "probes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pinned.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
		pinned.Spec.MatchingPrecedence = 3
		if _, err := fsc.Update(ctx, pinned, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Two restorations of another suggested object: the second is by
		// a pass that started after probes was changed.
		for i := range 2 {
			auto, err := fsc.Get(ctx, "service-accounts", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			auto.Spec.MatchingPrecedence = int32(4 + i)
			if _, err := fsc.Update(ctx, auto, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "service-accounts restored", func(ctx context.Context) (bool, error) {
				fs, err := fsc.Get(ctx, "service-accounts", metav1.GetOptions{})
				return err == nil && fs.Spec.MatchingPrecedence == bootstrap.SuggestedFlowSchemaServiceAccounts.Spec.MatchingPrecedence, err
			})
		}
		// probes keeps its spec.
		fs, err := fsc.Get(ctx, "probes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if fs.Spec.MatchingPrecedence != 3 || fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "false" {
			t.Errorf("probes: matchingPrecedence %d, autoupdate-spec %q; want the administrator's 3 and \"false\"", fs.Spec.MatchingPrecedence, fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey])
		}
	})

	t.Run("the mandatory specs cannot be changed", func(t *testing.T) {
		fs, err := fsc.Get(ctx, flowcontrolv1.FlowSchemaNameCatchAll, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fs.Spec.MatchingPrecedence = 9999
		_, err = fsc.Update(ctx, fs, metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("update of catch-all's spec: %v, want Invalid", err)
		}
	})

	t.Run("a flowschema naming a missing priority level is dangling until it exists", func(t *testing.T) {
		fs := &flowcontrolv1.FlowSchema{
			ObjectMeta: metav1.ObjectMeta{Name: "dangler"},
			Spec: flowcontrolv1.FlowSchemaSpec{
				PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "later"},
				MatchingPrecedence:         8000,
			},
		}
		if _, err := fsc.Create(ctx, fs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "Dangling=True", danglingIs(fsc, "dangler", danglingCondition("later", false)))
		pl := &flowcontrolv1.PriorityLevelConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "later"},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}},
		}
		if _, err := plc.Create(ctx, pl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "Dangling=False", danglingIs(fsc, "dangler", danglingCondition("later", true)))
	})
}

// danglingIs waits for a FlowSchema's Dangling condition to be want.
func danglingIs(fsc interface {
	Get(context.Context, string, metav1.GetOptions) (*flowcontrolv1.FlowSchema, error)
}, name string, want flowcontrolv1.FlowSchemaCondition) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		fs, err := fsc.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get flowschema %s: %w", name, err)
		}
		for _, c := range fs.Status.Conditions {
			if c.Type == want.Type {
				return c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message && !c.LastTransitionTime.IsZero(), nil
			}
		}
		return false, nil
	}
}

// danglingCondition is the Dangling condition kube's APF configuration
// controller writes on a FlowSchema whose priority level does (found) or
// does not exist.
func danglingCondition(plName string, found bool) flowcontrolv1.FlowSchemaCondition {
	if found {
		return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found",
			Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", plName)}
	}
	return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue, Reason: "NotFound",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", plName)}
}
