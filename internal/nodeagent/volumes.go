package nodeagent

import (
	"fmt"
	iofs "io/fs"
	"math"
	"path"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minik/internal/nodeagent/runtime"
)

// mountVolumes sets the pod's volumes up: emptyDir, configMap, secret,
// projected and downwardAPI get their files; others (hostPath,
// persistentVolumeClaim, ...) are empty directories. A ConfigMap or
// Secret that does not exist, or a claim not bound to a volume, fails the
// mount with kube's FailedMount event; the pod then waits in
// ContainerCreating, retried with back-off.
// It returns whether every volume is ready.
func (w *podWorker) mountVolumes(pod *corev1.Pod) bool {
	w.mu.Lock()
	if w.volumesReady {
		w.mu.Unlock()
		return true
	}
	w.mu.Unlock()
	var failed bool
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		w.mu.Lock()
		_, done := w.volumes[v.Name]
		w.mu.Unlock()
		if done {
			continue
		}
		vol, err := w.makeVolume(pod, v)
		if err != nil {
			if w.ctx.Err() != nil {
				return false
			}
			failed = true
			w.event(pod, nil, corev1.EventTypeWarning, "FailedMount", fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", v.Name, err))
			continue
		}
		w.mu.Lock()
		w.volumes[v.Name] = vol
		w.mu.Unlock()
	}
	t := w.n.cfg.Timing
	w.mu.Lock()
	defer w.mu.Unlock()
	if failed {
		if w.mountBackoff == 0 {
			w.mountBackoff = t.MountRetryInitial
		} else {
			w.mountBackoff = min(2*w.mountBackoff, t.MountRetryMax)
		}
		w.after(w.mountBackoff)
		return false
	}
	w.volumesReady = true
	return true
}

// makeVolume builds one volume: its files and their modes.
func (w *podWorker) makeVolume(pod *corev1.Pod, v *corev1.Volume) (*runtime.Volume, error) {
	vol, err := w.volumeFiles(pod, v)
	if err != nil {
		return nil, err
	}
	setModes(pod, &v.VolumeSource, vol)
	return vol, nil
}

// setModes gives a volume the modes the kubelet gives it: an emptyDir's
// directory is world-writable (sticky, on tmpfs, with medium Memory); the
// files of configMap, secret, downwardAPI and projected volumes have
// their defaultMode (0644 unless set) or their item's mode, readable by
// the pod's fsGroup when it has one.
func setModes(pod *corev1.Pod, src *corev1.VolumeSource, vol *runtime.Volume) {
	var def *int32
	var items []corev1.KeyToPath
	var downward []corev1.DownwardAPIVolumeFile
	switch {
	case src.EmptyDir != nil:
		mode, fsType := iofs.ModeDir|0o777, ""
		if src.EmptyDir.Medium == corev1.StorageMediumMemory {
			mode, fsType = mode|iofs.ModeSticky, "tmpfs"
		}
		vol.SetRoot(mode, fsType)
		return
	case src.ConfigMap != nil:
		def, items = src.ConfigMap.DefaultMode, src.ConfigMap.Items
	case src.Secret != nil:
		def, items = src.Secret.DefaultMode, src.Secret.Items
	case src.DownwardAPI != nil:
		def, downward = src.DownwardAPI.DefaultMode, src.DownwardAPI.Items
	case src.Projected != nil:
		def = src.Projected.DefaultMode
		for _, s := range src.Projected.Sources {
			switch {
			case s.ConfigMap != nil:
				items = append(items, s.ConfigMap.Items...)
			case s.Secret != nil:
				items = append(items, s.Secret.Items...)
			case s.DownwardAPI != nil:
				downward = append(downward, s.DownwardAPI.Items...)
			}
		}
	default:
		return
	}
	fsGroup := pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.FSGroup != nil
	mode := func(m int32) iofs.FileMode {
		fm := iofs.FileMode(m).Perm()
		if fsGroup {
			fm |= 0o440 // the kubelet's ownership change of a read-only volume
		}
		return fm
	}
	d := int32(corev1.ConfigMapVolumeSourceDefaultMode)
	if def != nil {
		d = *def
	}
	vol.SetDefaultMode(mode(d))
	modes := map[string]iofs.FileMode{}
	for _, it := range items {
		if it.Mode != nil {
			modes[it.Path] = mode(*it.Mode)
		}
	}
	for _, it := range downward {
		if it.Mode != nil {
			modes[path.Clean(it.Path)] = mode(*it.Mode)
		}
	}
	vol.SetModes(modes)
}

