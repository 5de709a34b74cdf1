package registry

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateContainers checks a pod's regular containers.
func validateContainers(containers []corev1.Container, vols map[string]corev1.VolumeSource, grace *int64, p *field.Path, restart corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range containers {
		c := &containers[i]
		cp := p.Index(i)
		errs = append(errs, validateContainerCommon(c, vols, cp, restart, hostUsers)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		} else {
			names.Insert(c.Name)
		}
		if c.Lifecycle != nil {
			errs = append(errs, validateLifecycle(c.Lifecycle, grace, cp.Child("lifecycle"))...)
		}
		errs = append(errs, validateLivenessProbe(c.LivenessProbe, grace, cp.Child("livenessProbe"))...)
		errs = append(errs, validateReadinessProbe(c.ReadinessProbe, grace, cp.Child("readinessProbe"))...)
		errs = append(errs, validateStartupProbe(c.StartupProbe, grace, cp.Child("startupProbe"))...)
		if c.RestartPolicy != nil {
			errs = append(errs, field.Forbidden(cp.Child("restartPolicy"), "may not be set for non-init containers"))
		}
	}
	return append(errs, checkHostPortConflicts(containers, p)...)
}

// validateInitContainers checks a pod's init containers; their names must
// also differ from the regular containers'.
func validateInitContainers(inits, regular []corev1.Container, vols map[string]corev1.VolumeSource, grace *int64, p *field.Path, restart corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, c := range regular {
		names.Insert(c.Name)
	}
	for i := range inits {
		c := &inits[i]
		cp := p.Index(i)
		errs = append(errs, validateContainerCommon(c, vols, cp, restart, hostUsers)...)
		restartAlways := false
		if c.RestartPolicy != nil {
			if *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				errs = append(errs, field.NotSupported(cp.Child("restartPolicy"), *c.RestartPolicy, []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways}))
			}
			restartAlways = *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		} else if c.Name != "" {
			names.Insert(c.Name)
		}
		errs = append(errs, checkHostPortConflicts([]corev1.Container{*c}, p)...)
		if restartAlways {
			if c.Lifecycle != nil {
				errs = append(errs, validateLifecycle(c.Lifecycle, grace, cp.Child("lifecycle"))...)
			}
			errs = append(errs, validateLivenessProbe(c.LivenessProbe, grace, cp.Child("livenessProbe"))...)
			errs = append(errs, validateReadinessProbe(c.ReadinessProbe, grace, cp.Child("readinessProbe"))...)
			errs = append(errs, validateStartupProbe(c.StartupProbe, grace, cp.Child("startupProbe"))...)
		} else {
			const msg = "may not be set for init containers without restartPolicy=Always"
			if c.Lifecycle != nil {
				errs = append(errs, field.Forbidden(cp.Child("lifecycle"), msg))
			}
			if c.LivenessProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("livenessProbe"), msg))
			}
			if c.ReadinessProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("readinessProbe"), msg))
			}
			if c.StartupProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("startupProbe"), msg))
			}
		}
		if len(c.ResizePolicy) > 0 {
			errs = append(errs, field.Invalid(cp.Child("resizePolicy"), c.ResizePolicy, "must not be set for init containers"))
		}
	}
	return errs
}

// validateEphemeralContainers checks the debug containers added through the
// ephemeralcontainers subresource.
func validateEphemeralContainers(ecs []corev1.EphemeralContainer, containers, inits []corev1.Container, vols map[string]corev1.VolumeSource, p *field.Path, restart corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var errs field.ErrorList
	others, all := sets.New[string](), sets.New[string]()
	for _, c := range append(append([]corev1.Container{}, containers...), inits...) {
		others.Insert(c.Name)
		all.Insert(c.Name)
	}
	for i := range ecs {
		ec := &ecs[i]
		ip := p.Index(i)
		c := (*corev1.Container)(&ec.EphemeralContainerCommon)
		errs = append(errs, validateContainerCommon(c, vols, ip, restart, hostUsers)...)
		errs = append(errs, validateContainerOnlyForPod(c, ip)...)
		if all.Has(ec.Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), ec.Name))
		} else {
			all.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !others.Has(ec.TargetContainerName) {
			errs = append(errs, field.NotFound(ip.Child("targetContainerName"), ec.TargetContainerName))
		}
		const msg = "cannot be set for an Ephemeral Container"
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"ports", len(ec.Ports) > 0},
			{"resources", len(ec.Resources.Limits)+len(ec.Resources.Requests)+len(ec.Resources.Claims) > 0},
			{"resizePolicy", len(ec.ResizePolicy) > 0},
			{"lifecycle", ec.Lifecycle != nil},
			{"livenessProbe", ec.LivenessProbe != nil},
			{"readinessProbe", ec.ReadinessProbe != nil},
			{"startupProbe", ec.StartupProbe != nil},
			{"restartPolicy", ec.RestartPolicy != nil},
		} {
			if f.set {
				errs = append(errs, field.Forbidden(ip.Child(f.name), msg))
			}
		}
	}
	return errs
}

