package nodeagent

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReasonSysctlForbidden is the reason of a pod the node rejects for a
// sysctl it does not allow, as the kubelet's sysctl admission says.
const ReasonSysctlForbidden = "SysctlForbidden"

// safeSysctls are the sysctls the kubelet allows without
// --allowed-unsafe-sysctls (its safe set, namespaced per pod).
var safeSysctls = map[string]bool{
	"kernel.shm_rmid_forced":              true,
	"net.ipv4.ip_local_port_range":        true,
	"net.ipv4.tcp_syncookies":             true,
	"net.ipv4.ping_group_range":           true,
	"net.ipv4.ip_unprivileged_port_start": true,
	"net.ipv4.ip_local_reserved_ports":    true,
	"net.ipv4.tcp_keepalive_time":         true,
	"net.ipv4.tcp_fin_timeout":            true,
	"net.ipv4.tcp_keepalive_intvl":        true,
	"net.ipv4.tcp_keepalive_probes":       true,
	"net.ipv4.tcp_rmem":                   true,
	"net.ipv4.tcp_wmem":                   true,
}

// normalizeSysctl writes a sysctl's name with dots, as the kubelet reads
// "kernel/shm_rmid_forced" (a slash separates when the name has one).
func normalizeSysctl(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	// A dot in a slash-separated name is part of a component (an
	// interface name); the kubelet swaps the two separators.
	return strings.Map(func(r rune) rune {
		switch r {
		case '/':
			return '.'
		case '.':
			return '/'
		}
		return r
	}, name)
}

// admitPod is the node's admission of a pod it is to run: the reason and
// message of a rejection, or "" when the pod may run.
func admitPod(pod *corev1.Pod) (string, string) {
	if sc := pod.Spec.SecurityContext; sc != nil {
		for _, s := range sc.Sysctls {
			if !safeSysctls[normalizeSysctl(s.Name)] {
				return ReasonSysctlForbidden, fmt.Sprintf("forbidden sysctl: %q not allowlisted", s.Name)
			}
		}
	}
	return "", ""
}

// podSysctls are the pod's sysctls by their dotted names.
func podSysctls(pod *corev1.Pod) map[string]string {
	sc := pod.Spec.SecurityContext
	if sc == nil || len(sc.Sysctls) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, s := range sc.Sysctls {
		out[normalizeSysctl(s.Name)] = s.Value
	}
	return out
}
