package registry

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// stored creates an object from a manifest as the generic layer would
// store it, with a resourceVersion.
func stored(t *testing.T, manifest string) runtime.Object {
	t.Helper()
	obj := decode(t, manifest)
	if errs := create(obj); len(errs) > 0 {
		t.Fatalf("stored object is invalid: %v", errs)
	}
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion("1")
	if !strategyOf(obj).NoGeneration {
		m.SetGeneration(1)
	}
	return obj
}

// replacement decodes the new version of an object as a client sends it
// (resourceVersion included) and keeps the stored status, as the generic
// layer does on main-resource updates.
func replacement(t *testing.T, manifest string, old runtime.Object) runtime.Object {
	t.Helper()
	obj := decode(t, manifest)
	m, _ := meta.Accessor(obj)
	om, _ := meta.Accessor(old)
	m.SetResourceVersion(om.GetResourceVersion())
	m.SetGeneration(om.GetGeneration())
	switch o := obj.(type) {
	case *corev1.Pod:
		o.Status = old.(*corev1.Pod).Status
	case *corev1.Service:
		o.Status = old.(*corev1.Service).Status
	}
	return obj
}

const pod = `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: web, image: "nginx:1.26"}]}
`

const service = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.96.0.10, selector: {app: web}, ports: [{port: 80}]}
`

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name      string
		old, new  string
		want      string // the 422 message, or its first line when wantFirst
		wantFirst bool
	}{{
		name: "a Deployment's selector is immutable",
		old:  deployment,
		new: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web2}}
  template:
    metadata: {labels: {app: web2}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"web2"}}: field is immutable`,
	}, {
		name: "a Deployment may change its image and replicas",
		old:  deployment,
		new: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
`,
	}, {
		name: "a ReplicaSet's selector is immutable",
		old: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}
`,
		new: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1, namespace: default}
spec:
  selector: {matchLabels: {app: web, tier: front}}
  template: {metadata: {labels: {app: web, tier: front}}, spec: {containers: [{name: web, image: nginx}]}}
`,
		want: `ReplicaSet.apps "web-1" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"front"}}: field is immutable`,
	}, {
		name: "a Pod may change its image",
		old:  pod,
		new: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: web, image: "nginx:1.27"}]}
`,
	}, {
		name: "a Pod may not change other fields of its spec",
		old:  pod,
		new: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: web, image: "nginx:1.26", ports: [{containerPort: 80}]}]}
`,
		want:      "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
		wantFirst: true,
	}, {
		name: "a Pod may not add containers",
		old:  pod,
		new: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: web, image: "nginx:1.26"}, {name: log, image: busybox}]}
`,
		want: `Pod "p" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers`,
	}, {
		name: "a Pod may not change its QoS class",
		old:  pod,
		new: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: web, image: "nginx:1.26", resources: {limits: {memory: 1Gi}}}]}
`,
		want:      `Pod "p" is invalid: [metadata: Invalid value: "BestEffort": Pod QoS is immutable, spec: Forbidden: pod updates may not change fields other than ` + "`spec.containers[*].image`",
		wantFirst: true,
	}, {
		name: "a Namespace may not be renamed",
		old:  `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`,
		new:  `{apiVersion: v1, kind: Namespace, metadata: {name: store}}`,
		want: `Namespace "store" is invalid: metadata.name: Invalid value: "store": field is immutable`,
	}, {
		name: "a Secret's type is immutable",
		old:  `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: default}, data: {tls.crt: eA==, tls.key: eA==}}`,
		new:  `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: default}, type: kubernetes.io/tls, data: {tls.crt: eA==, tls.key: eA==}}`,
		want: `Secret "s" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable`,
	}, {
		name: "an immutable ConfigMap's data is frozen",
		old:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: default}, immutable: true, data: {a: "1"}}`,
		new:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: default}, immutable: true, data: {a: "2"}}`,
		want: "ConfigMap \"cfg\" is invalid: data: Forbidden: field is immutable when `immutable` is set",
	}, {
		name: "a RoleBinding's roleRef cannot change",
		old:  `{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: b, namespace: default}, roleRef: {kind: Role, name: reader}}`,
		new:  `{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: b, namespace: default}, roleRef: {kind: Role, name: writer}}`,
		want: `RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"writer"}: cannot change roleRef`,
	}, {
		name: "a Service replaced without its cluster IP keeps it",
		old:  service,
		new: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {selector: {app: web}, ports: [{port: 80}]}
`,
	}, {
		name: "a Service's cluster IP may not change",
		old:  service,
		new: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.96.0.11, selector: {app: web}, ports: [{port: 80}]}
