// Package certificates holds minik's CertificateSigningRequest
// controllers, as kube-controller-manager's of the same names:
//
//   - csrapproving approves kubelet client CSRs (signer
//     kubernetes.io/kube-apiserver-client-kubelet) whose requestor may
//     create certificatesigningrequests/selfnodeclient (for its own node)
//     or /nodeclient, asked with a SubjectAccessReview (kube's sarapprove);
//   - csrsigning issues approved CSRs of the signers
//     kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet,
//     kubelet-serving and legacy-unknown with the cluster CA, after each
//     signer's checks of usages and subject, for at most a year
//     (--cluster-signing-duration's default) or the CSR's
//     expirationSeconds; a CSR its signer refuses gets a Failed condition;
//   - csrcleaner deletes CSRs that are done with: issued or denied or
//     failed for an hour, pending or approved but not issued for a day,
//     or whose certificate expired;
//   - podcertificaterequest-cleaner-controller deletes
//     PodCertificateRequests fifteen minutes old.
//
// They run as the controller manager's identity, whose role includes
// kube's system:controller:certificate-controller rules (approve and
// sign on those signers).
package certificates

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	certificateslisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"minik/internal/controllers"
)

// The controllers' names in --controllers (kube-controller-manager's
// aliases of certificatesigningrequest-*-controller).
const (
	ApprovingName = "csrapproving"
	SigningName   = "csrsigning"
	CleanerName   = "csrcleaner"
)

// handler acts on one CSR that has no certificate yet; csr is a copy it
// may change.
type handler func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error

// csrController is kube's CertificateController: every CSR event queues
// the CSR's name; a CSR without a certificate is handed to the handler.
type csrController struct {
	name   string
	logger *slog.Logger
	lister certificateslisters.CertificateSigningRequestLister
	synced cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	handle handler
}

func newCSRController(name string, cc *controllers.Context, h handler) (*csrController, error) {
	switch {
	case cc == nil:
		return nil, fmt.Errorf("%s: a controller context is required", name)
	case cc.Client == nil:
		return nil, fmt.Errorf("%s: a client is required", name)
	case cc.Informers == nil:
		return nil, fmt.Errorf("%s: an informer factory is required", name)
	}
	logger := cc.Logger
	if logger == nil {
		logger = slog.Default()
	}
	inf := cc.Informers.Certificates().V1().CertificateSigningRequests()
	c := &csrController{
		name: name, logger: logger, lister: inf.Lister(), synced: inf.Informer().HasSynced,
		queue: controllers.NewQueue[string]("certificate", cc.Clock, nil), handle: h,
	}
	enqueue := func(obj any) {
		if csr, ok := controllers.Deleted[*certificatesv1.CertificateSigningRequest](obj); ok {
			c.queue.Add(csr.Name)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, fmt.Errorf("%s: certificatesigningrequest handler: %w", name, err)
	}
	return c, nil
}

// Run reconciles with workers until ctx is done.
func (c *csrController) Run(ctx context.Context, workers int) {
	controllers.Workers[string]{
		Synced:    []cache.InformerSynced{c.synced},
		Queue:     c.queue,
		Reconcile: c.sync,
		OnError: func(name string, err error) {
			var ign ignorable
			if errors.As(err, &ign) {
				c.logger.Debug("sync certificate request", "csr", name, "err", err)
				return
			}
			c.logger.Warn("sync certificate request", "csr", name, "err", err)
		},
		Logger: c.logger,
	}.Run(ctx, workers)
}

func (c *csrController) sync(ctx context.Context, name string) error {
	csr, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(csr.Status.Certificate) > 0 {
		return nil
	}
	return c.handle(ctx, csr.DeepCopy())
}

// ignorable is a failure retried quietly (kube's IgnorableError): a
// recognised CSR whose requestor may not have it approved yet.
type ignorable string

func (e ignorable) Error() string { return string(e) }

// approval tells whether a CSR has an Approved and a Denied condition.
func approval(csr *certificatesv1.CertificateSigningRequest) (approved, denied bool) {
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		}
	}
	return approved, denied
}

// hasTrueCondition is kube's HasTrueCondition: a condition of type t
// whose status is True or unset.
func hasTrueCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && (c.Status == "" || c.Status == corev1.ConditionTrue) {
			return true
		}
	}
	return false
}

// client is what the handlers write with.
type client = kubernetes.Interface
