package registry

import (
	"context"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation and defaults of the resource.k8s.io kinds, with kube's
// messages.

const claimHead = `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: claim, namespace: demo}
`

const sliceHead = `apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: slice}
`

const classHead = `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: class}
`

func TestDeviceClassValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a class without selectors is valid", classHead + "spec: {}", ""},
		{"a selector compiles", classHead + `spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}`, ""},
		{"a selector needs cel", classHead + "spec: {selectors: [{}]}", "spec.selectors[0].cel: Required value"},
		{"an undeclared variable does not compile", classHead + "spec: {selectors: [{cel: {expression: noSuchVar}}]}",
			"spec.selectors[0].cel.expression: Invalid value: \"noSuchVar\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^"},
		{"a selector is a bool", classHead + `spec: {selectors: [{cel: {expression: 'device.driver'}}]}`,
			`spec.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to bool or the unknown type, not string`},
		{"configuration is opaque JSON objects", classHead + `spec: {config: [{}, {opaque: {driver: "", parameters: [1]}}]}`,
			"spec.config[0].opaque: Required value\n" +
				"spec.config[1].opaque.driver: Required value\n" +
				`spec.config[1].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object`},
		{"an opaque configuration's driver is a DNS subdomain in any case", classHead + `spec: {config: [{opaque: {driver: Gpu.Example.com, parameters: {}}}, {opaque: {driver: gpu_example, parameters: {}}}]}`,
			`spec.config[1].opaque.driver: Invalid value: "gpu_example": an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"an extended resource name is one a pod may request", classHead + "spec: {extendedResourceName: cpu}",
			`spec.extendedResourceName: Invalid value: "cpu": must be a valid extended resource name`},
	})
	t.Run("selectors stored unchanged are not compiled again", func(t *testing.T) {
		old := decode(t, classHead+"spec: {selectors: [{cel: {expression: noSuchVar}}]}").(*resourcev1.DeviceClass)
		old.ResourceVersion = "1"
		upd := old.DeepCopy()
		upd.Labels = map[string]string{"a": "b"}
		if got := messages(update(upd, old)); got != "" {
			t.Errorf("errors: %s", got)
		}
	})
}

func TestResourceClaimValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"an exact request is valid", claimHead + "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}", ""},
		{"a request is exact or a list of alternatives", claimHead + "spec: {devices: {requests: [{name: gpu}]}}",
			"spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"},
		{"not both", claimHead + "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}, firstAvailable: [{name: a, deviceClassName: gpu}]}]}}",
			"spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"},
		{"names are DNS labels, unique", claimHead + "spec: {devices: {requests: [{name: GPU, exactly: {deviceClassName: gpu}}, {name: GPU, exactly: {deviceClassName: gpu}}]}}",
			`spec.devices.requests[0].name: Invalid value: "GPU": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')` + "\n" +
				`spec.devices.requests[1].name: Invalid value: "GPU": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')` + "\n" +
				`spec.devices.requests[1]: Duplicate value: "GPU"`},
		{"a class is required", claimHead + "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: ''}}]}}",
			"spec.devices.requests[0].exactly.deviceClassName: Required value"},
		{"All takes no count", claimHead + "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, allocationMode: All, count: 2}}]}}",
			"spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"},
		{"a count is positive", claimHead + "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, count: -1}}]}}",
			"spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"},
		{"allocation modes are All and ExactCount", claimHead + "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, allocationMode: Some}}]}}",
			`spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"`},
		{"constraints and config name requests of the claim", claimHead + `spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}],
  constraints: [{requests: [gpu, nic], matchAttribute: numa}, {}],
  config: [{requests: [gpu/a], opaque: {driver: gpu.example.com, parameters: {}}}]}}`,
			`spec.devices.constraints[0].requests[1]: Invalid value: "nic": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'` + "\n" +
				`spec.devices.constraints[0].matchAttribute: Invalid value: "numa": a fully qualified name must be a domain and a name separated by a slash` + "\n" +
				"spec.devices.constraints[1]: Required value: exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but multiple fields are set\n" +
				`spec.devices.config[0].requests[0]: Invalid value: "gpu/a": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'`},
		{"tolerations", claimHead + "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, tolerations: [{key: a, operator: Exists, value: b}, {operator: Maybe, effect: Sometimes}]}}]}}",
			"spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: \"b\": must be empty for operator `Exists`\n" +
				`spec.devices.requests[0].exactly.tolerations[1].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"` + "\n" +
				`spec.devices.requests[0].exactly.tolerations[1].effect: Unsupported value: "Sometimes": supported values: "NoExecute", "NoSchedule", "None"`},
		{"too many requests", claimHead + "spec: {devices: {requests: [" + strings.Repeat("{name: a, exactly: {deviceClassName: gpu}},", 33) + "]}}",
			"spec.devices.requests: Too many: 33: must have at most 32 items"},
	})
	t.Run("defaults are ExactCount of 1, tolerations Equal", func(t *testing.T) {
		c := decode(t, claimHead+"spec: {devices: {requests: [{name: a, exactly: {deviceClassName: gpu, tolerations: [{key: k}]}}, {name: b, firstAvailable: [{name: x, deviceClassName: gpu, allocationMode: All}]}]}}").(*resourcev1.ResourceClaim)
		defaulted(c)
		e := c.Spec.Devices.Requests[0].Exactly
		if e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 || e.Tolerations[0].Operator != resourcev1.DeviceTolerationOpEqual {
			t.Errorf("exactly defaulted to %+v", e)
		}
		if s := c.Spec.Devices.Requests[1].FirstAvailable[0]; s.Count != 0 {
			t.Errorf("an All subrequest got count %d", s.Count)
		}
	})
	t.Run("derived attributes are dropped (DRADerivedAttributes is off)", func(t *testing.T) {
		c := decode(t, claimHead+"spec: {devices: {requests: [{name: a, exactly: {deviceClassName: gpu, derivedAttributes: [{name: a.b/c, expression: 'true'}]}}]}}").(*resourcev1.ResourceClaim)
		if errs := create(c); len(errs) > 0 || c.Spec.Devices.Requests[0].Exactly.DerivedAttributes != nil {
			t.Errorf("errors %v, derived attributes %v", errs, c.Spec.Devices.Requests[0].Exactly.DerivedAttributes)
		}
	})
	t.Run("the spec is immutable", func(t *testing.T) {
		old := decode(t, claimHead+"spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}").(*resourcev1.ResourceClaim)
		defaulted(old)
		old.ResourceVersion = "1"
		upd := old.DeepCopy()
		upd.Spec.Devices.Requests[0].Exactly.DeviceClassName = "other"
		if got := messages(update(upd, old)); got != "spec: Invalid value: null: field is immutable" {
			t.Errorf("errors: %s", got)
		}
	})
}

