package nodeagent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	nodeauth "minik/internal/auth/node"
	"minik/internal/nodeagent/dra"
	"minik/internal/nodeagent/runtime"
)

// Node condition reasons and messages, as the kubelet posts them.
const (
	reasonKubeletReady = "KubeletReady"
	msgKubeletReady    = "kubelet is posting ready status"
)

// node is one simulated kubelet.
type node struct {
	cfg      *Config
	index    int
	name     string
	ip       netip.Addr
	cidr     netip.Prefix
	ln       net.Listener
	template *corev1.Node
	cs       kubernetes.Interface
	// admin, when set, applies the template labels a kubelet may not set.
	admin kubernetes.Interface
	rt    *runtime.Runtime
	// dra is the node's simulated DRA driver; nil without devices.
	dra    *dra.Driver
	rec    record.EventRecorder
	events record.EventBroadcaster
	log    *slog.Logger
	dir    string
	ref    *corev1.ObjectReference
	dialer *net.Dialer
	http   *http.Client
	// podsSynced, when set, tells the pool's shared pod watch has
	// synced; otherwise the node watches its own pods.
	podsSynced cache.InformerSynced

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	byName  map[string]*podWorker
	ipsUsed map[netip.Addr]types.UID
	stopped bool
	wg      sync.WaitGroup

	uid        types.UID
	lease      *coordinationv1.Lease
	lastReport time.Time
	renewFails int
}

// startEvents starts the node's event recorder. It runs before the pool's
// shared pod watch starts, which may hand the node a pod (and so record an
// event) before run has begun. The returned function stops it.
func (n *node) startEvents(ctx context.Context) (stop func()) {
	n.events = record.NewBroadcaster(record.WithContext(ctx))
	n.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: n.cs.CoreV1().Events("")})
	n.rec = n.events.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: n.name})
	return n.events.Shutdown
}

// run registers the node, then runs its kubelet until ctx is done:
// heartbeats, the pods bound to it, and its endpoint. ready is called once
// the node is registered and watches its pods.
func (n *node) run(ctx context.Context, ready func()) error {
	defer n.ln.Close()

	srv := &http.Server{Handler: n.handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
	go func() { _ = srv.Serve(n.ln) }()
	defer srv.Close()

	if err := n.register(ctx); err != nil {
		return err
	}
	if n.dra != nil {
		// The driver's plugin registers once the kubelet runs; its
		// slices stay when it stops.
		draDone := make(chan struct{})
		defer func() { <-draDone }()
		go func() {
			defer close(draDone)
			if err := n.dra.Start(ctx); err != nil {
				n.log.Error("dra driver stopped", "err", err)
			}
		}()
	}
	if n.podsSynced == nil {
		// The node's own watch of its pods, as the kubelet's.
		inf := podInformer(n.cs, fields.OneTermEqualSelector("spec.nodeName", n.name))
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { n.podChanged(obj) },
			UpdateFunc: func(_, obj any) { n.podChanged(obj) },
			DeleteFunc: func(obj any) { n.podRemoved(obj) },
		}); err != nil {
			return fmt.Errorf("node %s: watch pods: %w", n.name, err)
		}
		infDone := make(chan struct{})
		defer func() { <-infDone }()
		go func() {
			defer close(infDone)
			inf.RunWithContext(ctx)
		}()
		n.podsSynced = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), n.podsSynced) {
		return ctx.Err()
	}
	ready()
	n.heartbeat(ctx)
	n.stopPods()
	return nil
}

// podInformer watches pods with a field selector.
func podInformer(cs kubernetes.Interface, sel fields.Selector) cache.SharedIndexInformer {
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "pods", metav1.NamespaceAll, sel)
	return cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
}

// stopPods ends every pod worker: the node's containers die with it.
func (n *node) stopPods() {
	n.mu.Lock()
	n.stopped = true
	ws := make([]*podWorker, 0, len(n.workers))
	for _, w := range n.workers {
		ws = append(ws, w)
	}
	n.mu.Unlock()
	for _, w := range ws {
		w.cancel()
	}
	n.wg.Wait()
}

