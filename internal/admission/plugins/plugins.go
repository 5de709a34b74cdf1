// Package plugins assembles minikd's admission chain: the built-in plugins
// kube-apiserver enables by default that minik implements, the admission
// webhooks and ValidatingAdmissionPolicy, in kube's order, and the
// informers (over a loopback client of the API server) they read.
//
// Mutating phase:   NamespaceLifecycle, LimitRanger, ServiceAccount,
//
//	Priority, DefaultTolerationSeconds, DefaultStorageClass, RuntimeClass,
//	MutatingAdmissionWebhook
//
// Validating phase: NamespaceLifecycle (deletions), LimitRanger,
//
//	ServiceAccount, Priority, RuntimeClass, CertificateApproval, CertificateSigning,
//	ClusterTrustBundleAttest, CertificateSubjectRestriction,
//	ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ResourceQuota
//
// Schema validation (the resource's strategy) runs between the phases, in
// the API's REST layer.
package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"minik/internal/admission"
	"minik/internal/admission/cel"
	"minik/internal/admission/policy"
	"minik/internal/admission/quota"
	"minik/internal/admission/webhook"
	"minik/internal/auth"
	"minik/internal/registry"
	"minik/internal/syncwait"
)

// Plugin names, as kube names them, in chain order.
const (
	NamespaceLifecycle       = "NamespaceLifecycle"
	LimitRanger              = "LimitRanger"
	ServiceAccount           = "ServiceAccount"
	Priority                 = "Priority"
	DefaultTolerationSeconds = "DefaultTolerationSeconds"
	DefaultStorageClass      = "DefaultStorageClass"
	RuntimeClass             = "RuntimeClass"
	// The certificates.k8s.io plugins, checking the approve, sign and
	// attest verbs on signers and the subject of client CSRs.
	CertificateApproval           = "CertificateApproval"
	CertificateSigning            = "CertificateSigning"
	ClusterTrustBundleAttest      = "ClusterTrustBundleAttest"
	CertificateSubjectRestriction = "CertificateSubjectRestriction"
	MutatingAdmissionWebhook      = "MutatingAdmissionWebhook"
	ValidatingAdmissionPolicy     = "ValidatingAdmissionPolicy"
	ValidatingAdmissionWebhook    = "ValidatingAdmissionWebhook"
	ResourceQuota                 = "ResourceQuota"
)

// Names lists the plugins minikd runs, in order.
func Names() []string {
	return []string{NamespaceLifecycle, LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds,
		DefaultStorageClass, RuntimeClass, CertificateApproval, CertificateSigning, ClusterTrustBundleAttest, CertificateSubjectRestriction,
		MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ResourceQuota}
}

// immortalNamespaces may not be deleted.
var immortalNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true}

// Config configures the admission chain.
type Config struct {
	// RESTConfig is the loopback client configuration the plugins read and
	// write the API with (kube's system:apiserver identity). Required.
	RESTConfig *rest.Config
	// Resources are the served resources: their defaulting applies to
	// objects a webhook patched, and their kinds resolve policy paramKinds.
	// Nil means registry.All().
	Resources []*registry.Resource
	// Disabled names plugins not to run, as kube-apiserver's
	// --disable-admission-plugins.
	Disabled []string
	// NamespaceLifecycle, when set, is the NamespaceLifecycle plugin to
	// use (the API server's, reading namespaces from storage); otherwise
	// one reading the API is built. Either reads the informer cache first
	// (Cached), the authority only when the cache cannot be trusted.
	NamespaceLifecycle *admission.NamespaceLifecycle
	// Validators are further validating plugins (the API server's own:
	// RBAC escalation checks, NodeRestriction), run after ServiceAccount
	// and before the policies and webhooks, where kube runs
	// NodeRestriction.
	Validators []admission.Validator
	// Authorizer is the server's authorizer chain, which the CEL
	// expressions of ValidatingAdmissionPolicies and webhook match
	// conditions ask through their authorizer variable; nil leaves that
	// variable unset. The certificates plugins ask it whether a user may
	// approve, sign or attest for a signer; without one they refuse.
	Authorizer auth.Authorizer
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
}

// Admission is the assembled chain and the informers behind it. Build it
// with New, hand Chain to the API server, then Start it once the API
// serves.
type Admission struct {
	cfg     Config
	client  kubernetes.Interface
	factory informers.SharedInformerFactory
	params  *paramSource
	chain   *admission.Chain
	synced  []cache.InformerSynced
}

