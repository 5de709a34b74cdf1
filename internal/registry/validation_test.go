package registry

import "testing"

// dns1123Label, dns1123Subdomain and dns1035Label are apimachinery's
// messages, which kube-apiserver prints after the offending value.
const (
	dns1123Label     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	dns1123Subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	dns1035Label     = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`

func TestValidateCreate(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string // the 422 message; empty when the object is valid
	}{{
		name:     "a minimal Deployment is valid",
		manifest: deployment,
	}, {
		name: "a Deployment whose selector does not match its template is refused",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: website}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: {"app":"website"}: ` + "`selector` does not match template `labels`",
	}, {
		name: "a Deployment without a selector is refused twice over",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `Deployment.apps "web" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"app":"web"}: ` + "`selector` does not match template `labels`]",
	}, {
		name: "a Deployment with an empty selector is refused",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `Deployment.apps "web" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for deployment`,
	}, {
		name: "a Deployment may not have negative replicas",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: -1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
	}, {
		name: "a rolling update may not have both maxSurge and maxUnavailable at zero",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
	}, {
		name: "a rolling update percentage must be well formed and at most 100%",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  strategy: {rollingUpdate: {maxSurge: "5", maxUnavailable: 150%}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `Deployment.apps "web" is invalid: [spec.strategy.rollingUpdate.maxSurge: Invalid value: "5": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%'), spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%]`,
	}, {
		name: "a Recreate Deployment may not carry rolling update parameters",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: "Deployment.apps \"web\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
	}, {
		name: "a Deployment's pod template must restart always",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {restartPolicy: Never, containers: [{name: web, image: nginx}]}
`,
		want: `Deployment.apps "web" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`,
	}, {
		name: "a ReplicaSet without a selector is refused",
		manifest: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1, namespace: default}
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `ReplicaSet.apps "web-1" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"app":"web"}: ` + "`selector` does not match template `labels`]",
	}, {
		name: "a Pod needs containers",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {}
`,
		want: `Pod "p" is invalid: spec.containers: Required value`,
	}, {
		name: "a container needs a valid name and an image",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: Web_1}]}
`,
		want: `Pod "p" is invalid: [spec.containers[0].name: Invalid value: "Web_1": ` + dns1123Label + `, spec.containers[0].image: Required value]`,
	}, {
		name: "container ports must be in range and uniquely named",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: web
    image: nginx
    ports: [{name: http, containerPort: 0}, {name: http, containerPort: 70000, protocol: HTTP}]
`,
		want: `Pod "p" is invalid: [spec.containers[0].ports[0].containerPort: Required value, spec.containers[0].ports[1].name: Duplicate value: "http", spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.containers[0].ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"]`,
	}, {
		name: "two containers may not share a name",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: web, image: a}, {name: web, image: b}]}
`,
		want: `Pod "p" is invalid: spec.containers[1].name: Duplicate value: "web"`,
	}, {
		name: "a volume mount must name a volume of the pod",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: web, image: nginx, volumeMounts: [{name: config, mountPath: /etc/app}]}]
`,
		want: `Pod "p" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "config"`,
	}, {
		name: "a probe needs exactly one handler and a liveness probe one success",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: web
    image: nginx
    livenessProbe: {successThreshold: 2, httpGet: {port: 80}, tcpSocket: {port: 80}}
    readinessProbe: {periodSeconds: 5}
`,
		want: `Pod "p" is invalid: [spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type, spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1, spec.containers[0].readinessProbe: Required value: must specify a handler type]`,
	}, {
		name: "a volume has one source and a unique DNS-label name",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: web, image: nginx}]
  volumes:
  - {name: data, emptyDir: {}, hostPath: {path: /srv}}
  - {name: Cfg, configMap: {}}
  - {name: logs}
  - {name: logs}
`,
		want: `Pod "p" is invalid: [spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type, spec.volumes[1].configMap.name: Required value, spec.volumes[1].name: Invalid value: "Cfg": ` + dns1123Label + `, spec.volumes[3].name: Duplicate value: "logs"]`,
	}, {
		name: "a preStop sleep must fit in the grace period",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: web, image: nginx, lifecycle: {preStop: {sleep: {seconds: 40}}}}]
`,
		want: `Pod "p" is invalid: spec.containers[0].lifecycle.preStop.sleep: Invalid value: 40: must be non-negative and less than terminationGracePeriodSeconds (30)`,
	}, {
		name: "on the host network a host port must equal the container port",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  hostNetwork: true
  containers: [{name: web, image: nginx, ports: [{containerPort: 80, hostPort: 81}]}]
`,
		want: "Pod \"p\" is invalid: spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when `hostNetwork` is true",
	}, {
		name: "an Exists toleration may not carry a value",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: web, image: nginx}]
  tolerations: [{key: dedicated, operator: Exists, value: db}]