// desired is the Node the kubelet registers.
func (n *node) desired(now metav1.Time) *corev1.Node {
	zone := zones[(n.index-1)%len(zones)]
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.name,
			Labels: map[string]string{
				"beta.kubernetes.io/arch":      goruntime.GOARCH,
				"beta.kubernetes.io/os":        "linux",
				corev1.LabelArchStable:         goruntime.GOARCH,
				corev1.LabelOSStable:           "linux",
				corev1.LabelHostname:           n.name,
				corev1.LabelTopologyZone:       zone,
				corev1.LabelTopologyRegion:     "minik",
				corev1.LabelInstanceTypeStable: "minik.simulated",
			},
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: n.cidr.String(), PodCIDRs: []string{n.cidr.String()}},
	}
	capacity := defaultCapacity.DeepCopy()
	var allocatable corev1.ResourceList
	sum := sha256.Sum256([]byte(n.name))
	id := hex.EncodeToString(sum[:16])
	info := corev1.NodeSystemInfo{
		MachineID: id, SystemUUID: id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32],
		BootID: hex.EncodeToString(sum[16:]), KernelVersion: kernelVersion, OSImage: osImage,
		ContainerRuntimeVersion: ContainerRuntimeVersion, KubeletVersion: KubeletVersion,
		OperatingSystem: "linux", Architecture: goruntime.GOARCH,
	}
	if t := n.template; t != nil {
		for k, v := range t.Labels {
			if !nodeauth.IsRestrictedLabel(k) {
				node.Labels[k] = v
			}
		}
		if len(t.Annotations) > 0 {
			maps.Copy(node.Annotations, t.Annotations)
		}
		node.Spec.Taints = append([]corev1.Taint(nil), t.Spec.Taints...)
		node.Spec.Unschedulable = t.Spec.Unschedulable
		for k, v := range t.Status.Capacity {
			capacity[k] = v
		}
		if len(t.Status.Allocatable) > 0 {
			allocatable = t.Status.Allocatable.DeepCopy()
		}
		ti := t.Status.NodeInfo
		for _, f := range []struct{ dst, src *string }{
			{&info.KernelVersion, &ti.KernelVersion}, {&info.OSImage, &ti.OSImage},
			{&info.ContainerRuntimeVersion, &ti.ContainerRuntimeVersion}, {&info.KubeletVersion, &ti.KubeletVersion},
			{&info.Architecture, &ti.Architecture}, {&info.OperatingSystem, &ti.OperatingSystem},
		} {
			if *f.src != "" {
				*f.dst = *f.src
			}
		}
	}
	if allocatable == nil {
		allocatable = capacity.DeepCopy()
	}
	for k, v := range capacity {
		if _, ok := allocatable[k]; !ok {
			allocatable[k] = v
		}
	}
	node.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: allocatable,
		Phase:       "",
		Conditions:  readyConditions(nil, now),
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: n.ip.String()},
			{Type: corev1.NodeHostName, Address: n.name},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(n.cfg.KubeletPort)}},
		NodeInfo:        info,
	}
	return node
}