// New validates cfg and builds the chain. Nothing is started.
func New(cfg Config) (*Admission, error) {
	if cfg.RESTConfig == nil {
		return nil, errors.New("admission: a loopback REST config is required")
	}
	for _, d := range cfg.Disabled {
		if !slices.Contains(Names(), d) {
			return nil, fmt.Errorf("--disable-admission-plugins: unknown plugin %q", d)
		}
	}
	if cfg.Resources == nil {
		cfg.Resources = registry.All()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	rc := rest.CopyConfig(cfg.RESTConfig)
	rc.QPS, rc.Burst = -1, 0
	rc.UserAgent = "minik-apiserver-loopback"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("admission: loopback client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("admission: loopback dynamic client: %w", err)
	}
	a := &Admission{cfg: cfg, client: client, factory: informers.NewSharedInformerFactory(client, 0)}
	a.params = newParamSource(dyn, cfg.Resources)
	if err := a.build(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Admission) enabled(name string) bool { return !slices.Contains(a.cfg.Disabled, name) }

// want registers an informer and remembers to wait for it.
func (a *Admission) want(inf cache.SharedIndexInformer) {
	a.synced = append(a.synced, inf.HasSynced)
}

func (a *Admission) build() error {
	f := a.factory
	core := f.Core().V1()
	reg := f.Admissionregistration().V1()
	nsInformer := core.Namespaces()
	a.want(nsInformer.Informer())
	nsLister := nsInformer.Lister()
	live := func(ctx context.Context, name string) (*corev1.Namespace, error) {
		return a.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	}
	cached := func(_ context.Context, name string) (*corev1.Namespace, error) { return nsLister.Get(name) }
	// namespaces reads the cache, then the API for one the cache lacks.
	namespaces := func(ctx context.Context, name string) (*corev1.Namespace, error) {
		ns, err := nsLister.Get(name)
		if apierrors.IsNotFound(err) {
			return live(ctx, name)
		}
		return ns, err
	}
	compiler, err := cel.NewCompiler()
	if err != nil {
		return err
	}
	chain := &admission.Chain{}
	if a.enabled(NamespaceLifecycle) {
		nl := a.cfg.NamespaceLifecycle
		if nl == nil {
			nl = &admission.NamespaceLifecycle{Get: live, Immortal: immortalNamespaces, Clock: a.cfg.Clock}
		}
		if nl.Cached == nil {
			nl.Cached = cached
		}
		nl.Mutating = true
		chain.Mutators = append(chain.Mutators, nl)
		chain.Validators = append(chain.Validators, nl)
	}
	if a.enabled(LimitRanger) {
		inf := core.LimitRanges()
		a.want(inf.Informer())
		lr := &admission.LimitRanger{Lister: inf.Lister(), Client: a.client, Clock: a.cfg.Clock}
		chain.Mutators = append(chain.Mutators, lr)
		chain.Validators = append(chain.Validators, lr)
	}
	if a.enabled(ServiceAccount) {
		inf := core.ServiceAccounts()
		a.want(inf.Informer())
		sa := &admission.ServiceAccount{Lister: inf.Lister(), Client: a.client, MountToken: true}
		chain.Mutators = append(chain.Mutators, sa)
		chain.Validators = append(chain.Validators, sa)
	}
	chain.Validators = append(chain.Validators, a.cfg.Validators...)
	if a.enabled(Priority) {
		inf := f.Scheduling().V1().PriorityClasses()
		a.want(inf.Informer())
		p := &admission.Priority{Lister: inf.Lister(), Client: a.client}
		chain.Mutators = append(chain.Mutators, p)
		chain.Validators = append(chain.Validators, p)
	}
	if a.enabled(DefaultTolerationSeconds) {
		chain.Mutators = append(chain.Mutators, &admission.DefaultTolerationSeconds{})
	}
	if a.enabled(DefaultStorageClass) {
		inf := f.Storage().V1().StorageClasses()
		a.want(inf.Informer())
		chain.Mutators = append(chain.Mutators, &admission.DefaultStorageClass{Lister: inf.Lister()})
	}
	if a.enabled(RuntimeClass) {
		inf := f.Node().V1().RuntimeClasses()
		a.want(inf.Informer())
		rc := &admission.RuntimeClass{Lister: inf.Lister(), Client: a.client}
		chain.Mutators = append(chain.Mutators, rc)
		chain.Validators = append(chain.Validators, rc)
	}
	if a.enabled(CertificateApproval) {
		chain.Validators = append(chain.Validators, &admission.CertificateApproval{Authorizer: a.cfg.Authorizer})
	}
	if a.enabled(CertificateSigning) {
		chain.Validators = append(chain.Validators, &admission.CertificateSigning{Authorizer: a.cfg.Authorizer})
	}
	if a.enabled(ClusterTrustBundleAttest) {
		chain.Validators = append(chain.Validators, &admission.ClusterTrustBundleAttest{Authorizer: a.cfg.Authorizer})
	}
	if a.enabled(CertificateSubjectRestriction) {
		chain.Validators = append(chain.Validators, &admission.CertificateSubjectRestriction{})
	}
	var hooks *webhook.Plugins
	if a.enabled(MutatingAdmissionWebhook) || a.enabled(ValidatingAdmissionWebhook) {
		mw, vw := reg.MutatingWebhookConfigurations(), reg.ValidatingWebhookConfigurations()
		svc, eps := core.Services(), f.Discovery().V1().EndpointSlices()
		for _, inf := range []cache.SharedIndexInformer{mw.Informer(), vw.Informer(), svc.Informer(), eps.Informer()} {
			a.want(inf)
		}
		hooks, err = webhook.New(webhook.Config{
			Mutating: mw.Lister(), Validating: vw.Lister(), Namespaces: namespaces,
			Services: svc.Lister(), EndpointSlices: eps.Lister(),
			Default: a.defaulter(), Compiler: compiler, HasSynced: a.HasSynced, Authorizer: a.cfg.Authorizer,
			Logger: a.cfg.Logger.With("plugin", "webhook"),
		})
		if err != nil {
			return err
		}
	}
	if a.enabled(MutatingAdmissionWebhook) {
		chain.Mutators = append(chain.Mutators, hooks.Mutating())
	}
	if a.enabled(ValidatingAdmissionPolicy) {
		pols, binds := reg.ValidatingAdmissionPolicies(), reg.ValidatingAdmissionPolicyBindings()
		a.want(pols.Informer())
		a.want(binds.Informer())
		p, err := policy.New(policy.Config{
			Policies: pols.Lister(), Bindings: binds.Lister(), Namespaces: namespaces,
			Params: a.params, Compiler: compiler, HasSynced: a.HasSynced, Authorizer: a.cfg.Authorizer,
			Logger: a.cfg.Logger.With("plugin", ValidatingAdmissionPolicy),
		})
		if err != nil {
			return err
		}
		chain.Validators = append(chain.Validators, p)
	}
	if a.enabled(ValidatingAdmissionWebhook) {
		chain.Validators = append(chain.Validators, hooks.Validating())
	}
	if a.enabled(ResourceQuota) {
		inf := core.ResourceQuotas()
		a.want(inf.Informer())
		chain.Validators = append(chain.Validators, &admission.ResourceQuota{
			Lister: inf.Lister(), Client: a.client, Registry: quota.NewRegistry(a.cfg.Clock), Clock: a.cfg.Clock,
		})
	}
	a.chain = chain
	return nil
}

// defaulter applies the served resources' defaulting to an object by its
// Go type.
func (a *Admission) defaulter() func(runtime.Object) {
	byType := map[reflect.Type]func(runtime.Object){}
	for _, r := range a.cfg.Resources {
		if r.Strategy.Default == nil {
			continue
		}
		obj, err := clientgoscheme.Scheme.New(r.GroupVersionKind())
		if err != nil {
			continue
		}
		byType[reflect.TypeOf(obj)] = r.Strategy.Default
	}
	return func(obj runtime.Object) {
		if d, ok := byType[reflect.TypeOf(obj)]; ok {
			d(obj)
		}
	}
}

// Chain is the admission chain to hand to the API server.
func (a *Admission) Chain() *admission.Chain { return a.chain }

// HasSynced tells whether every informer the plugins read has synced.
func (a *Admission) HasSynced() bool {
	for _, s := range a.synced {
		if !s() {
			return false
		}
	}
	return true
}

// Start runs the informers until ctx is done. The API must be serving:
// the informers list and watch it through the loopback client. Requests
// admitted before the caches fill wait for them (webhooks and policies,
// up to 10 seconds) or read the API live (namespaces, service accounts,
// limit ranges, quotas).
func (a *Admission) Start(ctx context.Context) error {
	a.factory.Start(ctx.Done())
	a.params.start(ctx)
	<-ctx.Done()
	a.factory.Shutdown()
	a.params.shutdown()
	return nil
}

// WaitForCacheSync waits until the informers have synced, ctx is done or
// timeout passes; it tells whether they synced.
func (a *Admission) WaitForCacheSync(ctx context.Context, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return syncwait.Synced(ctx, a.synced...)
}