// validateContainerCommon applies the checks every kind of container gets.
func validateContainerCommon(c *corev1.Container, vols map[string]corev1.VolumeSource, p *field.Path, restart corev1.RestartPolicy, hostUsers bool) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, validateDNS1123Label(c.Name, p.Child("name"))...)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	switch c.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		errs = append(errs, field.Required(p.Child("terminationMessagePolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	devices := map[string]string{}
	for _, d := range c.VolumeDevices {
		devices[d.Name] = d.DevicePath
	}
	errs = append(errs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	errs = append(errs, validateEnv(c.Env, p.Child("env"))...)
	errs = append(errs, validateEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	errs = append(errs, validateVolumeMounts(c.VolumeMounts, devices, vols, c, p.Child("volumeMounts"))...)
	errs = append(errs, validateVolumeDevices(c.VolumeDevices, mounts, vols, p.Child("volumeDevices"))...)
	errs = append(errs, validatePullPolicy(c.ImagePullPolicy, p.Child("imagePullPolicy"))...)
	errs = append(errs, validateResourceRequirements(&c.Resources, p.Child("resources"))...)
	errs = append(errs, validateResizePolicy(c.ResizePolicy, p.Child("resizePolicy"), restart)...)
	errs = append(errs, validateSecurityContext(c.SecurityContext, p.Child("securityContext"), hostUsers)...)
	return errs
}

// validateContainerOnlyForPod applies the checks only a Pod's containers
// get, not a template's.
func validateContainerOnlyForPod(c *corev1.Container, p *field.Path) field.ErrorList {
	if len(c.Image) != len(strings.TrimSpace(c.Image)) {
		return field.ErrorList{field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace")}
	}
	return nil
}

var supportedPortProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

func validateContainerPorts(ports []corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		ip := p.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(ip.Child("name"), port.Name, msg))
				}
			} else if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			} else {
				names.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(ip.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(ip.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(ip.Child("hostPort"), port.HostPort, msg))
			}
		}
		errs = append(errs, validateProtocol(port.Protocol, ip.Child("protocol"))...)
	}
	return errs
}

func validateProtocol(proto corev1.Protocol, p *field.Path) field.ErrorList {
	if proto == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if !supportedPortProtocols.Has(proto) {
		return field.ErrorList{field.NotSupported(p, proto, sets.List(supportedPortProtocols))}
	}
	return nil
}

// checkHostPortConflicts rejects two ports claiming the same host port.
func checkHostPortConflicts(containers []corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for ci, c := range containers {
		for pi, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen.Has(key) {
				errs = append(errs, field.Duplicate(p.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			} else {
				seen.Insert(key)
			}
		}
	}
	return errs
}

func validateEnv(vars []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		ip := p.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), ev.Name, msg))
			}
		}
		errs = append(errs, validateEnvVarValueFrom(ev, ip.Child("valueFrom"))...)
	}
	return errs
}

var envDownwardAPIFieldPaths = sets.New(
	"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
	"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")

