package cli

import (
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
)

// ConfigFlags are kubectl's global connection flags. Loading follows
// client-go's rules: --kubeconfig, else $KUBECONFIG (a list of files,
// merged), else ~/.kube/config; the override flags (--context, -n,
// --server, --token, --certificate-authority, --client-certificate,
// --client-key, --tls-server-name, --as, ...) are client-go's own,
// bound with clientcmd.BindOverrideFlags, and override what was loaded.
type ConfigFlags struct {
	KubeConfig string
	Overrides  clientcmd.ConfigOverrides
}

// NewConfigFlags returns the flags with kubectl's defaults.
func NewConfigFlags() *ConfigFlags {
	return &ConfigFlags{Overrides: clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}}
}

// overrideFlagNames are client-go's recommended override flags with
// kubectl's shorthands and wording, and without the ones kubectl does not
// offer (--proxy-url).
func overrideFlagNames() clientcmd.ConfigOverrideFlags {
	names := clientcmd.RecommendedConfigOverrideFlags("")
	names.ClusterOverrideFlags.APIServer.ShortName = "s"
	names.ClusterOverrideFlags.ProxyURL.LongName = ""
	names.AuthOverrideFlags.Impersonate.Description = "Username to impersonate for the operation. User could be a regular user or a service account in a namespace."
	names.AuthOverrideFlags.ImpersonateUID.Description = "UID to impersonate for the operation."
	return names
}

// AddFlags binds the flags to fs (the root command's persistent flags).
func (f *ConfigFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.KubeConfig, "kubeconfig", f.KubeConfig, "Path to the kubeconfig file to use for CLI requests.")
	clientcmd.BindOverrideFlags(&f.Overrides, fs, overrideFlagNames())
}

// ToRawKubeConfigLoader returns the merged client configuration the flags
// describe; nothing is read until it is used.
func (f *ConfigFlags) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.KubeConfig
	overrides := f.Overrides
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &overrides)
}