// readyConditions are a healthy node's conditions, keeping the transition
// times of those that do not change.
func readyConditions(old []corev1.NodeCondition, now metav1.Time) []corev1.NodeCondition {
	want := []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: reasonKubeletReady, Message: msgKubeletReady},
	}
	for i := range want {
		want[i].LastHeartbeatTime, want[i].LastTransitionTime = now, now
		for _, o := range old {
			if o.Type == want[i].Type && o.Status == want[i].Status {
				want[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	// Conditions posted by others (a node problem detector) stay.
	for _, o := range old {
		switch o.Type {
		case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady:
		default:
			want = append(want, o)
		}
	}
	return want
}

// conditionsDiffer tells whether the kubelet's conditions changed in
// anything but their heartbeat.
func conditionsDiffer(a, b []corev1.NodeCondition) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || a[i].Message != b[i].Message {
			return true
		}
	}
	return false
}

// register creates the Node, or, when it exists (a restart), brings its
// status up to date, retrying until the API answers.
func (n *node) register(ctx context.Context) error {
	n.nodeEvent(corev1.EventTypeNormal, "Starting", "Starting kubelet.")
	delay := 100 * time.Millisecond
	for {
		err := n.tryRegister(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n.log.Warn("node registration failed, retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 7*time.Second)
	}
	n.nodeEvent(corev1.EventTypeNormal, "NodeHasSufficientMemory", fmt.Sprintf("Node %s status is now: NodeHasSufficientMemory", n.name))
	n.nodeEvent(corev1.EventTypeNormal, "NodeHasNoDiskPressure", fmt.Sprintf("Node %s status is now: NodeHasNoDiskPressure", n.name))
	n.nodeEvent(corev1.EventTypeNormal, "NodeHasSufficientPID", fmt.Sprintf("Node %s status is now: NodeHasSufficientPID", n.name))
	n.nodeEvent(corev1.EventTypeNormal, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods")
	n.nodeEvent(corev1.EventTypeNormal, "NodeReady", fmt.Sprintf("Node %s status is now: NodeReady", n.name))
	return nil
}

func (n *node) tryRegister(ctx context.Context) error {
	now := metav1.NewTime(n.cfg.Clock.Now().Truncate(time.Second))
	want := n.desired(now)
	created, err := n.cs.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
	if err == nil {
		n.lastReport = n.cfg.Clock.Now()
		n.uid = created.UID
		if err := n.applyRestrictedLabels(ctx, created); err != nil {
			return err
		}
		return n.renewLease(ctx)
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("register node %s: %w", n.name, err)
	}
	cur, err := n.cs.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.name, err)
	}
	// The kubelet reconciles its own labels and keeps everyone else's.
	upd := cur.DeepCopy()
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	changed := false
	for k, v := range want.Labels {
		if upd.Labels[k] != v {
			upd.Labels[k], changed = v, true
		}
	}
	if upd.Spec.PodCIDR == "" {
		upd.Spec.PodCIDR, upd.Spec.PodCIDRs, changed = want.Spec.PodCIDR, want.Spec.PodCIDRs, true
	}
	if changed {
		if cur, err = n.cs.CoreV1().Nodes().Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("register node %s: %w", n.name, err)
		}
	}
	st := cur.DeepCopy()
	want.Status.Conditions = readyConditions(cur.Status.Conditions, now)
	st.Status = want.Status
	if _, err := n.cs.CoreV1().Nodes().UpdateStatus(ctx, st, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("register node %s: update status: %w", n.name, err)
	}
	n.lastReport = n.cfg.Clock.Now()
	n.uid = cur.UID
	if err := n.applyRestrictedLabels(ctx, cur); err != nil {
		return err
	}
	return n.renewLease(ctx)
}

// applyRestrictedLabels sets, with the administrator's client, the
// template's labels the node may not set itself.
func (n *node) applyRestrictedLabels(ctx context.Context, cur *corev1.Node) error {
	if n.template == nil {
		return nil
	}
	missing := map[string]any{}
	for k, v := range n.template.Labels {
		if got, ok := cur.Labels[k]; nodeauth.IsRestrictedLabel(k) && (!ok || got != v) {
			missing[k] = v
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if n.admin == nil {
		n.log.Warn("template labels a node may not set itself are not applied (no administrator client)", "labels", slices.Sorted(maps.Keys(missing)))
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": missing}})
	if err != nil {
		return fmt.Errorf("label node %s: %w", n.name, err)
	}
	if _, err := n.admin.CoreV1().Nodes().Patch(ctx, n.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label node %s: %w", n.name, err)
	}
	return nil
}

func (n *node) nodeEvent(typ, reason, msg string) {
	n.rec.Event(n.ref, typ, reason, msg)
}

// heartbeat renews the node's Lease and checks its status until ctx is
// done. Nodes start at a random point of the interval, so that a thousand
// of them do not renew at once.
func (n *node) heartbeat(ctx context.Context) {
	t := n.cfg.Timing
	jitter := time.Duration(rand.Int64N(int64(t.LeaseRenewInterval)))
	select {
	case <-ctx.Done():
		return
	case <-n.cfg.Clock.After(jitter):
	}
	lastStatus := n.cfg.Clock.Now()
	tick := n.cfg.Clock.NewTicker(t.LeaseRenewInterval)
	defer tick.Stop()
	for {
		lapsed := n.renewFails > 0
		if err := n.renewLease(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			n.renewFails++
			n.log.Warn("lease renewal failed", "err", err)
		} else {
			n.renewFails = 0
		}
		now := n.cfg.Clock.Now()
		if lapsed || now.Sub(lastStatus) >= t.NodeStatusUpdate {
			lastStatus = now
			if err := n.syncStatus(ctx); err != nil && ctx.Err() == nil {
				n.log.Warn("node status update failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
	}
}

// renewLease renews (or creates) the node's Lease in kube-node-lease.
func (n *node) renewLease(ctx context.Context) error {
	leases := n.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(n.cfg.Clock.Now())
	for attempt := 0; attempt < 3; attempt++ {
		if n.lease == nil {
			cur, err := leases.Get(ctx, n.name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				dur := int32(n.cfg.Timing.LeaseDuration / time.Second)
				l := &coordinationv1.Lease{
					ObjectMeta: metav1.ObjectMeta{Name: n.name, Namespace: corev1.NamespaceNodeLease},
					Spec:       coordinationv1.LeaseSpec{HolderIdentity: &n.name, LeaseDurationSeconds: &dur, RenewTime: &now},
				}
				if n.uid != "" {
					l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.name, UID: n.uid}}
				}
				created, err := leases.Create(ctx, l, metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					continue
				}
				if err != nil {
					return fmt.Errorf("create lease %s: %w", n.name, err)
				}
				n.lease = created
				return nil
			case err != nil:
				return fmt.Errorf("get lease %s: %w", n.name, err)
			}
			n.lease = cur
		}
		l := n.lease.DeepCopy()
		l.Spec.RenewTime = &now
		l.Spec.HolderIdentity = &n.name
		if l.Spec.LeaseDurationSeconds == nil {
			dur := int32(n.cfg.Timing.LeaseDuration / time.Second)
			l.Spec.LeaseDurationSeconds = &dur
		}
		updated, err := leases.Update(ctx, l, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			n.lease = nil
			continue
		}
		if err != nil {
			return fmt.Errorf("renew lease %s: %w", n.name, err)
		}
		n.lease = updated
		return nil
	}
	return fmt.Errorf("renew lease %s: too many conflicts", n.name)
}

// syncStatus posts the node's status when its conditions changed (the
// node lifecycle controller marked it Unknown while the node was away)
// or when the report interval has passed.
func (n *node) syncStatus(ctx context.Context) error {
	cur, err := n.cs.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get node %s: %w", n.name, err)
	}
	now := n.cfg.Clock.Now()
	conds := readyConditions(cur.Status.Conditions, metav1.NewTime(now.Truncate(time.Second)))
	stale := false
	for _, a := range cur.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != n.ip.String() {
			stale = true
		}
	}
	if !conditionsDiffer(conds, cur.Status.Conditions) && !stale && now.Sub(n.lastReport) < n.cfg.Timing.NodeStatusReport {
		return nil
	}
	upd := cur.DeepCopy()
	upd.Status.Conditions = conds
	upd.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.ip.String()}, {Type: corev1.NodeHostName, Address: n.name}}
	upd.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(n.cfg.KubeletPort)
	if _, err := n.cs.CoreV1().Nodes().UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update node %s status: %w", n.name, err)
	}
	if cond(cur.Status.Conditions, corev1.NodeReady) != corev1.ConditionTrue {
		n.nodeEvent(corev1.EventTypeNormal, "NodeReady", fmt.Sprintf("Node %s status is now: NodeReady", n.name))
	}
	n.lastReport = now
	return nil
}

