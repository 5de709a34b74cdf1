package certificates

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"minik/internal/controllers"
)

// PCRCleanerName is the PodCertificateRequest cleaner's name in
// --controllers, kube-controller-manager's (it has no alias).
const PCRCleanerName = "podcertificaterequest-cleaner-controller"

// kube's PodCertificateRequest cleaner timing.
const (
	// PCRThreshold is how long a PodCertificateRequest stays: every
	// flow is expected to finish sooner.
	PCRThreshold = 15 * time.Minute
	// PCRCleanerInterval is how often the cleaner looks.
	PCRCleanerInterval = 5 * time.Minute
)

// PCRCleaner deletes PodCertificateRequests older than PCRThreshold,
// whatever their state.
type PCRCleaner struct {
	client client
	logger *slog.Logger
	clock  clock.WithTicker
	lister certificateslisters.PodCertificateRequestLister
	synced cache.InformerSynced
}

// NewPCRCleaner builds the PodCertificateRequest cleaner. It has the
// controllers.Constructor signature.
func NewPCRCleaner(cc *controllers.Context) (controllers.Controller, error) {
	switch {
	case cc == nil:
		return nil, fmt.Errorf("%s: a controller context is required", PCRCleanerName)
	case cc.Client == nil || cc.Informers == nil:
		return nil, fmt.Errorf("%s: a client and an informer factory are required", PCRCleanerName)
	}
	logger, clk := loggerAndClock(cc)
	inf := cc.Informers.Certificates().V1().PodCertificateRequests()
	return &PCRCleaner{client: cc.Client, logger: logger, clock: clk, lister: inf.Lister(), synced: inf.Informer().HasSynced}, nil
}

// Run cleans every PCRCleanerInterval until ctx is done.
func (c *PCRCleaner) Run(ctx context.Context, _ int) {
	every(ctx, c.synced, c.clock, PCRCleanerInterval, c.Clean)
}

// Clean deletes the PodCertificateRequests older than PCRThreshold,
// each only if it is still the one listed (a UID precondition).
func (c *PCRCleaner) Clean(ctx context.Context) {
	pcrs, err := c.lister.List(labels.Everything())
	if err != nil {
		c.logger.Error("Unable to list PodCertificateRequests", "err", err)
		return
	}
	now := c.clock.Now()
	for _, pcr := range pcrs {
		if now.Before(pcr.CreationTimestamp.Add(PCRThreshold)) {
			continue
		}
		uid := pcr.UID
		err := c.client.CertificatesV1().PodCertificateRequests(pcr.Namespace).Delete(ctx, pcr.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			c.logger.Error("Error while attempting to clean PodCertificateRequest", "pcr", pcr.Namespace+"/"+pcr.Name,
				"err", fmt.Errorf("unable to delete PodCertificateRequest %q: %w", pcr.Namespace+"/"+pcr.Name, err))
		}
	}
}
