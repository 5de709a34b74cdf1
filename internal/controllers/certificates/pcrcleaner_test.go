package certificates_test

import (
	"context"
	"encoding/base64"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	clocktesting "k8s.io/utils/clock/testing"

	"minik/internal/controllers"
	"minik/internal/controllers/certificates"
	"minik/internal/controllers/ctrltest"
	"minik/internal/testserver"
)

// TestPCRCleanerDeletesOldRequests: a PodCertificateRequest goes once it
// is fifteen minutes old, not before (on the cleaner's clock).
func TestPCRCleanerDeletesOldRequests(t *testing.T) {
	srv := testserver.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := srv.Client(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stub, err := base64.StdEncoding.DecodeString("MH8wMwIBADAAMCowBQYDK2VwAyEALCKnJb9ae23MBFjf1egVjJZvqxfx2KepydI7gv6LFyqgADAFBgMrZXADQQBuJFtVs0rYbGvb/qIcXpYeEPh0OqnW4++caaKuYFsyhzI9o5/XZKZwaHhjM4j3cMIU2tSzufiD9N+RJU3PDqEC")
	if err != nil {
		t.Fatal(err)
	}
	pcr, err := cs.CertificatesV1().PodCertificateRequests("demo").Create(ctx, &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "req"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/s", PodName: "p", PodUID: "u1", ServiceAccountName: "default", ServiceAccountUID: "u2",
			NodeName: "n", NodeUID: "u3", MaxExpirationSeconds: new(int32(86400)), StubPKCS10Request: stub},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(pcr.CreationTimestamp.Time)
	factory := informers.NewSharedInformerFactory(cs, 0)
	c, err := certificates.NewPCRCleaner(&controllers.Context{Client: cs, Informers: factory, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	cleaner := c.(*certificates.PCRCleaner)
	factory.Start(ctx.Done())
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	lister := factory.Certificates().V1().PodCertificateRequests().Lister()
	ctrltest.Wait(t, "the request in the cache", func() bool {
		_, err := lister.PodCertificateRequests("demo").Get("req")
		return err == nil
	})
	clk.Step(certificates.PCRThreshold - 1)
	cleaner.Clean(ctx)
	if _, err := cs.CertificatesV1().PodCertificateRequests("demo").Get(ctx, "req", metav1.GetOptions{}); err != nil {
		t.Fatalf("a request younger than the threshold went: %v", err)
	}
	clk.Step(2)
	cleaner.Clean(ctx)
	if _, err := cs.CertificatesV1().PodCertificateRequests("demo").Get(ctx, "req", metav1.GetOptions{}); err == nil {
		t.Fatal("a request older than the threshold stayed")
	}
}
