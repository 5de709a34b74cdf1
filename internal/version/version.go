// Package version tells which Kubernetes API version minik serves and
// minik's own version.
package version

import "minik/internal/api"

// Kubernetes is the Kubernetes release whose API minik serves.
const (
	KubernetesMajor = "1"
	KubernetesMinor = "37"
	Kubernetes      = "v1.37.2"
)

// Minik is minik's own version, set at build time with
// -ldflags "-X minik/internal/version.Minik=...".
var Minik = "0.1.0"

// Info is what /version reports: the Kubernetes version, with minik's in
// the build metadata, so that kubectl sees no version skew.
func Info() api.VersionInfo {
	return api.VersionInfo{
		Major:          KubernetesMajor,
		Minor:          KubernetesMinor,
		EmulationMajor: KubernetesMajor,
		EmulationMinor: KubernetesMinor,
		GitVersion:     Kubernetes + "+minik." + Minik,
		GitCommit:      "",
		GitTreeState:   "clean",
		BuildDate:      "1970-01-01T00:00:00Z",
	}
}
