package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
	"minik/internal/syncwait"
)

// kube's cleaner ages.
const (
	// CleanerInterval is how often the cleaner looks at every CSR.
	CleanerInterval = time.Hour
	// ApprovedExpiration is how long an issued CSR stays after approval.
	ApprovedExpiration = time.Hour
	// DeniedExpiration is how long a denied or failed CSR stays.
	DeniedExpiration = time.Hour
	// PendingExpiration is how long a CSR stays unhandled, or approved
	// but not issued.
	PendingExpiration = 24 * time.Hour
)

// Cleaner is the csrcleaner controller.
type Cleaner struct {
	client client
	logger *slog.Logger
	clock  clock.WithTicker
	lister certificateslisters.CertificateSigningRequestLister
	synced cache.InformerSynced
}

// NewCleaner builds the csrcleaner controller. It has the
// controllers.Constructor signature.
func NewCleaner(cc *controllers.Context) (controllers.Controller, error) {
	switch {
	case cc == nil:
		return nil, fmt.Errorf("%s: a controller context is required", CleanerName)
	case cc.Client == nil || cc.Informers == nil:
		return nil, fmt.Errorf("%s: a client and an informer factory are required", CleanerName)
	}
	logger, clk := loggerAndClock(cc)
	inf := cc.Informers.Certificates().V1().CertificateSigningRequests()
	return &Cleaner{client: cc.Client, logger: logger, clock: clk, lister: inf.Lister(), synced: inf.Informer().HasSynced}, nil
}

// Run cleans every CleanerInterval until ctx is done, first once the
// cache has synced. kube runs a loop per worker; one is enough here.
func (c *Cleaner) Run(ctx context.Context, _ int) {
	every(ctx, c.synced, c.clock, CleanerInterval, c.Clean)
}

// every runs clean once the cache has synced, then every interval until
// ctx is done.
func every(ctx context.Context, synced cache.InformerSynced, clk clock.WithTicker, interval time.Duration, clean func(context.Context)) {
	if !syncwait.Synced(ctx, synced) {
		return
	}
	t := clk.NewTicker(interval)
	defer t.Stop()
	for {
		clean(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// loggerAndClock are a controller context's logger and clock, or the
// defaults.
func loggerAndClock(cc *controllers.Context) (*slog.Logger, clock.WithTicker) {
	logger, clk := cc.Logger, cc.Clock
	if logger == nil {
		logger = slog.Default()
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return logger, clk
}

// Clean deletes every CSR that is done with.
func (c *Cleaner) Clean(ctx context.Context) {
	csrs, err := c.lister.List(labels.Everything())
	if err != nil {
		c.logger.Error("Unable to list CSRs", "err", err)
		return
	}
	now := c.clock.Now()
	for _, csr := range csrs {
		why := expiredReason(csr, now)
		if why == "" {
			continue
		}
		c.logger.Info(why, "csr", csr.Name)
		if err := c.client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			c.logger.Error("Error while attempting to clean CSR", "csr", csr.Name, "err", fmt.Errorf("unable to delete CSR %q: %w", csr.Name, err))
		}
	}
}

// expiredReason tells why a CSR is to be deleted at now (kube's log
// line), or "" when it stays.
func expiredReason(csr *certificatesv1.CertificateSigningRequest, now time.Time) string {
	older := func(t metav1.Time, d time.Duration) bool { return !t.IsZero() && now.Sub(t.Time) > d }
	issued := len(csr.Status.Certificate) > 0
	for _, cond := range csr.Status.Conditions {
		if issued && cond.Type == certificatesv1.CertificateApproved && older(cond.LastUpdateTime, ApprovedExpiration) {
			return "Cleaning CSR as it is more than approvedExpiration duration old and approved."
		}
	}
	for _, cond := range csr.Status.Conditions {
		if cond.Type == certificatesv1.CertificateDenied && older(cond.LastUpdateTime, DeniedExpiration) {
			return "Cleaning CSR as it is more than deniedExpiration duration old and denied."
		}
	}
	for _, cond := range csr.Status.Conditions {
		if cond.Type == certificatesv1.CertificateFailed && older(cond.LastUpdateTime, DeniedExpiration) {
			return "Cleaning CSR as it is more than deniedExpiration duration old and failed."
		}
	}
	if len(csr.Status.Conditions) == 0 && older(csr.CreationTimestamp, PendingExpiration) {
		return "Cleaning CSR as it is more than pendingExpiration duration old and unhandled."
	}
	for _, cond := range csr.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved && issued && certificateExpired(csr.Status.Certificate, now) {
			return "Cleaning CSR as the associated certificate is expired."
		}
	}
	for _, cond := range csr.Status.Conditions {
		if !issued && cond.Type == certificatesv1.CertificateApproved && older(cond.LastUpdateTime, PendingExpiration) {
			return "Cleaning CSR as it is approved but unissued for more than pendingExpiration duration."
		}
	}
	return ""
}

func certificateExpired(data []byte, now time.Time) bool {
	block, _ := pem.Decode(data)
	if block == nil {
		return false
	}
	certs, err := x509.ParseCertificates(block.Bytes)
	if err != nil || len(certs) == 0 {
		return false
	}
	return now.After(certs[0].NotAfter)
}
