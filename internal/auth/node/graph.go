package node

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Kind is a kind of object a node may be related to through its pods.
type Kind uint8

// The kinds the graph relates to nodes.
const (
	Secret Kind = iota
	ConfigMap
	PersistentVolumeClaim
	PersistentVolume
	ServiceAccount
	ResourceClaim
	// ResourceSlice relates to the node its spec.nodeName names.
	ResourceSlice
)

// names are the kinds as kube's graph names its vertices in messages.
var names = [...]string{
	Secret: "secret", ConfigMap: "configmap", PersistentVolumeClaim: "pvc",
	PersistentVolume: "pv", ServiceAccount: "serviceAccount", ResourceClaim: "resourceclaim",
	ResourceSlice: "resourceslice",
}

// String implements fmt.Stringer.
func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return "unknown"
}

// ref names an object: namespace is empty for a PersistentVolume.
type ref struct {
	kind      Kind
	namespace string
	name      string
}

type podKey struct{ namespace, name string }

// podEntry is what one bound pod gives its node.
type podEntry struct {
	node string
	refs []ref
}

// pvEntry is what one PersistentVolume points at: the claim bound to it
// (spec.claimRef) and the secrets its source names.
type pvEntry struct {
	claim   ref
	secrets []ref
}

// Graph is kube's node authorizer graph, reduced to what it answers: the
// objects each node's pods reference (node ← pod ← secret, configmap,
// service account, claim, resource claim; node ← pod ← pvc ← pv ←
// secret). It holds only bound pods, their references and the
// PersistentVolumes, so it stays the size of what the nodes run. Safe
// for concurrent use.
type Graph struct {
	mu sync.RWMutex
	// pods are the bound pods and their references.
	pods map[podKey]podEntry
	// related counts, per node, the pods that reference each object.
	related map[string]map[ref]int
	// pvs are the PersistentVolumes with a claim or a secret.
	pvs map[string]pvEntry
	// pvsBySecret indexes pvs by the secrets they name.
	pvsBySecret map[ref]map[string]struct{}
	// slices are the nodes of the ResourceSlices that name one.
	slices map[string]string
}

// NewGraph returns an empty graph; Populate feeds it.
func NewGraph() *Graph {
	return &Graph{
		pods:        map[podKey]podEntry{},
		related:     map[string]map[ref]int{},
		pvs:         map[string]pvEntry{},
		pvsBySecret: map[ref]map[string]struct{}{},
		slices:      map[string]string{},
	}
}