func validateEnvVarValueFrom(ev corev1.EnvVar, p *field.Path) field.ErrorList {
	if ev.ValueFrom == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	vf := ev.ValueFrom
	if vf.FieldRef != nil {
		n++
		errs = append(errs, validateObjectFieldSelector(vf.FieldRef, envDownwardAPIFieldPaths, p.Child("fieldRef"))...)
	}
	if vf.ResourceFieldRef != nil {
		n++
		errs = append(errs, validateResourceFieldSelector(vf.ResourceFieldRef, false, p.Child("resourceFieldRef"))...)
	}
	if vf.ConfigMapKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key, p.Child("configMapKeyRef"))...)
	}
	if vf.SecretKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(vf.SecretKeyRef.Name, vf.SecretKeyRef.Key, p.Child("secretKeyRef"))...)
	}
	if vf.FileKeyRef != nil {
		n++
		if vf.FileKeyRef.Key == "" {
			errs = append(errs, field.Required(p.Child("fileKeyRef", "key"), ""))
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
	case ev.Value != "":
		errs = append(errs, field.Invalid(p, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
	}
	return errs
}

// subscriptedPath matches downward API paths like metadata.labels['app'].
var subscriptedPath = regexp.MustCompile(`^([^\[]+)\['(.*)'\]$`)

// downwardAPIFieldLabels are the v1 Pod fields the downward API converts.
var downwardAPIFieldLabels = sets.New(
	"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
	"spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
	"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")

func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, supported sets.Set[string], p *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(p.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(p.Child("fieldPath"), "")}
	}
	fieldPath, subscript, subscripted := fs.FieldPath, "", false
	if m := subscriptedPath.FindStringSubmatch(fs.FieldPath); m != nil {
		fieldPath, subscript, subscripted = m[1], m[2], true
	}
	switch {
	case fs.APIVersion != "v1":
		return field.ErrorList{field.Invalid(p.Child("fieldPath"), fs.FieldPath, "error converting fieldPath: unsupported pod version: "+fs.APIVersion)}
	case subscripted && fieldPath != "metadata.annotations" && fieldPath != "metadata.labels",
		!downwardAPIFieldLabels.Has(fieldPath):
		return field.ErrorList{field.Invalid(p.Child("fieldPath"), fs.FieldPath, "error converting fieldPath: field label not supported: "+fs.FieldPath)}
	}
	if subscripted {
		if fieldPath == "metadata.annotations" {
			subscript = strings.ToLower(subscript)
		}
		return validateQualifiedName(subscript, p)
	}
	if !supported.Has(fieldPath) {
		return field.ErrorList{field.NotSupported(p.Child("fieldPath"), fieldPath, sets.List(supported))}
	}
	return nil
}

var containerResourceFieldPaths = sets.New(
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage")

func validateResourceFieldSelector(fs *corev1.ResourceFieldSelector, volume bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case volume && fs.ContainerName == "":
		errs = append(errs, field.Required(p.Child("containerName"), ""))
	case fs.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case !containerResourceFieldPaths.Has(fs.Resource) &&
		!strings.HasPrefix(fs.Resource, "requests.hugepages-") && !strings.HasPrefix(fs.Resource, "limits.hugepages-"):
		errs = append(errs, field.NotSupported(p.Child("resource"), fs.Resource, sets.List(containerResourceFieldPaths)))
	}
	if fs.Divisor.Cmp(resource.Quantity{}) != 0 {
		cpu := fs.Resource == "limits.cpu" || fs.Resource == "requests.cpu"
		d := fs.Divisor.String()
		switch {
		case cpu && d != "1m" && d != "1":
			errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1m and 1 are supported with the cpu resource"))
		case !cpu && !byteDivisors.Has(d):
			kind := map[string]string{
				"limits.memory": "memory", "requests.memory": "memory",
				"limits.ephemeral-storage": "local ephemeral storage", "requests.ephemeral-storage": "local ephemeral storage",
			}[fs.Resource]
			if kind == "" && strings.Contains(fs.Resource, "hugepages-") {
				kind = "hugepages"
			}
			if kind != "" {
				errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource,
					"only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the "+kind+" resource"))
			}
		}
	}
	return errs
}

var byteDivisors = sets.New("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")

// validateKeySelector checks a configMapKeyRef or secretKeyRef: the name is
// checked even when empty, as kube-apiserver does.
func validateKeySelector(name, key string, p *field.Path) field.ErrorList {
	errs := validateName(name, nameIsDNSSubdomain, false, p.Child("name"))
	if key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	} else {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(p.Child("key"), key, msg))
		}
	}
	return errs
}

func validateEnvFrom(sources []corev1.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range sources {
		ip := p.Index(i)
		if ev.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				errs = append(errs, field.Invalid(ip.Child("prefix"), ev.Prefix, msg))
			}
		}
		n := 0
		if ev.ConfigMapRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(ev.ConfigMapRef.Name, ip.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(ev.SecretRef.Name, ip.Child("secretRef"))...)
		}
		if n == 0 {
			errs = append(errs, field.Invalid(p, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func validateEnvSourceName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "")}
	}
	return validateName(name, nameIsDNSSubdomain, true, p.Child("name"))
}