func cond(cs []corev1.NodeCondition, t corev1.NodeConditionType) corev1.ConditionStatus {
	for _, c := range cs {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// podChanged hands a pod's new version to its worker, starting one for a
// pod the node has not seen.
func (n *node) podChanged(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	w, ok := n.workers[pod.UID]
	if !ok {
		w = newPodWorker(n, pod)
		n.workers[pod.UID] = w
		n.byName[pod.Namespace+"/"+pod.Name] = w
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			w.run()
			n.forget(w)
		}()
	}
	n.mu.Unlock()
	w.update(pod)
}

// podRemoved stops the worker of a pod deleted from the API.
func (n *node) podRemoved(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	n.mu.Lock()
	w := n.workers[pod.UID]
	n.mu.Unlock()
	if w != nil {
		w.removed()
	}
}

func (n *node) forget(w *podWorker) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.workers, w.uid)
	if n.byName[w.key] == w {
		delete(n.byName, w.key)
	}
	for ip, uid := range n.ipsUsed {
		if uid == w.uid {
			delete(n.ipsUsed, ip)
		}
	}
}

// errNoIP is the CNI's answer when the pod CIDR is full.
var errNoIP = errors.New("no IP addresses available")

// allocateIP gives a pod the first free address of the node's block
// (.2 to .254), preferring the one it had.
func (n *node) allocateIP(uid types.UID, prefer string) (netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p, err := netip.ParseAddr(prefer); err == nil && n.cidr.Contains(p) && p != n.ip {
		if owner, used := n.ipsUsed[p]; !used || owner == uid {
			n.ipsUsed[p] = uid
			return p, nil
		}
	}
	base := n.cidr.Addr().As4()
	for i := 2; i < 255; i++ {
		a := netip.AddrFrom4([4]byte{base[0], base[1], base[2], byte(i)})
		if _, used := n.ipsUsed[a]; !used {
			n.ipsUsed[a] = uid
			return a, nil
		}
	}
	first := netip.AddrFrom4([4]byte{base[0], base[1], base[2], 1})
	last := netip.AddrFrom4([4]byte{base[0], base[1], base[2], 254})
	return netip.Addr{}, fmt.Errorf("failed to allocate for range 0: %w in range set: %s-%s", errNoIP, first, last)
}

func (n *node) releaseIP(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ip, owner := range n.ipsUsed {
		if owner == uid {
			delete(n.ipsUsed, ip)
		}
	}
}

// podDir is where a pod's logs live.
func (n *node) podDir(pod *corev1.Pod) string {
	return filepath.Join(n.dir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}