// Populate registers the graph's handlers on f's pod and
// PersistentVolume informers (the caller starts f) and returns what tells
// that the graph has seen their initial lists. Pods are added when bound,
// replaced on update and removed on delete.
func (g *Graph) Populate(f informers.SharedInformerFactory) (cache.InformerSynced, error) {
	pods, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { g.setPod(obj) },
		UpdateFunc: func(_, obj any) { g.setPod(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				g.DeletePod(p.Namespace, p.Name)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	pvs, err := f.Core().V1().PersistentVolumes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { g.setPV(obj) },
		UpdateFunc: func(_, obj any) { g.setPV(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pv, ok := obj.(*corev1.PersistentVolume); ok {
				g.DeletePV(pv.Name)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	slices, err := f.Resource().V1().ResourceSlices().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { g.setSlice(obj) },
		UpdateFunc: func(_, obj any) { g.setSlice(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if s, ok := obj.(*resourcev1.ResourceSlice); ok {
				g.DeleteSlice(s.Name)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return func() bool { return pods.HasSynced() && pvs.HasSynced() && slices.HasSynced() }, nil
}

func (g *Graph) setSlice(obj any) {
	if s, ok := obj.(*resourcev1.ResourceSlice); ok {
		g.AddSlice(s)
	}
}

// AddSlice records the node a ResourceSlice names, or forgets a slice
// that names none.
func (g *Graph) AddSlice(s *resourcev1.ResourceSlice) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
		delete(g.slices, s.Name)
		return
	}
	g.slices[s.Name] = *s.Spec.NodeName
}

// DeleteSlice forgets a ResourceSlice.
func (g *Graph) DeleteSlice(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.slices, name)
}

func (g *Graph) setPod(obj any) {
	if p, ok := obj.(*corev1.Pod); ok {
		g.AddPod(p)
	}
}

func (g *Graph) setPV(obj any) {
	if pv, ok := obj.(*corev1.PersistentVolume); ok {
		g.AddPV(pv)
	}
}

// AddPod records pod, or replaces what was recorded for it. A pod not
// bound to a node relates nothing; a mirror pod relates only itself to
// its node, as in kube (a node may not make itself a path to objects by
// creating a pod).
func (g *Graph) AddPod(pod *corev1.Pod) {
	key := podKey{pod.Namespace, pod.Name}
	var e podEntry
	if pod.Spec.NodeName != "" {
		e = podEntry{node: pod.Spec.NodeName}
		if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
			e.refs = podRefs(pod)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removePodLocked(key)
	if e.node == "" {
		return
	}
	g.pods[key] = e
	m := g.related[e.node]
	if m == nil {
		m = map[ref]int{}
		g.related[e.node] = m
	}
	for _, r := range e.refs {
		m[r]++
	}
}

// DeletePod forgets a pod.
func (g *Graph) DeletePod(namespace, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removePodLocked(podKey{namespace, name})
}

func (g *Graph) removePodLocked(key podKey) {
	e, ok := g.pods[key]
	if !ok {
		return
	}
	delete(g.pods, key)
	m := g.related[e.node]
	for _, r := range e.refs {
		if m[r]--; m[r] <= 0 {
			delete(m, r)
		}
	}
	if len(m) == 0 {
		delete(g.related, e.node)
	}
}

// AddPV records a PersistentVolume's claim and secrets, or replaces them.
func (g *Graph) AddPV(pv *corev1.PersistentVolume) {
	var e pvEntry
	if c := pv.Spec.ClaimRef; c != nil && c.Name != "" {
		e.claim = ref{PersistentVolumeClaim, c.Namespace, c.Name}
	}
	e.secrets = pvSecrets(pv)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removePVLocked(pv.Name)
	if e.claim.name == "" {
		// A volume bound to no claim is reachable from no pod.
		return
	}
	g.pvs[pv.Name] = e
	for _, s := range e.secrets {
		set := g.pvsBySecret[s]
		if set == nil {
			set = map[string]struct{}{}
			g.pvsBySecret[s] = set
		}
		set[pv.Name] = struct{}{}
	}
}

// DeletePV forgets a PersistentVolume.
func (g *Graph) DeletePV(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removePVLocked(name)
}

func (g *Graph) removePVLocked(name string) {
	e, ok := g.pvs[name]
	if !ok {
		return
	}
	delete(g.pvs, name)
	for _, s := range e.secrets {
		if set := g.pvsBySecret[s]; set != nil {
			delete(set, name)
			if len(set) == 0 {
				delete(g.pvsBySecret, s)
			}
		}
	}
}

// Related tells whether node has a path to the object: one of the pods
// bound to it references it (directly, or, for a PersistentVolume and
// its secrets, through a claim bound to the volume).
func (g *Graph) Related(node string, kind Kind, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if kind == ResourceSlice {
		return g.slices[name] == node
	}
	m := g.related[node]
	if m == nil {
		return false
	}
	switch kind {
	case PersistentVolume:
		e, ok := g.pvs[name]
		return ok && m[e.claim] > 0
	case Secret:
		if m[ref{Secret, namespace, name}] > 0 {
			return true
		}
		for pv := range g.pvsBySecret[ref{Secret, namespace, name}] {
			if m[g.pvs[pv].claim] > 0 {
				return true
			}
		}
		return false
	}
	return m[ref{kind, namespace, name}] > 0
}

// Size returns how many pods and PersistentVolumes the graph holds.
func (g *Graph) Size() (pods, pvs int) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.pods), len(g.pvs)
}

// podRefs lists, without duplicates, the objects a pod references: its
// service account, the secrets and configmaps of its volumes, image pull
// secrets and containers' environment (init and ephemeral containers
// too), its claims (an ephemeral volume's claim is <pod>-<volume>) and
// resource claims — what kube's podutil visitors walk.
func podRefs(pod *corev1.Pod) []ref {
	ns := pod.Namespace
	seen := map[ref]bool{}
	var out []ref
	add := func(k Kind, name string) {
		if name == "" {
			return
		}
		r := ref{k, ns, name}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	add(ServiceAccount, pod.Spec.ServiceAccountName)
	for _, s := range pod.Spec.ImagePullSecrets {
		add(Secret, s.Name)
	}
	env := func(from []corev1.EnvFromSource, vars []corev1.EnvVar) {
		for _, f := range from {
			if f.SecretRef != nil {
				add(Secret, f.SecretRef.Name)
			}
			if f.ConfigMapRef != nil {
				add(ConfigMap, f.ConfigMapRef.Name)
			}
		}
		for _, v := range vars {
			if v.ValueFrom == nil {
				continue
			}
			if v.ValueFrom.SecretKeyRef != nil {
				add(Secret, v.ValueFrom.SecretKeyRef.Name)
			}
			if v.ValueFrom.ConfigMapKeyRef != nil {
				add(ConfigMap, v.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		env(c.EnvFrom, c.Env)
	}
	for _, c := range pod.Spec.Containers {
		env(c.EnvFrom, c.Env)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		env(c.EnvFrom, c.Env)
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		src := &v.VolumeSource
		switch {
		case src.Secret != nil:
			add(Secret, src.Secret.SecretName)
		case src.ConfigMap != nil:
			add(ConfigMap, src.ConfigMap.Name)
		case src.Projected != nil:
			for _, p := range src.Projected.Sources {
				if p.Secret != nil {
					add(Secret, p.Secret.Name)
				}
				if p.ConfigMap != nil {
					add(ConfigMap, p.ConfigMap.Name)
				}
			}
		case src.PersistentVolumeClaim != nil:
			add(PersistentVolumeClaim, src.PersistentVolumeClaim.ClaimName)
		case src.Ephemeral != nil:
			add(PersistentVolumeClaim, pod.Name+"-"+v.Name)
		case src.CSI != nil && src.CSI.NodePublishSecretRef != nil:
			add(Secret, src.CSI.NodePublishSecretRef.Name)
		case src.AzureFile != nil:
			add(Secret, src.AzureFile.SecretName)
		case src.CephFS != nil && src.CephFS.SecretRef != nil:
			add(Secret, src.CephFS.SecretRef.Name)
		case src.Cinder != nil && src.Cinder.SecretRef != nil:
			add(Secret, src.Cinder.SecretRef.Name)
		case src.FlexVolume != nil && src.FlexVolume.SecretRef != nil:
			add(Secret, src.FlexVolume.SecretRef.Name)
		case src.RBD != nil && src.RBD.SecretRef != nil:
			add(Secret, src.RBD.SecretRef.Name)
		case src.ScaleIO != nil && src.ScaleIO.SecretRef != nil:
			add(Secret, src.ScaleIO.SecretRef.Name)
		case src.ISCSI != nil && src.ISCSI.SecretRef != nil:
			add(Secret, src.ISCSI.SecretRef.Name)
		case src.StorageOS != nil && src.StorageOS.SecretRef != nil:
			add(Secret, src.StorageOS.SecretRef.Name)
		}
	}
	for _, c := range pod.Spec.ResourceClaims {
		if c.ResourceClaimName != nil {
			add(ResourceClaim, *c.ResourceClaimName)
		}
	}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			add(ResourceClaim, *s.ResourceClaimName)
		}
	}
	return out
}

// pvSecrets lists the secrets a PersistentVolume's source names, each in
// its namespace (the claim's when the source does not say).
func pvSecrets(pv *corev1.PersistentVolume) []ref {
	var out []ref
	claimNS := ""
	if pv.Spec.ClaimRef != nil {
		claimNS = pv.Spec.ClaimRef.Namespace
	}
	add := func(s *corev1.SecretReference) {
		if s == nil || s.Name == "" {
			return
		}
		ns := s.Namespace
		if ns == "" {
			ns = claimNS
		}
		out = append(out, ref{Secret, ns, s.Name})
	}
	src := &pv.Spec.PersistentVolumeSource
	switch {
	case src.CSI != nil:
		add(src.CSI.ControllerPublishSecretRef)
		add(src.CSI.NodeStageSecretRef)
		add(src.CSI.NodePublishSecretRef)
		add(src.CSI.ControllerExpandSecretRef)
		add(src.CSI.NodeExpandSecretRef)
	case src.AzureFile != nil:
		ns := claimNS
		if src.AzureFile.SecretNamespace != nil && *src.AzureFile.SecretNamespace != "" {
			ns = *src.AzureFile.SecretNamespace
		}
		add(&corev1.SecretReference{Namespace: ns, Name: src.AzureFile.SecretName})
	case src.CephFS != nil:
		add(src.CephFS.SecretRef)
	case src.Cinder != nil:
		add(src.Cinder.SecretRef)
	case src.FlexVolume != nil:
		add(src.FlexVolume.SecretRef)
	case src.RBD != nil:
		add(src.RBD.SecretRef)
	case src.ScaleIO != nil:
		add(src.ScaleIO.SecretRef)
	case src.ISCSI != nil:
		add(src.ISCSI.SecretRef)
	case src.StorageOS != nil && src.StorageOS.SecretRef != nil:
		add(&corev1.SecretReference{Namespace: src.StorageOS.SecretRef.Namespace, Name: src.StorageOS.SecretRef.Name})
	}
	return out
}