// refreshVolumes rewrites a running pod's volumes from their sources, as
// the kubelet does: downwardAPI volumes at every sync (the pod's labels
// and annotations change), configMap, secret and projected ones every
// Timing.VolumeRefresh. A source that fails to read leaves the files as
// they were. The service account's projected volume (kube-api-access-*)
// is rewritten only when its token is due for renewal (its CA bundle and
// namespace do not change), so that pods at rest cost the API nothing.
func (w *podWorker) refreshVolumes(pod *corev1.Pod) {
	t, clk := w.n.cfg.Timing, w.n.cfg.Clock
	w.mu.Lock()
	ready := w.volumesReady
	// The first sync after the mount starts the period.
	first := w.nextRefresh.IsZero()
	periodic := !first && !clk.Now().Before(w.nextRefresh)
	w.mu.Unlock()
	if !ready {
		return
	}
	sourced, tokensDue := false, periodic && w.tokens.anyDue(time.Now())
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		src := &v.VolumeSource
		fromAPI := src.ConfigMap != nil || src.Secret != nil || src.Projected != nil
		sourced = sourced || fromAPI
		due := periodic && fromAPI
		if isServiceAccountVolume(v) {
			due = tokensDue && hasTokenProjection(v)
		}
		if src.DownwardAPI == nil && !due {
			continue
		}
		w.mu.Lock()
		vol := w.volumes[v.Name]
		w.mu.Unlock()
		fresh, err := w.volumeFiles(pod, v)
		if vol == nil || err != nil {
			continue
		}
		vol.Refresh(fresh)
	}
	if !sourced {
		return
	}
	// Ask for the sync of the next refresh (a sync asks again for what is
	// still due).
	w.mu.Lock()
	if periodic || first {
		w.nextRefresh = clk.Now().Add(t.scale(t.VolumeRefresh))
	}
	left := w.nextRefresh.Sub(clk.Now())
	w.mu.Unlock()
	w.afterReal(left)
}

// volumeFiles builds one volume's files.
func (w *podWorker) volumeFiles(pod *corev1.Pod, v *corev1.Volume) (*runtime.Volume, error) {
	src := &v.VolumeSource
	switch {
	case src.ConfigMap != nil:
		files, err := w.configMapFiles(pod, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, false)
		if err != nil {
			return nil, err
		}
		return runtime.NewVolume(files, true), nil
	case src.Secret != nil:
		files, err := w.secretFiles(pod, src.Secret.SecretName, src.Secret.Items, src.Secret.Optional, false)
		if err != nil {
			return nil, err
		}
		return runtime.NewVolume(files, true), nil
	case src.PersistentVolumeClaim != nil:
		// The claim's volume is simulated: mounted, empty, once bound.
		if err := w.claimBound(pod.Namespace, src.PersistentVolumeClaim.ClaimName); err != nil {
			return nil, err
		}
		return runtime.NewVolume(nil, false), nil
	case src.DownwardAPI != nil:
		files, err := w.downwardFiles(pod, src.DownwardAPI.Items)
		if err != nil {
			return nil, err
		}
		return runtime.NewVolume(files, true), nil
	case src.Projected != nil:
		files := map[string][]byte{}
		for _, s := range src.Projected.Sources {
			var part map[string][]byte
			var err error
			switch {
			case s.ConfigMap != nil:
				// The service account volume's CA bundle is published by
				// a controller minik does not run yet: its absence is
				// tolerated.
				tolerate := s.ConfigMap.Name == "kube-root-ca.crt"
				part, err = w.configMapFiles(pod, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, tolerate)
			case s.Secret != nil:
				part, err = w.secretFiles(pod, s.Secret.Name, s.Secret.Items, s.Secret.Optional, false)
			case s.DownwardAPI != nil:
				part, err = w.downwardFiles(pod, s.DownwardAPI.Items)
			case s.ServiceAccountToken != nil:
				var token []byte
				if token, err = w.projectedToken(pod, s.ServiceAccountToken); err == nil {
					part = map[string][]byte{s.ServiceAccountToken.Path: token}
				}
			}
			if err != nil {
				return nil, err
			}
			for k, v := range part {
				files[k] = v
			}
		}
		return runtime.NewVolume(files, true), nil
	}
	return runtime.NewVolume(nil, false), nil
}

func (w *podWorker) configMapFiles(pod *corev1.Pod, name string, items []corev1.KeyToPath, optional *bool, tolerate bool) (map[string][]byte, error) {
	cm, err := w.getConfigMap(pod.Namespace, name)
	if apierrors.IsNotFound(err) && (tolerate || optional != nil && *optional) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return projectKeys(data, items, optional, "configmap references non-existent config key: %s")
}

func (w *podWorker) secretFiles(pod *corev1.Pod, name string, items []corev1.KeyToPath, optional *bool, tolerate bool) (map[string][]byte, error) {
	s, err := w.getSecret(pod.Namespace, name)
	if apierrors.IsNotFound(err) && (tolerate || optional != nil && *optional) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for k, v := range s.Data {
		data[k] = v
	}
	for k, v := range s.StringData {
		data[k] = []byte(v)
	}
	return projectKeys(data, items, optional, "secret references non-existent secret key: %s")
}

