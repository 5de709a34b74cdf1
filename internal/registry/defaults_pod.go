package registry

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The pod defaults below follow the generated defaulters of core/v1: they run
// wherever a PodSpec appears (Pods, and the pod templates of Deployments and
// ReplicaSets). defaultPod adds the few that only Pods get.

// defaultPod applies the Pod-only defaults, then the PodSpec defaults.
func defaultPod(pod *corev1.Pod) {
	spec := &pod.Spec
	// Requests default to limits, on Pods only (not on templates).
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			requestsFromLimits(&cs[i].Resources)
		}
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = new(corev1.DefaultEnableServiceLinks)
	}
	if spec.HostNetwork {
		for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
			for i := range cs {
				for j := range cs[i].Ports {
					if cs[i].Ports[j].HostPort == 0 {
						cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
	defaultPodSpec(spec)
	defaultPodStatusIPs(&pod.Status)
}

func requestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = q.DeepCopy()
		}
	}
}

// defaultPodStatusIPs keeps status.podIP/podIPs and hostIP/hostIPs in step,
// as the v1 conversion of kube-apiserver does.
func defaultPodStatusIPs(st *corev1.PodStatus) {
	if st.PodIP != "" && len(st.PodIPs) == 0 {
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
	if st.PodIP == "" && len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	}
	if st.HostIP != "" && len(st.HostIPs) == 0 {
		st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
	}
	if st.HostIP == "" && len(st.HostIPs) > 0 {
		st.HostIP = st.HostIPs[0].IP
	}
}

// defaultPodTemplateSpec applies the PodSpec defaults of a pod template.
func defaultPodTemplateSpec(t *corev1.PodTemplateSpec) {
	defaultPodSpec(&t.Spec)
}

// defaultPodSpec applies the defaults every PodSpec gets.
func defaultPodSpec(spec *corev1.PodSpec) {
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = new(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	// The deprecated serviceAccount field mirrors serviceAccountName.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName

	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundResourceList(spec.Overhead)
	if spec.Resources != nil {
		roundResourceList(spec.Resources.Limits)
		roundResourceList(spec.Resources.Requests)
	}
}

func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		} else {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil {
			if vf.FieldRef != nil {
				defaultObjectFieldSelector(vf.FieldRef)
			}
			if vf.FileKeyRef != nil && vf.FileKeyRef.Optional == nil {
				vf.FileKeyRef.Optional = new(false)
			}
		}
	}
	roundResourceList(c.Resources.Limits)
	roundResourceList(c.Resources.Requests)
	defaultProbe(c.LivenessProbe)
	defaultProbe(c.ReadinessProbe)
	defaultProbe(c.StartupProbe)
	if c.Lifecycle != nil {
		defaultLifecycleHandler(c.Lifecycle.PostStart)
		defaultLifecycleHandler(c.Lifecycle.PreStop)
	}
}

// imageTag returns the tag kubelet would pull for an image reference:
// "latest" when neither a tag nor a digest is given, "" when the reference
// cannot be parsed or only has a digest.
func imageTag(image string) string {
	name, digest, hasDigest := strings.Cut(image, "@")
	if image == "" || strings.ToLower(name) != name && !hasUpperInHost(name) {
		return ""
	}
	tag := ""
	slash := strings.LastIndex(name, "/")
	if colon := strings.LastIndex(name, ":"); colon > slash {
		tag = name[colon+1:]
	}
	if tag == "" && (!hasDigest || digest == "") {
		return "latest"
	}
	return tag
}

// hasUpperInHost reports whether the only upper-case letters of a reference
// are in its registry host, which may be mixed case ("Registry.example:5000/app").
func hasUpperInHost(name string) bool {
	host, rest, ok := strings.Cut(name, "/")
	if !ok || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return false
	}
	return strings.ToLower(rest) == rest
}

func defaultObjectFieldSelector(s *corev1.ObjectFieldSelector) {
	if s.APIVersion == "" {
		s.APIVersion = "v1"
	}
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = new("")
	}
}

func defaultLifecycleHandler(h *corev1.LifecycleHandler) {
	if h != nil {
		defaultHTTPGet(h.HTTPGet)
	}
}

func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

func defaultVolume(v *corev1.Volume) {
	if noVolumeSource(&v.VolumeSource) {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	src := &v.VolumeSource
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = new(corev1.SecretVolumeSourceDefaultMode)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = new(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if src.DownwardAPI != nil {
		if src.DownwardAPI.DefaultMode == nil {
			src.DownwardAPI.DefaultMode = new(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardAPIItems(src.DownwardAPI.Items)
	}
	if src.Projected != nil {
		if src.Projected.DefaultMode == nil {
			src.Projected.DefaultMode = new(corev1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range src.Projected.Sources {
			s := &src.Projected.Sources[i]
			if s.DownwardAPI != nil {
				defaultDownwardAPIItems(s.DownwardAPI.Items)
			}
			if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
				s.ServiceAccountToken.ExpirationSeconds = new(int64(3600))
			}
		}
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = new(corev1.HostPathUnset)
	}
	if src.Ephemeral != nil && src.Ephemeral.VolumeClaimTemplate != nil {
		s := &src.Ephemeral.VolumeClaimTemplate.Spec
		if s.VolumeMode == nil {
			s.VolumeMode = new(corev1.PersistentVolumeFilesystem)
		}
		roundResourceList(s.Resources.Limits)
		roundResourceList(s.Resources.Requests)
	}
}

func defaultDownwardAPIItems(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if items[i].FieldRef != nil {
			defaultObjectFieldSelector(items[i].FieldRef)
		}
	}
}

// noVolumeSource reports whether no volume source is set: every field of
// VolumeSource is a pointer to one kind of source.
func noVolumeSource(src *corev1.VolumeSource) bool {
	v := reflect.ValueOf(src).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			return false
		}
	}
	return true
}

// roundResourceList rounds quantities up to milli precision, as
// kube-apiserver does for every resource list.
func roundResourceList(l corev1.ResourceList) {
	for name, q := range l {
		q.RoundUp(-3)
		l[name] = q
	}
}
