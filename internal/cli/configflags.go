package cli

import (
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
)

// ConfigFlags are kubectl's global connection flags. Loading follows
// client-go's rules: --kubeconfig, else $KUBECONFIG (a list of files,
// merged), else ~/.kube/config; the other flags override what was loaded.
type ConfigFlags struct {
	KubeConfig            string
	Context               string
	Namespace             string
	RequestTimeout        string
	Cluster               string
	User                  string
	Server                string
	Token                 string
	InsecureSkipTLSVerify bool
	// Impersonate, ImpersonateUID and ImpersonateGroups are --as,
	// --as-uid and --as-group: the requests act as that user (the
	// server checks that the caller may impersonate it).
	Impersonate       string
	ImpersonateUID    string
	ImpersonateGroups []string
}

// NewConfigFlags returns the flags with kubectl's defaults.
func NewConfigFlags() *ConfigFlags {
	return &ConfigFlags{RequestTimeout: "0"}
}

// AddFlags binds the flags to fs (the root command's persistent flags).
func (f *ConfigFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.KubeConfig, "kubeconfig", f.KubeConfig, "Path to the kubeconfig file to use for CLI requests.")
	fs.StringVar(&f.Context, "context", f.Context, "The name of the kubeconfig context to use")
	fs.StringVarP(&f.Namespace, "namespace", "n", f.Namespace, "If present, the namespace scope for this CLI request")
	fs.StringVar(&f.RequestTimeout, "request-timeout", f.RequestTimeout, "The length of time to wait before giving up on a single server request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means don't timeout requests.")
	fs.StringVar(&f.Cluster, "cluster", f.Cluster, "The name of the kubeconfig cluster to use")
	fs.StringVar(&f.User, "user", f.User, "The name of the kubeconfig user to use")
	fs.StringVarP(&f.Server, "server", "s", f.Server, "The address and port of the Kubernetes API server")
	fs.StringVar(&f.Token, "token", f.Token, "Bearer token for authentication to the API server")
	fs.StringVar(&f.Impersonate, "as", f.Impersonate, "Username to impersonate for the operation. User could be a regular user or a service account in a namespace.")
	fs.StringArrayVar(&f.ImpersonateGroups, "as-group", f.ImpersonateGroups, "Group to impersonate for the operation, this flag can be repeated to specify multiple groups.")
	fs.StringVar(&f.ImpersonateUID, "as-uid", f.ImpersonateUID, "UID to impersonate for the operation.")
	fs.BoolVar(&f.InsecureSkipTLSVerify, "insecure-skip-tls-verify", f.InsecureSkipTLSVerify, "If true, the server's certificate will not be checked for validity. This will make your HTTPS connections insecure")
}

// ToRawKubeConfigLoader returns the merged client configuration the flags
// describe; nothing is read until it is used.
func (f *ConfigFlags) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.KubeConfig
	overrides := &clientcmd.ConfigOverrides{
		ClusterDefaults: clientcmd.ClusterDefaults,
		CurrentContext:  f.Context,
		Timeout:         f.RequestTimeout,
	}
	overrides.Context.Namespace = f.Namespace
	overrides.Context.Cluster = f.Cluster
	overrides.Context.AuthInfo = f.User
	overrides.ClusterInfo.Server = f.Server
	overrides.ClusterInfo.InsecureSkipTLSVerify = f.InsecureSkipTLSVerify
	overrides.AuthInfo.Token = f.Token
	overrides.AuthInfo.Impersonate = f.Impersonate
	overrides.AuthInfo.ImpersonateUID = f.ImpersonateUID
	overrides.AuthInfo.ImpersonateGroups = f.ImpersonateGroups
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}
