package cli

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Factory builds, once per invocation and on first use, the clients every
// command shares: the REST config from the global flags, a discovery-backed
// RESTMapper (with short names), the category expander behind "all", a
// dynamic client and per-group-version REST clients.
type Factory struct {
	flags   *ConfigFlags
	streams IOStreams

	loaderOnce sync.Once
	loader     clientcmd.ClientConfig

	mu         sync.Mutex
	restConfig *rest.Config
	discovery  discovery.CachedDiscoveryInterface
	mapper     meta.RESTMapper
	dynamic    dynamic.Interface
	clientset  kubernetes.Interface
	clients    map[schema.GroupVersion]rest.Interface
}

// NewFactory returns a factory reading its configuration from flags;
// server warnings are written to streams.ErrOut.
func NewFactory(flags *ConfigFlags, streams IOStreams) *Factory {
	return &Factory{flags: flags, streams: streams, clients: map[schema.GroupVersion]rest.Interface{}}
}

// ToRawKubeConfigLoader returns the merged kubeconfig of the global flags.
func (f *Factory) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	f.loaderOnce.Do(func() { f.loader = f.flags.ToRawKubeConfigLoader() })
	return f.loader
}

// Namespace returns the namespace of this invocation and whether it was
// given explicitly with -n (which then must match the manifests').
func (f *Factory) Namespace() (string, bool, error) {
	return f.ToRawKubeConfigLoader().Namespace()
}

// ToRESTConfig returns the client configuration of this invocation.
func (f *Factory) ToRESTConfig() (*rest.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restConfigLocked()
}

func (f *Factory) restConfigLocked() (*rest.Config, error) {
	if f.restConfig != nil {
		return f.restConfig, nil
	}
	cfg, err := f.ToRawKubeConfigLoader().ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS = 50
	}
	if cfg.Burst == 0 {
		cfg.Burst = 300
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "minikctl"
	}
	cfg.WarningHandler = rest.NewWarningWriter(f.streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	f.restConfig = cfg
	return cfg, nil
}

func (f *Factory) discoveryLocked() (discovery.CachedDiscoveryInterface, error) {
	if f.discovery != nil {
		return f.discovery, nil
	}
	cfg, err := f.restConfigLocked()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f.discovery = memory.NewMemCacheClient(dc)
	return f.discovery, nil
}

// ToRESTMapper returns the RESTMapper built from the server's discovery,
// expanding short names ("deploy", "po", "svc").
func (f *Factory) ToRESTMapper() (meta.RESTMapper, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mapper != nil {
		return f.mapper, nil
	}
	dc, err := f.discoveryLocked()
	if err != nil {
		return nil, err
	}
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(dc)
	f.mapper = restmapper.NewShortcutExpander(deferred, dc, func(msg string) {
		fmt.Fprintf(f.streams.ErrOut, "Warning: %s\n", msg)
	})
	return f.mapper, nil
}

// CategoryExpander returns the expander of discovery categories ("all").
func (f *Factory) CategoryExpander() (restmapper.CategoryExpander, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	dc, err := f.discoveryLocked()
	if err != nil {
		return nil, err
	}
	return restmapper.NewDiscoveryCategoryExpander(dc), nil
}

// DynamicClient returns a dynamic client for the invocation's server.
func (f *Factory) DynamicClient() (dynamic.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dynamic != nil {
		return f.dynamic, nil
	}
	cfg, err := f.restConfigLocked()
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f.dynamic = dc
	return dc, nil
}

// RESTClientFor returns a REST client for one group version, for requests
// that need their own Accept header (server-side tables) or raw bodies.
// Error responses decode to *errors.StatusError.
func (f *Factory) RESTClientFor(gv schema.GroupVersion) (rest.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.clients[gv]; ok {
		return c, nil
	}
	base, err := f.restConfigLocked()
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(base)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	f.clients[gv] = c
	return c, nil
}

// KubernetesClientSet returns the typed clientset of the invocation's
// server (describers, logs, rollouts).
func (f *Factory) KubernetesClientSet() (kubernetes.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clientset != nil {
		return f.clientset, nil
	}
	cfg, err := f.restConfigLocked()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f.clientset = cs
	return cs, nil
}

// Discovery returns the cached discovery client (api-resources,
// api-versions, version).
func (f *Factory) Discovery() (discovery.CachedDiscoveryInterface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.discoveryLocked()
}
