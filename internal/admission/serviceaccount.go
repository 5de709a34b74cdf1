package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// Service account names and paths, as kube defines them.
const (
	// DefaultServiceAccountName is the service account a pod runs as when it
	// names none.
	DefaultServiceAccountName = "default"
	// ServiceAccountVolumeName prefixes the projected token volume's name
	// ("kube-api-access-x7k2p").
	ServiceAccountVolumeName = "kube-api-access"
	// DefaultAPITokenMountPath is where every container finds its token,
	// the cluster CA and its namespace.
	DefaultAPITokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenExpirationSeconds is the bound token's lifetime kube asks for:
	// 1 hour and 7 seconds, the 7 seconds marking tokens the kubelet
	// refreshes (kube's WarnOnlyBoundTokenExpirationSeconds).
	tokenExpirationSeconds = 3607
	// rootCAConfigMap is the ConfigMap holding the cluster CA in every
	// namespace.
	rootCAConfigMap = "kube-root-ca.crt"
	// mirrorPodAnnotation marks the static pods a kubelet mirrors.
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// ServiceAccount makes every pod run as a service account that exists, as
// kube's plugin of that name does. On create it sets spec.serviceAccountName
// to "default" when empty, refuses the pod when the account does not exist
// ("error looking up service account demo/default: serviceaccount "default"
// not found"), copies the account's imagePullSecrets when the pod has none,
// and, unless automountServiceAccountToken says no, mounts the projected
// kube-api-access-xxxxx volume (a bound token, the cluster CA and the
// namespace) into every container at
// /var/run/secrets/kubernetes.io/serviceaccount.
//
// The "default" account is created by the service account controller soon
// after its namespace; a pod created in that window is not refused at once:
// as kube does, the plugin looks the default account up live up to ten
// times, 100 to 200 ms apart, before it gives up. Any other account must
// exist.
type ServiceAccount struct {
	// Lister reads ServiceAccounts from an informer cache. Required.
	Lister corelisters.ServiceAccountLister
	// Client reads a ServiceAccount live when the cache does not have it.
	// Optional.
	Client kubernetes.Interface
	// MountToken mounts the projected token volume (kube's default: true).
	MountToken bool
	// sleep waits between live lookups; nil means time.Sleep.
	sleep func(time.Duration)
}

// Name implements Mutator and Validator.
func (*ServiceAccount) Name() string { return "ServiceAccount" }

func (s *ServiceAccount) pod(a *Attributes) *corev1.Pod {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" || a.Operation != Create {
		return nil
	}
	pod, _ := a.Object.(*corev1.Pod)
	return pod
}

// Admit implements Mutator.
func (s *ServiceAccount) Admit(ctx context.Context, a *Attributes) error {
	pod := s.pod(a)
	if pod == nil {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		// A kubelet's mirror pod must match its manifest: it is not
		// changed, only checked.
		return s.Validate(ctx, a)
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
	}
	// The deprecated field mirrors the name, as the v1 API shows it.
	pod.Spec.DeprecatedServiceAccount = pod.Spec.ServiceAccountName
	sa, err := s.get(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if s.MountToken && shouldAutomount(sa, pod) {
		mountServiceAccountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		for _, ref := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: ref.Name})
		}
	}
	return nil
}

// Validate implements Validator: the pod (as later plugins and webhooks
// left it) names a service account that exists; a mirror pod references
// none.
func (s *ServiceAccount) Validate(ctx context.Context, a *Attributes) error {
	pod := s.pod(a)
	if pod == nil {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return validateMirrorPod(a, pod)
	}
	if pod.Spec.ServiceAccountName == "" {
		return NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Namespace, pod.Name))
	}
	if _, err := s.get(ctx, a.Namespace, pod.Spec.ServiceAccountName); err != nil {
		return NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	return nil
}

func validateMirrorPod(a *Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName != "" {
		return NewForbidden(a, fmt.Errorf("a mirror pod may not reference service accounts"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil {
			return NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
		}
		if p := v.Projected; p != nil {
			for _, src := range p.Sources {
				if src.Secret != nil {
					return NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
				}
				if src.ServiceAccountToken != nil {
					return NewForbidden(a, fmt.Errorf("a mirror pod may not use ServiceAccountToken volume projections"))
				}
			}
		}
	}
	return nil
}

// get returns a service account from the cache, else live (retrying for
// the default account, which its controller may not have created yet).
func (s *ServiceAccount) get(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	sa, err := s.Lister.ServiceAccounts(ns).Get(name)
	if err == nil {
		return sa, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccount"}, name)
	if s.Client == nil {
		return nil, notFound
	}
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = 10
	}
	interval := time.Duration(100+rand.IntN(100)) * time.Millisecond
	for i := 0; i < attempts; i++ {
		if i > 0 {
			s.wait(ctx, interval)
		}
		sa, err := s.Client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return sa, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, notFound
}

func (s *ServiceAccount) wait(ctx context.Context, d time.Duration) {
	if s.sleep != nil {
		s.sleep(d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// shouldAutomount: the pod's choice wins, then the account's; the default
// is to mount.
func shouldAutomount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountServiceAccountToken mounts the projected token volume into every
// container (init containers included) that mounts nothing at the token
// path, adding the volume when some container needs it.
func mountServiceAccountToken(pod *corev1.Pod) {
	volumeName := ""
	hasVolume := false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, ServiceAccountVolumeName+"-") {
			volumeName, hasVolume = v.Name, true
			break
		}
	}
	if volumeName == "" {
		volumeName = ServiceAccountVolumeName + "-" + utilrand.String(5)
	}
	mount := corev1.VolumeMount{Name: volumeName, ReadOnly: true, MountPath: DefaultAPITokenMountPath}
	needed := false
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			mounted := false
			for _, m := range cs[i].VolumeMounts {
				if m.MountPath == DefaultAPITokenMountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	if !hasVolume && needed {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name:         volumeName,
			VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()},
		})
	}
}

// TokenVolumeSource is the projected volume kube mounts for a pod's service
// account: a bound token (path "token"), the cluster CA (ca.crt from the
// kube-root-ca.crt ConfigMap) and the pod's namespace.
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	mode := corev1.ProjectedVolumeSourceDefaultMode
	expiry := int64(tokenExpirationSeconds)
	return &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: rootCAConfigMap},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{
				Items: []corev1.DownwardAPIVolumeFile{{
					Path:     "namespace",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
				}},
			}},
		},
	}
}
