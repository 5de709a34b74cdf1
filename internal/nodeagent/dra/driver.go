// Package dra is minik's simulated Dynamic Resource Allocation driver,
// gpu.minik.io, run by each simulated node as a DRA driver's kubelet
// plugin runs beside the kubelet.
//
// Publishing: with the node's own credentials (the node authorizer lets a
// node write the ResourceSlices naming it), the driver publishes one pool
// named after the node, one ResourceSlice of Config.Devices devices
// gpu-0 … gpu-<N-1>, through the field's ResourceSlice controller
// (k8s.io/dynamic-resource-allocation/resourceslice), as kube's example
// driver (dra-example-driver, gpu.example.com) does. Each device has the
// example driver's attributes (index, uuid, model, driverVersion) and a
// memory capacity. The slices are owned by the Node, so that the garbage
// collector removes them with it. DeviceClass returns the class
// "gpu.minik.io" that selects the driver's devices by CEL; the node pool
// installs it, as the driver's chart would.
//
// Preparing: Prepare is NodePrepareResources for one allocated claim: it
// records the claim's devices of this node's pool (allocation results of
// this driver) and answers with what the example driver's CDI spec
// injects into containers: GPU_DEVICE_<i>=gpu-<i> for each device.
// Unprepare forgets the claim once no pod on the node uses it.
//
// Differences from a real driver: there is no gRPC plugin socket nor CDI
// files (the node agent calls Prepare directly), prepared claims are not
// checkpointed (an agent restart prepares again), and opaque device
// configuration is ignored.
package dra

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"
)

// DriverName is the simulated driver's name; its devices are gpu-<i>.
const DriverName = "gpu.minik.io"

// ClassName is the DeviceClass that selects the driver's devices.
const ClassName = DriverName

// Device attributes and capacity, as kube's example driver publishes them.
const (
	AttrIndex         resourcev1.QualifiedName = "index"
	AttrUUID          resourcev1.QualifiedName = "uuid"
	AttrModel         resourcev1.QualifiedName = "model"
	AttrDriverVersion resourcev1.QualifiedName = "driverVersion"
	CapacityMemory    resourcev1.QualifiedName = "memory"

	// Model is every simulated device's model.
	Model = "LATEST-GPU-MODEL"
	// Version is the driverVersion attribute.
	Version = "1.0.0"
	// Memory is every simulated device's memory capacity.
	Memory = "80Gi"
)

// DeviceClass is the class "gpu.minik.io": every device of the driver.
func DeviceClass() *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: ClassName},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", DriverName)},
		}}},
	}
}

// InstallDeviceClass creates the DeviceClass unless it exists (an
// administrator's edits stay).
func InstallDeviceClass(ctx context.Context, cs kubernetes.Interface) error {
	_, err := cs.ResourceV1().DeviceClasses().Create(ctx, DeviceClass(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("install deviceclass %s: %w", ClassName, err)
	}
	return nil
}

// DeviceName is the name of device i.
func DeviceName(i int) string { return fmt.Sprintf("gpu-%d", i) }

// Devices are the n devices of node.
func Devices(node string, n int) []resourcev1.Device {
	out := make([]resourcev1.Device, n)
	for i := range out {
		sum := sha256.Sum256([]byte(node + "/" + DeviceName(i)))
		id := hex.EncodeToString(sum[:16])
		out[i] = resourcev1.Device{
			Name: DeviceName(i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				AttrIndex:         {IntValue: ptr.To(int64(i))},
				AttrUUID:          {StringValue: ptr.To("gpu-" + id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:32])},
				AttrModel:         {StringValue: ptr.To(Model)},
				AttrDriverVersion: {VersionValue: ptr.To(Version)},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				CapacityMemory: {Value: resource.MustParse(Memory)},
			},
		}
	}
	return out
}

// Config configures one node's driver.
type Config struct {
	// NodeName is the node the driver runs on; its pool is named after
	// it. Required.
	NodeName string
	// Devices is how many devices the node has; zero publishes none (and
	// removes slices published before).
	Devices int
	// Client acts as the node (system:node:<name>). Required to Start.
	Client kubernetes.Interface
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
}

// Driver is one node's simulated DRA driver. Build it with New.
type Driver struct {
	cfg Config
	log *slog.Logger

	mu sync.Mutex
	// prepared are the claims prepared on the node, by UID.
	prepared map[types.UID]*prepared
}

// prepared is a claim prepared on the node and the pods that use it.
type prepared struct {
	claim PreparedClaim
	pods  map[types.UID]bool
}

// PreparedClaim is what NodePrepareResources made of a claim.
type PreparedClaim struct {
	Namespace, Name string
	UID             types.UID
	// Devices are the claim's devices on this node, in allocation order.
	Devices []PreparedDevice
}

// PreparedDevice is one prepared device and what containers see of it.
type PreparedDevice struct {
	// Request is the claim's request the device serves (request or
	// request/subrequest).
	Request string
	Pool    string
	Device  string
	// Env is what the device's CDI edits inject: NAME=value.
	Env []string
}