`,
		want: "Pod \"p\" is invalid: spec.tolerations[0].operator: Invalid value: {\"Key\":\"dedicated\",\"Operator\":\"Exists\",\"Value\":\"db\",\"Effect\":\"\",\"TolerationSeconds\":null}: value must be empty when `operator` is 'Exists'",
	}, {
		name: "a secret key reference needs a name and a key",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: web, image: nginx, env: [{name: PASSWORD, valueFrom: {secretKeyRef: {key: ""}}}]}]
`,
		want: `Pod "p" is invalid: [spec.containers[0].env[0].valueFrom.secretKeyRef.name: Invalid value: "": ` + dns1123Subdomain + `, spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value]`,
	}, {
		name: "requests may not exceed limits",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: web
    image: nginx
    resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}
`,
		want: `Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
	}, {
		name: "an environment variable needs a name",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: web, image: nginx, env: [{value: x}, {name: "A=B"}]}]
`,
		want: `Pod "p" is invalid: [spec.containers[0].env[0].name: Required value, spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '=']`,
	}, {
		name: "a namespaced object needs a namespace",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
`,
		want: `ConfigMap "cfg" is invalid: metadata.namespace: Required value`,
	}, {
		name: "an object needs a name",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {namespace: default}
`,
		want: `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`,
	}, {
		name: "a name must be a DNS subdomain for most kinds",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: My_Config, namespace: default}
`,
		want: `ConfigMap "My_Config" is invalid: metadata.name: Invalid value: "My_Config": ` + dns1123Subdomain,
	}, {
		name: "a Service name must be a DNS-1035 label",
		manifest: `
apiVersion: v1
kind: Service
metadata: {name: 1web, namespace: default}
spec: {ports: [{port: 80}]}
`,
		want: `Service "1web" is invalid: metadata.name: Invalid value: "1web": ` + dns1035Label,
	}, {
		name: "a Namespace name must be a DNS label",
		manifest: `
apiVersion: v1
kind: Namespace
metadata: {name: team.a}
`,
		want: `Namespace "team.a" is invalid: metadata.name: Invalid value: "team.a": must not contain dots`,
	}, {
		name: "a generateName prefix may end with a dash",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg-x7k2p, generateName: cfg-, namespace: default}
`,
	}, {
		name: "a label key must be a qualified name",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default, labels: {"bad key": ok}}
`,
		want: `ConfigMap "cfg" is invalid: metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
	}, {
		name: "a label value must be short and plain",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default, labels: {app: "not valid!"}}
`,
		want: `ConfigMap "cfg" is invalid: metadata.labels: Invalid value: "not valid!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
	}, {
		name: "an annotation key must be a qualified name",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default, annotations: {"-bad": x}}
`,
		want: `ConfigMap "cfg" is invalid: metadata.annotations: Invalid value: "-bad": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
	}, {
		name: "a finalizer without a domain must be one of Kubernetes' own",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default, finalizers: [cleanup]}
`,
		want: `ConfigMap "cfg" is invalid: metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified`,
	}, {
		name: "a Service needs ports, named when there are several",
		manifest: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}, {port: 80}]}
`,
		want: `Service "web" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Required value, spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}]`,
	}, {
		name: "a Service without ports is refused",
		manifest: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {selector: {app: web}}
`,
		want: `Service "web" is invalid: spec.ports: Required value`,
	}, {
		name: "a ClusterIP Service may not set node ports",
		manifest: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80, nodePort: 30080}]}
`,
		want: "Service \"web\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
	}, {
		name: "an Ingress path needs a pathType",
		manifest: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec:
  rules:
  - host: shop.example.com
    http:
      paths: [{path: /, backend: {service: {name: web, port: {number: 80}}}}]
`,
		want: `Ingress.networking.k8s.io "web" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified`,
	}, {
		name: "an Ingress needs rules or a default backend",
		manifest: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec: {}
`,
		want: "Ingress.networking.k8s.io \"web\" is invalid: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified",
	}, {
		name: "an Ingress backend needs a service port",
		manifest: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec:
  rules:
  - http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: web}}}]
`,
		want: `Ingress.networking.k8s.io "web" is invalid: spec.rules[0].http.paths[0].backend: Required value: port name or number is required`,
	}, {
		name: "an Ingress host may not be an IP address",
		manifest: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec:
  rules:
  - host: 10.0.0.1
    http:
      paths: [{path: /, pathType: Exact, backend: {service: {name: web, port: {name: http}}}}]
`,
		want: `Ingress.networking.k8s.io "web" is invalid: spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`,
	}, {
		name: "an RBAC rule needs verbs, API groups and resources",
		manifest: `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: default}
