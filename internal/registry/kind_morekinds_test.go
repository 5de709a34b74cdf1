package registry

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Validation and defaults of NetworkPolicies, IPAddresses, ServiceCIDRs,
// RuntimeClasses and the CSI kinds, with kube's messages.

// createCase is a manifest and the errors its create gets, one a line.
type createCase struct {
	name     string
	manifest string
	want     string
}

func runCreateCases(t *testing.T, cases []createCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := messages(create(decode(t, tc.manifest))); got != tc.want {
				t.Errorf("errors:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

const netpolHead = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np, namespace: demo}
`

func TestNetworkPolicyValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a policy selecting every pod is valid", netpolHead + "spec: {podSelector: {}}", ""},
		{"a peer needs a selector or a block", netpolHead + "spec: {podSelector: {}, ingress: [{from: [{}]}]}",
			"spec.ingress[0].from[0]: Required value: must specify a peer"},
		{"an ipBlock goes alone", netpolHead + "spec: {podSelector: {}, egress: [{to: [{ipBlock: {cidr: 10.0.0.0/8}, podSelector: {}}]}]}",
			"spec.egress[0].to[0]: Forbidden: may not specify both ipBlock and another peer"},
		{"an exception lies strictly inside the block", netpolHead + "spec: {podSelector: {}, ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/16, except: [10.1.0.0/24, 10.0.0.0/16]}}]}]}",
			"spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`\n" +
				"spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: \"10.0.0.0/16\": must be a strict subset of `cidr`"},
		{"a block's cidr is required", netpolHead + "spec: {podSelector: {}, ingress: [{from: [{ipBlock: {cidr: \"\"}}]}]}",
			"spec.ingress[0].from[0].ipBlock.cidr: Required value"},
		{"a CIDR with host bits is refused", netpolHead + "spec: {podSelector: {}, ingress: [{from: [{ipBlock: {cidr: 10.0.0.1/16}}]}]}",
			`spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.1/16": must not have bits set beyond the prefix length`},
		{"an end port needs a numeric port not above it", netpolHead + "spec: {podSelector: {}, ingress: [{ports: [{port: 90, endPort: 80}, {port: http, endPort: 81}, {endPort: 82}]}]}",
			"spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`\n" +
				"spec.ingress[0].ports[1].endPort: Invalid value: 81: may not be specified when `port` is non-numeric\n" +
				"spec.ingress[0].ports[2].endPort: Invalid value: 82: may not be specified when `port` is not specified"},
		{"protocols are TCP, UDP or SCTP", netpolHead + "spec: {podSelector: {}, ingress: [{ports: [{protocol: ICMP}]}]}",
			`spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"`},
		{"policy types are Ingress or Egress", netpolHead + "spec: {podSelector: {}, policyTypes: [Ingress, Sideways]}",
			`spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"`},
	})
	t.Run("defaults are Ingress (and Egress with egress rules) and TCP", func(t *testing.T) {
		np := decode(t, netpolHead+"spec: {podSelector: {}, ingress: [{ports: [{port: 80}]}], egress: [{}]}").(*networkingv1.NetworkPolicy)
		defaulted(np)
		if got := np.Spec.PolicyTypes; len(got) != 2 || got[0] != networkingv1.PolicyTypeIngress || got[1] != networkingv1.PolicyTypeEgress {
			t.Errorf("policyTypes %v; want [Ingress Egress]", got)
		}
		if p := np.Spec.Ingress[0].Ports[0].Protocol; p == nil || *p != "TCP" {
			t.Errorf("protocol %v; want TCP", p)
		}
	})
	t.Run("an update may keep an invalid CIDR the policy had", func(t *testing.T) {
		old := decode(t, netpolHead+"spec: {podSelector: {}, ingress: [{from: [{ipBlock: {cidr: 10.0.0.1/16}}]}]}").(*networkingv1.NetworkPolicy)
		old.ResourceVersion = "1"
		upd := old.DeepCopy()
		upd.Spec.Ingress = append(upd.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{})
		if got := messages(update(upd, old)); got != "" {
			t.Errorf("errors: %s", got)
		}
	})
}

func TestIPAddressValidation(t *testing.T) {
	const head = "apiVersion: networking.k8s.io/v1\nkind: IPAddress\n"
	runCreateCases(t, []createCase{
		{"a Service's address is valid", head + "metadata: {name: 10.96.0.10}\nspec: {parentRef: {resource: services, namespace: default, name: web}}", ""},
		{"the name is an address in canonical form", head + "metadata: {name: \"2001:db8:0::1\"}\nspec: {parentRef: {resource: services, name: web}}",
			`metadata.name: Invalid value: "2001:db8:0::1": must be in canonical form ("2001:db8::1")`},
		{"the parent is required", head + "metadata: {name: 10.96.0.10}\nspec: {}", "spec.parentRef: Required value"},
		{"the parent's resource and name are required", head + "metadata: {name: 10.96.0.10}\nspec: {parentRef: {group: Bad_Group}}",
			"spec.parentRef.group: Invalid value: \"Bad_Group\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n" +
				"spec.parentRef.resource: Required value\nspec.parentRef.name: Required value"},
	})
	t.Run("the parent cannot change", func(t *testing.T) {
		old := decode(t, head+"metadata: {name: 10.96.0.10, resourceVersion: \"1\"}\nspec: {parentRef: {resource: services, namespace: default, name: web}}").(*networkingv1.IPAddress)
		create(old)
		upd := old.DeepCopy()
		upd.Spec.ParentRef.Name = "thief"
		if got := messages(update(upd, old)); got != "spec.parentRef: Invalid value: null: field is immutable" {
			t.Errorf("errors: %s", got)
		}
	})
}