// New validates cfg and returns a driver.
func New(cfg Config) (*Driver, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("dra driver: a node name is required")
	}
	if cfg.Devices < 0 {
		return nil, fmt.Errorf("--dra-devices %d: must not be negative", cfg.Devices)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Driver{cfg: cfg, log: cfg.Logger, prepared: map[types.UID]*prepared{}}, nil
}

// resources is the driver's pool: one slice of the node's devices.
func (d *Driver) resources() *resourceslice.DriverResources {
	if d.cfg.Devices == 0 {
		return &resourceslice.DriverResources{}
	}
	return &resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{
		d.cfg.NodeName: {Slices: []resourceslice.Slice{{Devices: Devices(d.cfg.NodeName, d.cfg.Devices)}}},
	}}
}

// Start publishes the node's ResourceSlice and keeps it as desired (an
// edited or deleted slice is put back) until ctx is done. It blocks; the
// slices stay when it returns, as a stopped kubelet's do.
func (d *Driver) Start(ctx context.Context) error {
	if d.cfg.Client == nil {
		return fmt.Errorf("dra driver on node %s: a client is required", d.cfg.NodeName)
	}
	c, err := resourceslice.StartController(ctx, resourceslice.Options{
		DriverName: DriverName,
		KubeClient: d.cfg.Client,
		// The controller reads the Node's UID for the owner reference.
		Owner:     &resourceslice.Owner{APIVersion: "v1", Kind: "Node", Name: d.cfg.NodeName},
		Resources: d.resources(),
		ErrorHandler: func(_ context.Context, err error, msg string) {
			d.log.Warn("publishing resource slices failed, retrying", "driver", DriverName, "err", fmt.Errorf("%s: %w", msg, err))
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("dra driver on node %s: %w", d.cfg.NodeName, err)
	}
	<-ctx.Done()
	c.Stop()
	return nil
}

// Prepare is NodePrepareResources for an allocated claim used by pod: it
// records the claim's devices of this driver in this node's pool and
// returns them. Preparing a prepared claim again (another pod sharing it,
// or the same pod after a restart) returns the same devices.
func (d *Driver) Prepare(claim *resourcev1.ResourceClaim, pod types.UID) (PreparedClaim, error) {
	if claim.Status.Allocation == nil {
		return PreparedClaim{}, fmt.Errorf("ResourceClaim %s/%s: not allocated", claim.Namespace, claim.Name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.prepared[claim.UID]; p != nil {
		p.pods[pod] = true
		return p.claim, nil
	}
	pc := PreparedClaim{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != DriverName || r.Pool != d.cfg.NodeName {
			continue
		}
		i, ok := deviceIndex(r.Device)
		if !ok || i >= d.cfg.Devices {
			return PreparedClaim{}, fmt.Errorf("ResourceClaim %s/%s: device %s/%s does not exist on node %s", claim.Namespace, claim.Name, r.Pool, r.Device, d.cfg.NodeName)
		}
		pc.Devices = append(pc.Devices, PreparedDevice{
			Request: r.Request, Pool: r.Pool, Device: r.Device,
			Env: []string{fmt.Sprintf("GPU_DEVICE_%d=%s", i, r.Device)},
		})
	}
	d.prepared[claim.UID] = &prepared{claim: pc, pods: map[types.UID]bool{pod: true}}
	d.log.Info("prepared resource claim", "claim", claim.Namespace+"/"+claim.Name, "devices", len(pc.Devices))
	return pc, nil
}

// deviceIndex is i of device gpu-<i>.
func deviceIndex(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "gpu-")
	if !ok || s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	i := 0
	for _, c := range s {
		if c < '0' || c > '9' || i > 1<<20 {
			return 0, false
		}
		i = 10*i + int(c-'0')
	}
	return i, true
}

// Unprepare is NodeUnprepareResources: pod no longer uses the claim; once
// no pod on the node does, the claim's devices are released.
func (d *Driver) Unprepare(claim, pod types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.prepared[claim]
	if p == nil {
		return
	}
	delete(p.pods, pod)
	if len(p.pods) == 0 {
		delete(d.prepared, claim)
		d.log.Info("unprepared resource claim", "claim", p.claim.Namespace+"/"+p.claim.Name)
	}
}

// Prepared lists the claims prepared on the node, by namespace and name.
func (d *Driver) Prepared() []PreparedClaim {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]PreparedClaim, 0, len(d.prepared))
	for _, p := range d.prepared {
		out = append(out, p.claim)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}

// ContainerEnv is the environment the prepared claims inject into a
// container that references them: for each of the container's
// resources.claims (a pod claim, optionally one request), the variables
// of the claim's devices serving it. claims maps pod claim names to the
// prepared claims.
func ContainerEnv(refs []corev1.ResourceClaim, claims map[string]PreparedClaim) []string {
	var env []string
	for _, ref := range refs {
		pc, ok := claims[ref.Name]
		if !ok {
			continue
		}
		for _, dev := range pc.Devices {
			if ref.Request != "" && dev.Request != ref.Request && !strings.HasPrefix(dev.Request, ref.Request+"/") {
				continue
			}
			env = append(env, dev.Env...)
		}
	}
	return env
}