rules: [{}]
`,
		want: `Role.rbac.authorization.k8s.io "reader" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].resources: Required value: resource rules must supply at least one resource]`,
	}, {
		name: "an RBAC name is a path segment and may contain colons",
		manifest: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:controller:minik"}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`,
	}, {
		name: "a ClusterRoleBinding may only refer to a ClusterRole",
		manifest: `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {kind: Role, name: r}
subjects: [{kind: ServiceAccount, name: robot}]
`,
		want: `ClusterRoleBinding.rbac.authorization.k8s.io "b" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value]`,
	}, {
		name: "a Lease duration must be positive",
		manifest: `
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: node-1, namespace: kube-node-lease}
spec: {holderIdentity: node-1, leaseDurationSeconds: 0}
`,
		want: `Lease.coordination.k8s.io "node-1" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0`,
	}, {
		name: "a ConfigMap key must be a valid file name",
		manifest: `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default}
data: {"a/b": x}
`,
		want: `ConfigMap "cfg" is invalid: data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
	}, {
		name: "a TLS Secret needs a certificate and a key",
		manifest: `
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: default}
type: kubernetes.io/tls
data: {tls.crt: Y2VydA==}
`,
		want: `Secret "tls" is invalid: data[tls.key]: Required value`,
	}, {
		name: "a core Event with an invalid name is refused by the generic metadata checks",
		manifest: `
apiVersion: v1
kind: Event
metadata: {name: "web.17a/x", namespace: default}
involvedObject: {kind: Pod, name: web, namespace: default}
reason: Started
`,
		want: `Event "web.17a/x" is invalid: metadata.name: Invalid value: "web.17a/x": may not contain '/'`,
	}, {
		name: "a core Event must be in its object's namespace",
		manifest: `
apiVersion: v1
kind: Event
metadata: {name: web.17a, namespace: default}
involvedObject: {kind: Pod, name: web, namespace: shop}
`,
		want: `Event "web.17a" is invalid: involvedObject.namespace: Invalid value: "shop": does not match event.namespace`,
	}, {
		name: "an events.k8s.io Event needs its reporting fields and event time",
		manifest: `
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.17a, namespace: default}
regarding: {kind: Pod, name: web, namespace: default}
type: Normal
`,
		want: `Event.events.k8s.io "web.17a" is invalid: eventTime: Required value`,
	}, {
		name: "an events.k8s.io Event is checked like one the recorder writes",
		manifest: `
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.17a, namespace: default}
eventTime: "2026-01-02T03:04:05.000000Z"
regarding: {kind: Pod, name: web, namespace: default}
type: Info
deprecatedCount: 2
`,
		want: `Event.events.k8s.io "web.17a" is invalid: [reportingController: Required value, reportingController: Invalid value: "": name part must be non-empty, reportingController: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), reportingInstance: Required value, action: Required value, reason: Required value, type: Invalid value: "": has invalid value: Info, count: Invalid value: "": needs to be unset]`,
	}, {
		name: "an EndpointSlice address must match its address type",
		manifest: `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: default}
addressType: IPv4
endpoints: [{addresses: ["fd00::1"]}, {addresses: []}]
`,
		want: `EndpointSlice.discovery.k8s.io "web-abc" is invalid: [endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address, endpoints[1].addresses: Required value: must contain at least 1 address]`,
	}, {
		name: "a Node taint needs a known effect",
		manifest: `
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {taints: [{key: dedicated, value: db, effect: Never}]}
`,
		want: `Node "n1" is invalid: metadata.taints[0].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
	}, {
		name: "a cluster-scoped object's stray namespace is dropped",
		manifest: `
apiVersion: v1
kind: Namespace
metadata: {name: shop, namespace: default}
`,
	}, {
		name: "a ResourceQuota limits standard resources",
		manifest: `
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: default}
spec: {hard: {pods: "1.5", gpus: "1"}}
`,
		want: `ResourceQuota "q" is invalid: [spec.hard[gpus]: Invalid value: "gpus": must be a standard resource type or fully qualified, spec.hard[gpus]: Invalid value: "gpus": must be a standard resource for quota, spec.hard[pods]: Invalid value: "1500m": must be an integer]`,
	}, {
		name: "an IngressClass controller must be a domain-prefixed path",
		manifest: `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: minik}
spec: {controller: minik}
`,
		want: `IngressClass.networking.k8s.io "minik" is invalid: spec.controller: Invalid value: "minik": must be a domain-prefixed path (such as "acme.io/foo")`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, tt.manifest)
			if got := invalid(obj, create(obj)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