// projectKeys lays keys out as files: every key, or the listed items.
func projectKeys(data map[string][]byte, items []corev1.KeyToPath, optional *bool, missing string) (map[string][]byte, error) {
	if len(items) == 0 {
		return data, nil
	}
	out := map[string][]byte{}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional != nil && *optional {
				continue
			}
			return nil, fmt.Errorf(missing, it.Key)
		}
		out[it.Path] = v
	}
	return out, nil
}

func (w *podWorker) downwardFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = w.fieldValue(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = w.resourceValue(pod, it.ResourceFieldRef)
		}
		if err != nil {
			return nil, err
		}
		out[path.Clean(it.Path)] = []byte(v)
	}
	return out, nil
}

// fieldValue is a downward API field of the pod.
func (w *podWorker) fieldValue(pod *corev1.Pod, field string) (string, error) {
	w.mu.Lock()
	ip := w.ip
	w.mu.Unlock()
	mapLines := func(m map[string]string) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for i, k := range keys {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%s=%q", k, m[k])
		}
		return b.String()
	}
	switch {
	case field == "metadata.name":
		return pod.Name, nil
	case field == "metadata.namespace":
		return pod.Namespace, nil
	case field == "metadata.uid":
		return string(pod.UID), nil
	case field == "metadata.labels":
		return mapLines(pod.Labels), nil
	case field == "metadata.annotations":
		return mapLines(pod.Annotations), nil
	case strings.HasPrefix(field, "metadata.labels['") && strings.HasSuffix(field, "']"):
		return pod.Labels[strings.TrimSuffix(strings.TrimPrefix(field, "metadata.labels['"), "']")], nil
	case strings.HasPrefix(field, "metadata.annotations['") && strings.HasSuffix(field, "']"):
		return pod.Annotations[strings.TrimSuffix(strings.TrimPrefix(field, "metadata.annotations['"), "']")], nil
	case field == "spec.nodeName":
		return pod.Spec.NodeName, nil
	case field == "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case field == "status.hostIP", field == "status.hostIPs":
		return w.n.ip.String(), nil
	case field == "status.podIP", field == "status.podIPs":
		return ip, nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %s", field)
}

// resourceValue is a container's request or limit, in the divisor's
// unit, rounded up; a limit not set is the node's allocatable.
func (w *podWorker) resourceValue(pod *corev1.Pod, ref *corev1.ResourceFieldSelector) (string, error) {
	var c *corev1.Container
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == ref.ContainerName || ref.ContainerName == "" && c == nil {
				c = &list[i]
			}
		}
	}
	if c == nil {
		return "", fmt.Errorf("container %q not found", ref.ContainerName)
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported container resource: %v", ref.Resource)
	}
	rn := corev1.ResourceName(name)
	var q resource.Quantity
	var found bool
	switch kind {
	case "limits":
		q, found = c.Resources.Limits[rn]
	case "requests":
		q, found = c.Resources.Requests[rn]
	}
	if !found {
		q = defaultCapacity[rn]
		if w.n.template != nil {
			if v, ok := w.n.template.Status.Allocatable[rn]; ok {
				q = v
			}
		}
	}
	divisor := resource.MustParse("1")
	if !ref.Divisor.IsZero() {
		divisor = ref.Divisor
	}
	if rn == corev1.ResourceCPU {
		return fmt.Sprint(int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))), nil
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.Value()) / float64(divisor.Value())))), nil
}