func validateVolumeMounts(mounts []corev1.VolumeMount, devices map[string]string, vols map[string]corev1.VolumeSource, c *corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	mountPoints := sets.New[string]()
	for i, m := range mounts {
		ip := p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if _, ok := vols[m.Name]; !ok {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		}
		if mountPoints.Has(m.MountPath) {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPoints.Insert(m.MountPath)
		if _, ok := devices[m.Name]; ok {
			errs = append(errs, field.Invalid(ip.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		for _, d := range devices {
			if d == m.MountPath {
				errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
				break
			}
		}
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, p.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, p.Child("subPathExpr"))...)
		}
		if mp := m.MountPropagation; mp != nil {
			supported := sets.New(corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone)
			if !supported.Has(*mp) {
				errs = append(errs, field.NotSupported(p.Child("mountPropagation"), *mp, sets.List(supported)))
			}
			privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
			if *mp == corev1.MountPropagationBidirectional && !privileged {
				errs = append(errs, field.Forbidden(p.Child("mountPropagation"), "Bidirectional mount propagation is available only to privileged containers"))
			}
		}
		errs = append(errs, validateRecursiveReadOnly(m, p.Child("recursiveReadOnly"))...)
	}
	return errs
}

func validateRecursiveReadOnly(m corev1.VolumeMount, p *field.Path) field.ErrorList {
	if m.RecursiveReadOnly == nil {
		return nil
	}
	var errs field.ErrorList
	switch *m.RecursiveReadOnly {
	case corev1.RecursiveReadOnlyDisabled:
	case corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible:
		if !m.ReadOnly {
			errs = append(errs, field.Forbidden(p, "may only be specified when readOnly is true"))
		}
		if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
			errs = append(errs, field.Forbidden(p, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		errs = append(errs, field.NotSupported(p, *m.RecursiveReadOnly, []corev1.RecursiveReadOnlyMode{
			corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible}))
	}
	return errs
}

func validateVolumeDevices(devices []corev1.VolumeDevice, mounts map[string]string, vols map[string]corev1.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths, names := sets.New[string](), sets.New[string]()
	for i, d := range devices {
		ip := p.Index(i)
		src, matched := vols[d.Name]
		isPVC := matched && (src.PersistentVolumeClaim != nil || src.Ephemeral != nil)
		if d.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must be unique"))
		}
		if matched && !isPVC {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !matched {
			errs = append(errs, field.NotFound(ip.Child("name"), d.Name))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(ip.Child("devicePath"), ""))
		}
		if paths.Has(d.DevicePath) {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		if d.DevicePath != "" && len(validatePathNoBacksteps(d.DevicePath, ip)) > 0 {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "can not contain backsteps ('..')"))
		} else {
			paths.Insert(d.DevicePath)
		}
		if _, ok := mounts[d.Name]; ok {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must not already exist in volumeMounts"))
		}
		for _, m := range mounts {
			if m == d.DevicePath {
				errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must not already exist as a path in volumeMounts"))
				break
			}
		}
		if d.Name != "" {
			names.Insert(d.Name)
		}
	}
	return errs
}

var supportedPullPolicies = sets.New(corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)

func validatePullPolicy(policy corev1.PullPolicy, p *field.Path) field.ErrorList {
	switch {
	case policy == "":
		return field.ErrorList{field.Required(p, "")}
	case !supportedPullPolicies.Has(policy):
		return field.ErrorList{field.NotSupported(p, policy, sets.List(supportedPullPolicies))}
	}
	return nil
}

func validateResizePolicy(policies []corev1.ContainerResizePolicy, p *field.Path, restart corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.ResourceName]()
	for i, rp := range policies {
		if seen.Has(rp.ResourceName) {
			errs = append(errs, field.Duplicate(p.Index(i), rp.ResourceName))
		}
		seen.Insert(rp.ResourceName)
		switch rp.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			errs = append(errs, field.Required(p, ""))
		default:
			errs = append(errs, field.NotSupported(p, rp.ResourceName, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}))
		}
		switch rp.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			errs = append(errs, field.Required(p, ""))
		default:
			errs = append(errs, field.NotSupported(p, rp.RestartPolicy, []corev1.ResourceResizeRestartPolicy{corev1.NotRequired, corev1.RestartContainer}))
		}
		if restart == corev1.RestartPolicyNever && rp.RestartPolicy != corev1.NotRequired {
			errs = append(errs, field.Invalid(p, rp.RestartPolicy, "must be 'NotRequired' when `restartPolicy` is 'Never'"))
		}
	}
	return errs
}