func TestServiceCIDRValidation(t *testing.T) {
	const head = "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: extra}\n"
	runCreateCases(t, []createCase{
		{"one CIDR of each family is valid", head + "spec: {cidrs: [10.0.0.0/24, \"fd00::/108\"]}", ""},
		{"a CIDR is required", head + "spec: {}", "spec.cidrs: Required value: at least one CIDR required"},
		{"two of one family are refused", head + "spec: {cidrs: [10.0.0.0/24, 10.1.0.0/24]}",
			`spec.cidrs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64`},
		{"a CIDR is in canonical form", head + "spec: {cidrs: [10.0.0.1/24]}",
			`spec.cidrs[0]: Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length`},
	})
	t.Run("a single family may gain the other, nothing else changes", func(t *testing.T) {
		old := decode(t, head+"spec: {cidrs: [10.0.0.0/24]}").(*networkingv1.ServiceCIDR)
		old.ResourceVersion = "1"
		dual := old.DeepCopy()
		dual.Spec.CIDRs = append(dual.Spec.CIDRs, "fd00::/108")
		if got := messages(update(dual, old)); got != "" {
			t.Errorf("adding a family: %s", got)
		}
		moved := old.DeepCopy()
		moved.Spec.CIDRs = []string{"10.9.0.0/24"}
		if got := messages(update(moved, old)); got != `spec.cidrs[0]: Invalid value: "10.9.0.0/24": field is immutable` {
			t.Errorf("changing a CIDR: %s", got)
		}
	})
}

func TestRuntimeClassValidation(t *testing.T) {
	const head = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\n"
	runCreateCases(t, []createCase{
		{"a handler with overhead and scheduling is valid", head + "handler: runsc\noverhead: {podFixed: {cpu: 100m}}\nscheduling: {nodeSelector: {a: b}, tolerations: [{key: a, operator: Exists}]}", ""},
		{"the handler is required", head, "handler: Required value"},
		{"the handler is a DNS label", head + "handler: Run.SC",
			`handler: Invalid value: "Run.SC": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"a negative overhead is refused", head + "handler: runsc\noverhead: {podFixed: {memory: -1Mi}}",
			`overhead.limits[memory]: Invalid value: "-1Mi": must be greater than or equal to 0`},
		{"a toleration appears once", head + "handler: runsc\nscheduling: {tolerations: [{key: a, operator: Exists}, {key: a, operator: Exists, tolerationSeconds: 5, effect: NoExecute}, {key: a, operator: Exists}]}",
			`scheduling.tolerations[2]: Duplicate value: {"key":"a","operator":"Exists"}`},
	})
}

func TestCSIKindsValidation(t *testing.T) {
	runCreateCases(t, []createCase{
		{"a CSIDriver with defaults is valid", "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: a.csi.example.com}\nspec: {}", ""},
		{"a CSIDriver's token requests differ and last at least 10 minutes", "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: a.csi.example.com}\nspec: {tokenRequests: [{audience: x, expirationSeconds: 60}, {audience: x}], fsGroupPolicy: Sometimes}",
			"spec.fsGroupPolicy: Unsupported value: \"Sometimes\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"\n" +
				"spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes\n" +
				"spec.tokenRequests[1].audience: Duplicate value: \"x\""},
		{"a CSINode's drivers are named once with a node ID", "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: node-1}\nspec: {drivers: [{name: a.example.com, nodeID: node-1}, {name: a.example.com, nodeID: \"\"}]}",
			"spec.drivers[1].nodeID: Required value\nspec.drivers[1].name: Duplicate value: \"a.example.com\""},
		{"a VolumeAttachment names exactly one source", "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: va}\nspec: {attacher: a.example.com, nodeName: node-1, source: {}}",
			"spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"},
		{"a CSIStorageCapacity is not negative", "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c, namespace: demo}\nstorageClassName: fast\ncapacity: -1Gi",
			`capacity: Invalid value: "-1Gi": must be greater than or equal to 0`},
		{"a VolumeAttributesClass has a driver and parameters", "apiVersion: storage.k8s.io/v1\nkind: VolumeAttributesClass\nmetadata: {name: gold}\ndriverName: \"\"",
			"driverName: Required value\nparameters: Required value: must contain at least one key/value pair"},
	})
	t.Run("CSIDriver defaults are kube's", func(t *testing.T) {
		d := decode(t, "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: a.csi.example.com}\nspec: {}")
		sameJSON(t, defaulted(d), `
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: a.csi.example.com}
spec:
  attachRequired: true
  podInfoOnMount: false
  storageCapacity: false
  requiresRepublish: false
  seLinuxMount: false
  preventPodSchedulingIfMissing: false
  fsGroupPolicy: ReadWriteOnceWithFSType
  volumeLifecycleModes: [Persistent]
`)
	})
	t.Run("a CSIDriver's attachRequired is fixed", func(t *testing.T) {
		old := decode(t, "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: a.csi.example.com, resourceVersion: \"1\"}\nspec: {}").(*storagev1.CSIDriver)
		create(old)
		upd := old.DeepCopy()
		upd.Spec.AttachRequired = new(false)
		if got := messages(update(upd, old)); got != "spec.attachedRequired: Invalid value: false: field is immutable" {
			t.Errorf("errors: %s", got)
		}
	})
}
