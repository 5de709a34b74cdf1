package ecosystem_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubectlBinary is kubectl v0.37.2 built from ./kubectl by TestMain.
var kubectlBinary string

// kubectlRun runs kubectl against kubeconfig and returns its stdout, or an
// error carrying its stderr and exit status.
func kubectlRun(kubeconfig string, stdin string, args ...string) (string, error) {
	cmd := exec.Command(kubectlBinary, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// kubectl runs kubectl and fails the test when it fails.
func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := kubectlRun(kubeconfig, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kubectlApply pipes manifest to kubectl apply -f - with extra arguments.
func kubectlApply(t *testing.T, kubeconfig, manifest string, args ...string) string {
	t.Helper()
	out, err := kubectlRun(kubeconfig, manifest, append([]string{"apply", "-f", "-"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// retry retries f until it succeeds, for up to three minutes (the
// HPA's sync period is kube's 15 s), and fails the test with f's last
// error when it never does.
func retry(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestKubectlScenariosOnMinikd drives one minikd with default flags with
// real kubectl through what users of kube-apiserver's other kinds do:
// apply --prune, cluster-info dump, a certificate approved into a client
// certificate that then authenticates, a NetworkPolicy that denies
// traffic, and an HPA scaling a Deployment up and down.
func TestKubectlScenariosOnMinikd(t *testing.T) {
	kc := minikd(t)
	retry(t, "a Ready node", func() error {
		_, err := kubectlRun(kc, "", "wait", "--for=condition=Ready", "node", "--all", "--timeout=10s")
		return err
	})

	t.Run("apply --prune", func(t *testing.T) {
		cm := func(name string) string {
			return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  labels: {set: prune}\ndata: {k: v}\n", name)
		}
		kubectlApply(t, kc, cm("keep")+"---\n"+cm("drop"), "-l", "set=prune", "--prune")
		out := kubectlApply(t, kc, cm("keep"), "-l", "set=prune", "--prune")
		if !strings.Contains(out, "configmap/drop pruned") {
			t.Errorf("apply --prune printed %q; want configmap/drop pruned", out)
		}
		if _, err := kubectlRun(kc, "", "get", "configmap", "drop"); err == nil || !strings.Contains(err.Error(), `configmaps "drop" not found`) {
			t.Errorf("the pruned ConfigMap: %v", err)
		}
		kubectl(t, kc, "get", "configmap", "keep")
	})

	t.Run("cluster-info dump", func(t *testing.T) {
		dir := t.TempDir()
		kubectl(t, kc, "cluster-info", "dump", "--output-directory", dir)
		for _, f := range []string{"nodes.json", "default/pods.json", "default/replication-controllers.json", "kube-system/events.json"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("cluster-info dump wrote no %s: %v", f, err)
			}
		}
	})

	t.Run("certificate approve gives a working client certificate", func(t *testing.T) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice", Organization: []string{"devs"}}}, key)
		if err != nil {
			t.Fatal(err)
		}
		csr := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
		kubectlApply(t, kc, fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: alice}
spec:
  request: %s
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 3600
  usages: [client auth]
`, base64.StdEncoding.EncodeToString(csr)))
		if out := kubectl(t, kc, "certificate", "approve", "alice"); out != "certificatesigningrequest.certificates.k8s.io/alice approved\n" {
			t.Errorf("certificate approve printed %q", out)
		}
		var cert []byte
		retry(t, "the issued certificate", func() error {
			out, err := kubectlRun(kc, "", "get", "csr", "alice", "-o", "jsonpath={.status.certificate}")
			if err != nil {
				return err
			}
			if out == "" {
				return fmt.Errorf("no certificate yet")
			}
			cert, err = base64.StdEncoding.DecodeString(out)
			return err
		})
		dir := t.TempDir()
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		certFile, keyFile, alice := filepath.Join(dir, "alice.crt"), filepath.Join(dir, "alice.key"), filepath.Join(dir, "kubeconfig")
		if err := os.WriteFile(certFile, cert, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
			t.Fatal(err)
		}
		// alice's kubeconfig: minikd's cluster, her certificate as the user.
		flat := kubectl(t, kc, "config", "view", "--minify", "--flatten")
		if err := os.WriteFile(alice, []byte(flat), 0o600); err != nil {
			t.Fatal(err)
		}
		cluster := strings.TrimSpace(kubectl(t, alice, "config", "view", "-o", "jsonpath={.clusters[0].name}"))
		kubectl(t, alice, "config", "set-credentials", "alice", "--client-certificate", certFile, "--client-key", keyFile, "--embed-certs")
		kubectl(t, alice, "config", "set-context", "alice", "--cluster", cluster, "--user", "alice")
		who := kubectl(t, alice, "--context", "alice", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
		if who != `alice ["devs","system:authenticated"]` {
			t.Errorf("auth whoami with the issued certificate: %q", who)
		}
		if _, err := kubectlRun(alice, "", "--context", "alice", "get", "pods"); err == nil || !strings.Contains(err.Error(), `User "alice" cannot list resource "pods"`) {
			t.Errorf("alice, unbound, listing pods: %v", err)
		}
	})

	t.Run("a NetworkPolicy denies traffic", func(t *testing.T) {
		kubectlApply(t, kc, `apiVersion: v1
kind: Namespace
metadata: {name: netpol}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: netpol, labels: {app: web}}
spec:
  containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: netpol}
spec:
  containers: [{name: client, image: "busybox:1.36", command: [sleep, "3600"]}]
`)
		kubectl(t, kc, "wait", "-n", "netpol", "--for=condition=Ready", "pod/web", "pod/client", "--timeout=120s")
		ip := kubectl(t, kc, "get", "-n", "netpol", "pod", "web", "-o", "jsonpath={.status.podIP}")
		wget := []string{"exec", "-n", "netpol", "client", "--", "wget", "-q", "-O", "-", "-T", "2", "http://" + ip}
		retry(t, "client reaching web", func() error {
			_, err := kubectlRun(kc, "", wget...)
			return err
		})
		kubectlApply(t, kc, `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-web, namespace: netpol}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
`)
		retry(t, "the policy denying client", func() error {
			if _, err := kubectlRun(kc, "", wget...); err == nil {
				return fmt.Errorf("wget still reaches web")
			}
			return nil
		})
		kubectl(t, kc, "delete", "namespace", "netpol", "--wait=false")
	})

	t.Run("an HPA scales a Deployment up and down", func(t *testing.T) {
		// The simulated containers use the CPU their pod's
		// metrics.minik.dev/usage annotation gives: 200m of a 100m request.
		kubectlApply(t, kc, `apiVersion: apps/v1
kind: Deployment
metadata: {name: busy}
spec:
  replicas: 1
  selector: {matchLabels: {app: busy}}
  template:
    metadata:
      labels: {app: busy}
      annotations: {metrics.minik.dev/usage: "*=cpu:200m"}
    spec:
      containers:
      - {name: busy, image: "busybox:1.36", command: [sleep, "3600"], resources: {requests: {cpu: 100m}}}
`)
		if out := kubectl(t, kc, "autoscale", "deployment", "busy", "--cpu=50%", "--min=1", "--max=3"); out != "horizontalpodautoscaler.autoscaling/busy autoscaled\n" {
			t.Errorf("autoscale printed %q", out)
		}
		kubectl(t, kc, "wait", "--for=jsonpath={.spec.replicas}=3", "deployment/busy", "--timeout=180s")
		// Scale down without kube's five-minute stabilization window, once
		// the pods idle.
		kubectl(t, kc, "patch", "hpa", "busy", "--type=merge", "-p", `{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":0}}}}`)
		kubectl(t, kc, "patch", "deployment", "busy", "-p", `{"spec":{"template":{"metadata":{"annotations":{"metrics.minik.dev/usage":"*=cpu:1m"}}}}}`)
		kubectl(t, kc, "wait", "--for=jsonpath={.spec.replicas}=1", "deployment/busy", "--timeout=180s")
		out := kubectl(t, kc, "get", "hpa", "busy")
		if header, _, _ := strings.Cut(out, "\n"); strings.Join(strings.Fields(header), " ") != "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE" {
			t.Errorf("get hpa printed\n%s", out)
		}
	})
}