// Probes and lifecycle handlers.

func validateLivenessProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := validateProbe(pr, grace, p)
	if pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	return errs
}

func validateReadinessProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := validateProbe(pr, grace, p)
	if pr.TerminationGracePeriodSeconds != nil {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), pr.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
	}
	return errs
}

func validateStartupProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := validateProbe(pr, grace, p)
	if pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	return errs
}

func validateProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	h := pr.ProbeHandler
	errs := validateHandler(handler{exec: h.Exec, httpGet: h.HTTPGet, tcpSocket: h.TCPSocket, grpc: h.GRPC}, grace, p)
	errs = append(errs, validateNonnegative(int64(pr.InitialDelaySeconds), p.Child("initialDelaySeconds"))...)
	errs = append(errs, validateNonnegative(int64(pr.TimeoutSeconds), p.Child("timeoutSeconds"))...)
	errs = append(errs, validateNonnegative(int64(pr.PeriodSeconds), p.Child("periodSeconds"))...)
	errs = append(errs, validateNonnegative(int64(pr.SuccessThreshold), p.Child("successThreshold"))...)
	errs = append(errs, validateNonnegative(int64(pr.FailureThreshold), p.Child("failureThreshold"))...)
	if t := pr.TerminationGracePeriodSeconds; t != nil && *t <= 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *t, "must be greater than 0"))
	}
	return errs
}

// handler is the union of probe and lifecycle handler actions.
type handler struct {
	exec      *corev1.ExecAction
	httpGet   *corev1.HTTPGetAction
	tcpSocket *corev1.TCPSocketAction
	grpc      *corev1.GRPCAction
	sleep     *corev1.SleepAction
}

func validateHandler(h handler, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(set bool, name string, check func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		errs = append(errs, check()...)
	}
	one(h.exec != nil, "exec", func() field.ErrorList {
		if len(h.exec.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("exec", "command"), "")}
		}
		return nil
	})
	one(h.httpGet != nil, "httpGet", func() field.ErrorList { return validateHTTPGetAction(h.httpGet, p.Child("httpGet")) })
	one(h.tcpSocket != nil, "tcpSocket", func() field.ErrorList {
		return validatePortNumOrName(h.tcpSocket.Port, p.Child("tcpSocket", "port"))
	})
	one(h.grpc != nil, "grpc", func() field.ErrorList {
		return validatePortNumOrName(intstr.FromInt32(h.grpc.Port), p.Child("grpc", "port"))
	})
	one(h.sleep != nil, "sleep", func() field.ErrorList {
		if grace != nil && (h.sleep.Seconds < 0 || h.sleep.Seconds > *grace) {
			return field.ErrorList{field.Invalid(p.Child("sleep"), h.sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *grace))}
		}
		return nil
	})
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a handler type"))
	}
	return errs
}

var supportedHTTPSchemes = sets.New(corev1.URISchemeHTTP, corev1.URISchemeHTTPS)

func validateHTTPGetAction(h *corev1.HTTPGetAction, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validatePortNumOrName(h.Port, p.Child("port"))...)
	if !supportedHTTPSchemes.Has(h.Scheme) {
		errs = append(errs, field.NotSupported(p.Child("scheme"), h.Scheme, sets.List(supportedHTTPSchemes)))
	}
	for _, hdr := range h.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(hdr.Name) {
			errs = append(errs, field.Invalid(p.Child("httpHeaders"), hdr.Name, msg))
		}
	}
	return errs
}

func validateLifecycle(l *corev1.Lifecycle, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, h := range []struct {
		name string
		h    *corev1.LifecycleHandler
	}{{"postStart", l.PostStart}, {"preStop", l.PreStop}} {
		if h.h != nil {
			errs = append(errs, validateHandler(handler{exec: h.h.Exec, httpGet: h.h.HTTPGet, tcpSocket: h.h.TCPSocket, sleep: h.h.Sleep}, grace, p.Child(h.name))...)
		}
	}
	return errs
}