// makeEnv is the container's environment: envFrom, then env, in order,
// with $(VAR) references to earlier variables expanded. A ConfigMap,
// Secret or key that does not exist (and is not optional) is an error the
// kubelet reports as CreateContainerConfigError.
func (w *podWorker) makeEnv(pod *corev1.Pod, spec *corev1.Container, ip string) ([]runtime.EnvVar, error) {
	var order []string
	vals := map[string]string{}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	cms := map[string]*corev1.ConfigMap{}
	secrets := map[string]*corev1.Secret{}
	getCM := func(name string) (*corev1.ConfigMap, error) {
		if cm, ok := cms[name]; ok {
			return cm, nil
		}
		cm, err := w.getConfigMap(pod.Namespace, name)
		if err != nil {
			return nil, err
		}
		cms[name] = cm
		return cm, nil
	}
	getSecret := func(name string) (*corev1.Secret, error) {
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		s, err := w.getSecret(pod.Namespace, name)
		if err != nil {
			return nil, err
		}
		secrets[name] = s
		return s, nil
	}
	optional := func(o *bool) bool { return o != nil && *o }
	for _, ef := range spec.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, err := getCM(ef.ConfigMapRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && optional(ef.ConfigMapRef.Optional) {
					continue
				}
				return nil, err
			}
			keys := sortedKeys(cm.Data)
			for _, k := range keys {
				set(ef.Prefix+k, cm.Data[k])
			}
		case ef.SecretRef != nil:
			s, err := getSecret(ef.SecretRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && optional(ef.SecretRef.Optional) {
					continue
				}
				return nil, err
			}
			keys := make([]string, 0, len(s.Data))
			for k := range s.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				set(ef.Prefix+k, string(s.Data[k]))
			}
		}
	}
	for _, e := range spec.Env {
		if e.ValueFrom == nil {
			set(e.Name, expandVars(e.Value, vals))
			continue
		}
		vf := e.ValueFrom
		switch {
		case vf.FieldRef != nil:
			v, err := w.fieldValue(pod, vf.FieldRef.FieldPath)
			if err != nil {
				return nil, err
			}
			if vf.FieldRef.FieldPath == "status.podIP" || vf.FieldRef.FieldPath == "status.podIPs" {
				v = ip
			}
			set(e.Name, v)
		case vf.ResourceFieldRef != nil:
			ref := vf.ResourceFieldRef.DeepCopy()
			if ref.ContainerName == "" {
				ref.ContainerName = spec.Name
			}
			v, err := w.resourceValue(pod, ref)
			if err != nil {
				return nil, err
			}
			set(e.Name, v)
		case vf.ConfigMapKeyRef != nil:
			ref := vf.ConfigMapKeyRef
			cm, err := getCM(ref.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && optional(ref.Optional) {
					continue
				}
				return nil, err
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if optional(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, pod.Namespace, ref.Name)
			}
			set(e.Name, v)
		case vf.SecretKeyRef != nil:
			ref := vf.SecretKeyRef
			s, err := getSecret(ref.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && optional(ref.Optional) {
					continue
				}
				return nil, err
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if optional(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, pod.Namespace, ref.Name)
			}
			set(e.Name, string(v))
		}
	}
	out := make([]runtime.EnvVar, 0, len(order))
	for _, k := range order {
		out = append(out, runtime.EnvVar{Name: k, Value: vals[k]})
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// getConfigMap reads a ConfigMap; not found reads as the kubelet's
// configmap manager says it: `configmap "x" not found`.
func (w *podWorker) getConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	var cm *corev1.ConfigMap
	err := w.related(func() (err error) {
		cm, err = w.n.cs.CoreV1().ConfigMaps(ns).Get(w.ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmap"}, name)
	}
	if err != nil {
		return nil, fmt.Errorf("get configmap %s/%s: %w", ns, name, err)
	}
	return cm, nil
}

// getSecret reads a Secret; not found reads `secret "x" not found`.
func (w *podWorker) getSecret(ns, name string) (*corev1.Secret, error) {
	var s *corev1.Secret
	err := w.related(func() (err error) {
		s, err = w.n.cs.CoreV1().Secrets(ns).Get(w.ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secret"}, name)
	}
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", ns, name, err)
	}
	return s, nil
}

// claimBound checks that a pod's claim exists and is bound to a volume
// that exists (and, for a CSI volume, is attached to this node), as the
// kubelet's volume manager does before mounting it.
func (w *podWorker) claimBound(ns, name string) error {
	var pvc *corev1.PersistentVolumeClaim
	err := w.related(func() (err error) {
		pvc, err = w.n.cs.CoreV1().PersistentVolumeClaims(ns).Get(w.ctx, name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("error processing PVC %s/%s: %w", ns, name, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaim"}, name))
	}
	if err != nil {
		return fmt.Errorf("error processing PVC %s/%s: %w", ns, name, err)
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
		return fmt.Errorf("error processing PVC %s/%s: PVC is not bound", ns, name)
	}
	var pv *corev1.PersistentVolume
	err = w.related(func() (err error) {
		pv, err = w.n.cs.CoreV1().PersistentVolumes().Get(w.ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("error processing PVC %s/%s: failed to fetch PV %s from API server: %w", ns, name, pvc.Spec.VolumeName, err)
	}
	return w.csiAttached(pv)
}

// relatedRetries bound how long related retries a denied read: about
// 2.5s in all.
const (
	relatedRetries    = 9
	relatedRetryFirst = 5 * time.Millisecond
)

// related runs get, a read of an object the pod references, retrying it
// while the API server denies it. The node authorizer lets a node read
// only what its pods reference, and learns of a pod from a watch of its
// own: it may see the pod bound an instant after this node does (the
// kubelet meets the same race and retries on its mount back-off; retrying
// at once spares the pod a FailedMount event).
func (w *podWorker) related(get func() error) error {
	delay := relatedRetryFirst
	for attempt := 1; ; attempt++ {
		err := get()
		if !apierrors.IsForbidden(err) || attempt == relatedRetries {
			return err
		}
		select {
		case <-w.ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay *= 2
	}
}