// claimWithStatus is an allocatable claim and a status update of it.
func claimWithStatus(t *testing.T, status string) (upd, old *resourcev1.ResourceClaim) {
	t.Helper()
	old = decode(t, claimHead+"spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}").(*resourcev1.ResourceClaim)
	defaulted(old)
	old.ResourceVersion = "1"
	upd = old.DeepCopy()
	withStatus := decode(t, claimHead+"spec: {devices: {requests: []}}\nstatus: "+status).(*resourcev1.ResourceClaim)
	upd.Status = withStatus.Status
	return upd, old
}

// updateStatus runs a write of upd's status through /status over old,
// as the API layer does with the kind's status strategy, and returns the
// merged object and the validation errors.
func updateStatus(upd, old runtime.Object) (runtime.Object, field.ErrorList) {
	ss := strategyOf(old).Status
	merged := ss.Merge(old.DeepCopyObject(), upd)
	defaulted(merged)
	return merged, ss.ValidateUpdate(context.Background(), merged, old)
}

func TestResourceClaimStatusValidation(t *testing.T) {
	const allocation = "allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}]}}"
	for _, tc := range []struct {
		name, status, want string
	}{
		{"an allocation with a reservation is valid", "{" + allocation + ", reservedFor: [{resource: pods, name: web, uid: u1}]}", ""},
		{"a reservation needs an allocation", "{reservedFor: [{resource: pods, name: web, uid: u1}, {uid: u1}]}",
			"status.reservedFor[1].resource: Required value\n" +
				"status.reservedFor[1].name: Required value\n" +
				`status.reservedFor[1]: Duplicate value: "u1"` + "\n" +
				"status.reservedFor: Forbidden: may not be specified when `allocated` is not set"},
		{"results name the claim's requests and real devices", "{allocation: {devices: {results: [{request: cpu, driver: '', pool: '', device: GPU}], config: [{source: Elsewhere, opaque: {driver: d.example.com, parameters: {}}}]}}}",
			`status.allocation.devices.results[0].request: Invalid value: "cpu": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'` + "\n" +
				"status.allocation.devices.results[0].driver: Required value\n" +
				"status.allocation.devices.results[0].pool: Required value\n" +
				`status.allocation.devices.results[0].device: Invalid value: "GPU": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')` + "\n" +
				`status.allocation.devices.config[0].source: Unsupported value: "Elsewhere": supported values: "FromClaim", "FromClass"`},
		{"declarative checks of pools and share IDs", "{allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: 'a//B', device: gpu-0, shareID: not-a-uid}]}}}",
			`status.allocation.devices.results[0].pool: Invalid value: "a//B": segment 1: must not be empty` + "\n" +
				`status.allocation.devices.results[0].pool: Invalid value: "B": segment 2: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` + "\n" +
				`status.allocation.devices.results[0].shareID: Invalid value: "not-a-uid": must be a lowercase UUID in 8-4-4-4-12 format`},
		{"device status is of allocated devices", "{" + allocation + ", devices: [{driver: gpu.example.com, pool: node-1, device: gpu-1, conditions: []}]}",
			`status.devices[0]: Invalid value: "gpu.example.com/node-1/gpu-1": must be an allocated device in the claim`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upd, old := claimWithStatus(t, tc.status)
			if _, errs := updateStatus(upd, old); messages(errs) != tc.want {
				got := messages(errs)
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("an allocation is fixed once made", func(t *testing.T) {
		upd, old := claimWithStatus(t, "{"+allocation+"}")
		old.Status = *upd.Status.DeepCopy()
		upd.Status.Allocation.Devices.Results[0].Device = "gpu-1"
		if _, errs := updateStatus(upd, old); messages(errs) != "status.allocation: Invalid value: null: field cannot be modified once set" {
			got := messages(errs)
			t.Errorf("errors: %s", got)
		}
	})
	t.Run("a deleted claim's reservations only shrink", func(t *testing.T) {
		upd, old := claimWithStatus(t, "{"+allocation+", reservedFor: [{resource: pods, name: web, uid: u1}]}")
		old.Status = *upd.Status.DeepCopy()
		now := metav1.Now()
		old.DeletionTimestamp, upd.DeletionTimestamp = &now, &now
		upd.Status.ReservedFor = append(upd.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "db", UID: "u2"})
		if _, errs := updateStatus(upd, old); messages(errs) != "status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set" {
			got := messages(errs)
			t.Errorf("errors: %s", got)
		}
	})
	t.Run("deallocation drops the devices' status", func(t *testing.T) {
		upd, old := claimWithStatus(t, "{"+allocation+", devices: [{driver: gpu.example.com, pool: node-1, device: gpu-0, conditions: []}]}")
		old.Status = *upd.Status.DeepCopy()
		upd.Status.Allocation = nil
		merged, _ := updateStatus(upd, old)
		if d := merged.(*resourcev1.ResourceClaim).Status.Devices; d != nil {
			t.Errorf("devices kept: %v", d)
		}
	})
}

func TestResourceClaimTemplateValidation(t *testing.T) {
	const head = `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tmpl, namespace: demo}
`
	runCreateCases(t, []createCase{
		{"a template is valid", head + "spec: {metadata: {labels: {a: b}}, spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}", ""},
		{"only labels and annotations in the claim's metadata", head + "spec: {metadata: {name: x, finalizers: [a/b]}, spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}",
			"spec.metadata.name: Forbidden: cannot be set\nspec.metadata.finalizers: Forbidden: cannot be set"},
		{"the claim spec is checked", head + "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, count: -2}}]}}}",
			"spec.spec.devices.requests[0].exactly.count: Invalid value: -2: must be greater than zero"},
	})
}

func TestResourceSliceValidation(t *testing.T) {
	const pool = "driver: gpu.example.com, pool: {name: node-1, resourceSliceCount: 1}"
	runCreateCases(t, []createCase{
		{"a node's slice is valid", sliceHead + "spec: {" + pool + ", nodeName: node-1, devices: [{name: gpu-0, attributes: {model: {string: a100}, gpu.example.com/index: {int: 0}}, capacity: {memory: {value: 40Gi}}}]}", ""},
		{"one of the node fields", sliceHead + "spec: {" + pool + "}",
			"spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"},
		{"only one", sliceHead + "spec: {" + pool + ", nodeName: node-1, allNodes: true}",
			"spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"},
		{"a pool", sliceHead + "spec: {driver: gpu.example.com, pool: {name: '', resourceSliceCount: 0, generation: -1}, allNodes: true}",
			"spec.pool.name: Required value\n" +
				"spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero\n" +
				"spec.pool.generation: Invalid value: -1: must be greater than or equal to zero"},
		{"an attribute has exactly one value", sliceHead + "spec: {" + pool + ", allNodes: true, devices: [{name: a, attributes: {x: {}, w: {int: 1, bool: true}, z: {version: v1}}}]}",
			"spec.devices[0].attributes[w]: Invalid value: \"{int, bool}\": must specify exactly one of: `int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`\n" +
				"spec.devices[0].attributes[x]: Invalid value: \"\": must specify one of: `int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`\n" +
				`spec.devices[0].attributes[z].version: Invalid value: "v1": must be a string compatible with semver.org spec 2.0.0`},
		{"attribute names are C identifiers", sliceHead + "spec: {" + pool + ", allNodes: true, devices: [{name: a, attributes: {1x: {int: 1}, /y: {int: 1}}}]}",
			`spec.devices[0].attributes: Invalid value: "": the domain must not be empty` + "\n" +
				`spec.devices[0].attributes: Invalid value: "1x": a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')`},
		{"device names are unique", sliceHead + "spec: {" + pool + ", allNodes: true, devices: [{name: a}, {name: a}]}",
			`spec.devices[1]: Duplicate value: "a"`},
		{"per-device node selection", sliceHead + "spec: {" + pool + ", perDeviceNodeSelection: true, devices: [{name: a}, {name: b, nodeName: node-1}]}",
			"spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"},
		{"a device's node needs per-device selection", sliceHead + "spec: {" + pool + ", allNodes: true, devices: [{name: a, allNodes: true}]}",
			"spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"},
		{"a request policy needs multiple allocations", sliceHead + "spec: {" + pool + ", allNodes: true, devices: [{name: a, capacity: {mem: {value: 1Gi, requestPolicy: {default: 1Gi}}}}]}",
			"spec.devices[0].capacity[mem].requestPolicy: Forbidden: allowMultipleAllocations must be true"},
		{"taints", sliceHead + "spec: {" + pool + ", allNodes: true, devices: [{name: a, taints: [{key: '', effect: Never}]}]}",
			"spec.devices[0].taints[0].key: Invalid value: \"\": name part must be non-empty\n" +
				"spec.devices[0].taints[0].key: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n" +
				`spec.devices[0].taints[0].effect: Unsupported value: "Never": supported values: "NoExecute", "NoSchedule", "None"`},
	})
	t.Run("driver, pool and node are fixed", func(t *testing.T) {
		old := decode(t, sliceHead+"spec: {"+pool+", nodeName: node-1}").(*resourcev1.ResourceSlice)
		old.ResourceVersion = "1"
		upd := old.DeepCopy()
		upd.Spec.Driver, upd.Spec.Pool.Name = "nic.example.com", "node-2"
		if got := messages(update(upd, old)); got != "spec.pool.name: Invalid value: \"node-2\": field is immutable\nspec.driver: Invalid value: \"nic.example.com\": field is immutable" {
			t.Errorf("errors: %s", got)
		}
	})
	t.Run("taints get their time; disabled fields are dropped", func(t *testing.T) {
		s := decode(t, sliceHead+"spec: {"+pool+", allNodes: true, skipNodeOperations: ['*'], devices: [{name: a, taints: [{key: k, effect: NoSchedule}], attributes: {x: {ints: [1]}}}]}").(*resourcev1.ResourceSlice)
		defaulted(s)
		d := s.Spec.Devices[0]
		if d.Taints[0].TimeAdded == nil || s.Spec.SkipNodeOperations != nil || d.Attributes["x"].IntValues != nil {
			t.Errorf("defaulted to %+v", s.Spec)
		}
	})
	t.Run("field selectors", func(t *testing.T) {
		s := decode(t, sliceHead+"spec: {"+pool+", nodeName: node-1}").(*resourcev1.ResourceSlice)
		f := strategyOf(s).Fields(s)
		if f["spec.nodeName"] != "node-1" || f["spec.driver"] != "gpu.example.com" || f["spec.pool.name"] != "node-1" {
			t.Errorf("fields %v", f)
		}
	})
}

func TestDeviceTaintRuleValidation(t *testing.T) {
	const head = `apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: rule}
`
	runCreateCases(t, []createCase{
		{"a rule is valid", head + "spec: {deviceSelector: {driver: gpu.example.com, pool: node-1, device: gpu-0}, taint: {key: example.com/bad, effect: NoExecute}}", ""},
		{"a taint needs an effect", head + "spec: {deviceSelector: {driver: '', device: GPU}, taint: {key: k}}",
			"spec.deviceSelector.driver: Required value\n" +
				`spec.deviceSelector.device: Invalid value: "GPU": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')` + "\n" +
				"spec.taint.effect: Required value"},
	})
	t.Run("a new effect moves timeAdded", func(t *testing.T) {
		old := decode(t, head+"spec: {taint: {key: k, effect: NoSchedule, timeAdded: '2026-01-01T00:00:00Z'}}").(*resourcev1.DeviceTaintRule)
		old.ResourceVersion = "1"
		upd := old.DeepCopy()
		upd.Spec.Taint.Effect = resourcev1.DeviceTaintEffectNoExecute
		if errs := update(upd, old); len(errs) > 0 || upd.Spec.Taint.TimeAdded.Equal(old.Spec.Taint.TimeAdded) {
			t.Errorf("errors %v, timeAdded %v", errs, upd.Spec.Taint.TimeAdded)
		}
	})
}