`,
		want: `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.11"]: may not change once set`,
	}, {
		name: "an EndpointSlice's address type is immutable",
		old:  `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: e, namespace: default}, addressType: IPv4}`,
		new:  `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: e, namespace: default}, addressType: IPv6}`,
		want: `EndpointSlice.discovery.k8s.io "e" is invalid: addressType: Invalid value: "IPv6": field is immutable`,
	}, {
		name: "an IngressClass's controller is immutable",
		old:  `{apiVersion: networking.k8s.io/v1, kind: IngressClass, metadata: {name: c}, spec: {controller: minik.dev/ingress}}`,
		new:  `{apiVersion: networking.k8s.io/v1, kind: IngressClass, metadata: {name: c}, spec: {controller: example.com/other}}`,
		want: `IngressClass.networking.k8s.io "c" is invalid: spec.controller: Invalid value: "example.com/other": field is immutable`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := stored(t, tt.old)
			obj := replacement(t, tt.new, old)
			got := invalid(obj, update(obj, old))
			if tt.wantFirst {
				got, _, _ = strings.Cut(got, "\n")
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("got  %s\nwant %s...", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestUpdatePreparation(t *testing.T) {
	t.Run("an update without a resourceVersion is refused", func(t *testing.T) {
		old := stored(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: default}}`)
		obj := decode(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, namespace: default}, data: {a: b}}`)
		want := `ConfigMap "cfg" is invalid: metadata.resourceVersion: Invalid value: "": must be specified for an update`
		if got := invalid(obj, update(obj, old)); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("a Deployment's annotation change bumps its generation", func(t *testing.T) {
		old := stored(t, deployment)
		obj := replacement(t, deployment, old)
		obj.(*appsv1.Deployment).Annotations = map[string]string{"kubernetes.io/change-cause": "bump"}
		if errs := update(obj, old); len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		if g := obj.(*appsv1.Deployment).Generation; g != 2 {
			t.Errorf("generation = %d, want 2", g)
		}
	})
	t.Run("a Service replaced without its cluster IP keeps its allocated values", func(t *testing.T) {
		old := stored(t, `{apiVersion: v1, kind: Service, metadata: {name: web, namespace: default}, spec: {type: NodePort, clusterIP: 10.96.0.10, ports: [{name: http, port: 80, nodePort: 30080}]}}`)
		obj := replacement(t, `{apiVersion: v1, kind: Service, metadata: {name: web, namespace: default}, spec: {type: NodePort, ports: [{name: http, port: 80}]}}`, old)
		if errs := update(obj, old); len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		s := obj.(*corev1.Service).Spec
		if s.ClusterIP != "10.96.0.10" || len(s.ClusterIPs) != 1 || s.Ports[0].NodePort != 30080 || s.IPFamilyPolicy == nil {
			t.Errorf("spec = clusterIP %q, clusterIPs %v, nodePort %d, ipFamilyPolicy %v", s.ClusterIP, s.ClusterIPs, s.Ports[0].NodePort, s.IPFamilyPolicy)
		}
	})
	t.Run("a Namespace update keeps its name label", func(t *testing.T) {
		old := stored(t, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}}`)
		obj := replacement(t, `{apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {team: a}}}`, old)
		if errs := update(obj, old); len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		if l := obj.(*corev1.Namespace).Labels; l[corev1.LabelMetadataName] != "shop" || l["team"] != "a" {
			t.Errorf("labels = %v", l)
		}
	})
}
