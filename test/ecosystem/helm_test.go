package ecosystem_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// helmConfig is helm's action configuration for a namespace of the
// cluster behind kubeconfig, storing releases in Secrets (helm's default).
func helmConfig(t *testing.T, kubeconfig, namespace string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &namespace
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, namespace, "secret", func(format string, v ...interface{}) { t.Logf("helm: "+format, v...) }); err != nil {
		t.Fatal(err)
	}
	return cfg
}

const helmTimeout = 3 * time.Minute

// TestHelmReleasesOnMinikd installs, tests, upgrades, rolls back and
// uninstalls charts with --wait, as a chart's CI job does: helm create's
// scaffold (helm test's pod reaching the Service by its name), and
// a chart with a hook Job, a StatefulSet with claims and a Job that
// --wait-for-jobs waits on.
func TestHelmReleasesOnMinikd(t *testing.T) {
	kubeconfig := minikd(t)
	const ns = "charts"

	t.Run("helm create's scaffold: install, upgrade, rollback, uninstall", func(t *testing.T) {
		dir, err := chartutil.Create("mychart", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		chart, err := loader.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		cfg := helmConfig(t, kubeconfig, ns)
		install := action.NewInstall(cfg)
		install.ReleaseName, install.Namespace, install.CreateNamespace = "demo", ns, true
		install.Wait, install.Timeout = true, helmTimeout
		rel, err := install.Run(chart, nil)
		if err != nil {
			t.Fatalf("helm install --wait: %v", err)
		}
		if rel.Info.Status != release.StatusDeployed {
			t.Fatalf("installed release is %s", rel.Info.Status)
		}
		// helm test: the scaffold's test pod runs wget demo-mychart:80, a
		// name the cluster's DNS resolves.
		test := action.NewReleaseTesting(cfg)
		test.Namespace, test.Timeout = ns, helmTimeout
		if rel, err = test.Run("demo"); err != nil {
			t.Fatalf("helm test demo: %v", err)
		}
		for _, h := range rel.Hooks {
			if h.LastRun.Phase != release.HookPhaseSucceeded {
				t.Errorf("helm test: hook %s is %s", h.Name, h.LastRun.Phase)
			}
		}
		upgrade := action.NewUpgrade(cfg)
		upgrade.Namespace, upgrade.Wait, upgrade.Timeout = ns, true, helmTimeout
		if rel, err = upgrade.Run("demo", chart, map[string]interface{}{"replicaCount": 2}); err != nil || rel.Version != 2 {
			t.Fatalf("helm upgrade --wait --set replicaCount=2: %v (release %v)", err, rel)
		}
		rollback := action.NewRollback(cfg)
		rollback.Version, rollback.Wait, rollback.Timeout = 1, true, helmTimeout
		if err := rollback.Run("demo"); err != nil {
			t.Fatalf("helm rollback demo 1 --wait: %v", err)
		}
		history, err := action.NewHistory(cfg).Run("demo")
		if err != nil || len(history) != 3 || history[2].Info.Status != release.StatusDeployed {
			t.Fatalf("history after the rollback: %v (err %v)", describe(history), err)
		}
		uninstall := action.NewUninstall(cfg)
		uninstall.Wait, uninstall.Timeout = true, helmTimeout
		if _, err := uninstall.Run("demo"); err != nil {
			t.Fatalf("helm uninstall --wait: %v", err)
		}
	})

	t.Run("a LoadBalancer Service: install --wait completes once it has its address", func(t *testing.T) {
		dir, err := chartutil.Create("lbchart", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		chart, err := loader.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		cfg := helmConfig(t, kubeconfig, ns)
		install := action.NewInstall(cfg)
		install.ReleaseName, install.Namespace, install.CreateNamespace = "lb", ns, true
		install.Wait, install.Timeout = true, helmTimeout
		if _, err := install.Run(chart, map[string]interface{}{"service": map[string]interface{}{"type": "LoadBalancer"}}); err != nil {
			t.Fatalf("helm install --wait --set service.type=LoadBalancer: %v", err)
		}
		cs, err := cfg.KubernetesClientSet()
		if err != nil {
			t.Fatal(err)
		}
		svc, err := cs.CoreV1().Services(ns).Get(context.Background(), "lb-lbchart", metav1.GetOptions{})
		if err != nil || len(svc.Status.LoadBalancer.Ingress) == 0 || !strings.HasPrefix(svc.Status.LoadBalancer.Ingress[0].IP, "127.") {
			t.Fatalf("the Service's load balancer: %v (err %v)", svc.Status.LoadBalancer, err)
		}
		uninstall := action.NewUninstall(cfg)
		uninstall.Wait, uninstall.Timeout = true, helmTimeout
		if _, err := uninstall.Run("lb"); err != nil {
			t.Fatalf("helm uninstall --wait: %v", err)
		}
	})

	t.Run("hooks, a StatefulSet with claims and a Job waited on", func(t *testing.T) {
		chart, err := loader.Load(filepath.Join("testdata", "hooks"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := helmConfig(t, kubeconfig, ns)
		install := action.NewInstall(cfg)
		install.ReleaseName, install.Namespace, install.CreateNamespace = "stateful", ns, true
		install.Wait, install.WaitForJobs, install.Timeout = true, true, helmTimeout
		rel, err := install.Run(chart, nil)
		if err != nil {
			t.Fatalf("helm install --wait --wait-for-jobs: %v", err)
		}
		if len(rel.Hooks) != 1 || rel.Hooks[0].LastRun.Phase != release.HookPhaseSucceeded {
			t.Fatalf("hooks = %v, want the pre-install Job succeeded", rel.Hooks)
		}
		uninstall := action.NewUninstall(cfg)
		uninstall.Wait, uninstall.Timeout = true, helmTimeout
		if _, err := uninstall.Run("stateful"); err != nil {
			t.Fatalf("helm uninstall --wait: %v", err)
		}
	})
}

func describe(rels []*release.Release) string {
	out := ""
	for _, r := range rels {
		out += fmt.Sprintf("[%d %s] ", r.Version, r.Info.Status)
	}
	return out
}
