package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDefaultsOfMinimalManifests(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string
	}{{
		name: "a Deployment from a minimal manifest gets the workload and pod template defaults",
		manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {port: 80}}
`,
		want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  progressDeadlineSeconds: 600
  replicas: 1
  revisionHistoryLimit: 10
  selector: {matchLabels: {app: web}}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        ports: [{containerPort: 80, protocol: TCP}]
        readinessProbe:
          httpGet: {path: /, port: 80, scheme: HTTP}
          timeoutSeconds: 1
          periodSeconds: 10
          successThreshold: 1
          failureThreshold: 3
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
status: {}
`,
	}, {
		name: "a ReplicaSet without replicas gets one",
		manifest: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        imagePullPolicy: Always
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
status: {replicas: 0}
`,
	}, {
		name: "a Pod gets the pod-only defaults: service links, requests from limits, host ports on the host network",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  hostNetwork: true
  serviceAccount: robot
  containers:
  - name: app
    image: registry.example:5000/app
    ports: [{containerPort: 8080}]
    resources: {limits: {cpu: 500m, memory: 64Mi}}
  volumes:
  - name: scratch
  - name: config
    configMap: {name: app}
  - name: creds
    secret: {secretName: app}
`,
		want: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  hostNetwork: true
  enableServiceLinks: true
  serviceAccount: robot
  serviceAccountName: robot
  containers:
  - name: app
    image: registry.example:5000/app
    imagePullPolicy: Always
    ports: [{containerPort: 8080, hostPort: 8080, protocol: TCP}]
    resources:
      limits: {cpu: 500m, memory: 64Mi}
      requests: {cpu: 500m, memory: 64Mi}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
  volumes:
  - name: scratch
    emptyDir: {}
  - name: config
    configMap: {name: app, defaultMode: 420}
  - name: creds
    secret: {secretName: app, defaultMode: 420}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
  schedulerName: default-scheduler
  securityContext: {}
  terminationGracePeriodSeconds: 30
status: {}
`,
	}, {
		name: "a Service gets its type, affinity, traffic policies and target ports",
		manifest: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80}, {name: admin, port: 9000, targetPort: admin}]
`,
		want: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, protocol: TCP, targetPort: 80}
  - {name: admin, port: 9000, protocol: TCP, targetPort: admin}
  type: ClusterIP
  sessionAffinity: None
  internalTrafficPolicy: Cluster
status: {loadBalancer: {}}
`,
	}, {
		name: "a NodePort Service also gets the external traffic policy",
		manifest: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: NodePort
  sessionAffinity: ClientIP
  ports: [{port: 80}]
`,
		want: `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  ports: [{port: 80, protocol: TCP, targetPort: 80}]
  type: NodePort
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}
  externalTrafficPolicy: Cluster
  internalTrafficPolicy: Cluster
status: {loadBalancer: {}}
`,
	}, {
		name: "a Secret without a type is Opaque and its stringData is folded into data",
		manifest: `
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: default}
data: {a: YQ==}
stringData: {b: bee, a: eh}
`,
		want: `
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: default}
type: Opaque
data: {a: ZWg=, b: YmVl}
`,
	}, {
		name: "a Namespace gets its name label and the Active phase",
		manifest: `
apiVersion: v1
kind: Namespace
metadata: {name: shop}
`,
		want: `
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {kubernetes.io/metadata.name: shop}}
spec: {}
status: {phase: Active}
`,
	}, {
		name: "an EndpointSlice port gets TCP and an empty name",
		manifest: `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: default}
addressType: IPv4
ports: [{port: 8080}]
endpoints: [{addresses: [10.0.0.1]}]
`,
		want: `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: default}
addressType: IPv4
ports: [{name: "", port: 8080, protocol: TCP}]
endpoints: [{addresses: [10.0.0.1], conditions: {}}]
`,
	}, {
		name: "a RoleBinding gets the RBAC API group on its role and its user subjects",
		manifest: `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read, namespace: default}
roleRef: {kind: Role, name: reader}
subjects: [{kind: User, name: jane}, {kind: ServiceAccount, name: robot, namespace: default}]
`,
		want: `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: jane}
- {kind: ServiceAccount, name: robot, namespace: default}
`,
	}, {
		name: "a Node without allocatable gets its capacity",
		manifest: `
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.1.0/24}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
`,
		want: `
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.1.0/24, podCIDRs: [10.244.1.0/24]}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  daemonEndpoints: {kubeletEndpoint: {Port: 0}}
  nodeInfo: {architecture: "", bootID: "", containerRuntimeVersion: "", kernelVersion: "", kubeProxyVersion: "", kubeletVersion: "", machineID: "", operatingSystem: "", osImage: "", systemUUID: ""}
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sameJSON(t, defaulted(decode(t, tt.manifest)), tt.want)
		})
	}
}

func TestImagePullPolicyDefault(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.27", corev1.PullIfNotPresent},
		{"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullAlways},
		{"localhost:5000/team/app", corev1.PullAlways},
		{"registry.example:5000/team/app:v2", corev1.PullIfNotPresent},
		{"Bad/Name", corev1.PullIfNotPresent},
	}
	for _, tt := range tests {
		t.Run("image "+tt.image+" is pulled "+string(tt.want), func(t *testing.T) {
			c := corev1.Container{Image: tt.image}
			defaultContainer(&c)
			if c.ImagePullPolicy != tt.want {
				t.Errorf("imagePullPolicy = %s, want %s", c.ImagePullPolicy, tt.want)
			}
		})
	}
}

func TestPodCreatePreparation(t *testing.T) {
	tests := []struct {
		name      string
		resources string
		wantQOS   corev1.PodQOSClass
	}{
		{"a pod without requests or limits is BestEffort", `{}`, corev1.PodQOSBestEffort},
		{"a pod with limits only is Guaranteed, its requests defaulting to them", `{limits: {cpu: 1, memory: 1Gi}}`, corev1.PodQOSGuaranteed},
		{"a pod with requests below limits is Burstable", `{requests: {cpu: 100m}, limits: {cpu: 1, memory: 1Gi}}`, corev1.PodQOSBurstable},
		{"a pod limiting only memory is Burstable", `{limits: {memory: 1Gi}}`, corev1.PodQOSBurstable},
		{"a pod requesting only other resources is BestEffort", `{requests: {ephemeral-storage: 1Gi}}`, corev1.PodQOSBestEffort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decode(t, `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: app, image: app, resources: `+tt.resources+`}]}
`)
			if errs := create(obj); len(errs) > 0 {
				t.Fatalf("unexpected errors: %v", errs)
			}
			st := obj.(*corev1.Pod).Status
			if st.Phase != corev1.PodPending || st.QOSClass != tt.wantQOS {
				t.Errorf("status = {phase %s, qosClass %s}, want {Pending, %s}", st.Phase, st.QOSClass, tt.wantQOS)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	t.Run("a new Namespace is Active and carries the kubernetes finalizer", func(t *testing.T) {
		obj := decode(t, `{apiVersion: v1, kind: Namespace, metadata: {name: shop}, spec: {finalizers: [example.com/cleanup]}}`)
		if errs := create(obj); len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		sameJSON(t, obj, `
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {kubernetes.io/metadata.name: shop}}
spec: {finalizers: [example.com/cleanup, kubernetes]}
status: {phase: Active}
`)
	})
	t.Run("a new Service records its IP family and single-stack policy", func(t *testing.T) {
		obj := decode(t, `{apiVersion: v1, kind: Service, metadata: {name: web, namespace: default}, spec: {clusterIP: 10.96.0.10, ports: [{port: 53}]}}`)
		if errs := create(obj); len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		s := obj.(*corev1.Service).Spec
		if len(s.ClusterIPs) != 1 || s.ClusterIPs[0] != "10.96.0.10" || *s.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack || s.IPFamilies[0] != corev1.IPv4Protocol {
			t.Errorf("spec = clusterIPs %v, ipFamilyPolicy %v, ipFamilies %v", s.ClusterIPs, *s.IPFamilyPolicy, s.IPFamilies)
		}
	})
	t.Run("a new headless Service without selector requires dual stack", func(t *testing.T) {
		obj := decode(t, `{apiVersion: v1, kind: Service, metadata: {name: db, namespace: default}, spec: {clusterIP: None}}`)
		if errs := create(obj); len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		if p := obj.(*corev1.Service).Spec.IPFamilyPolicy; *p != corev1.IPFamilyPolicyRequireDualStack {
			t.Errorf("ipFamilyPolicy = %s", *p)
		}
	})
	t.Run("a new Pod with scheduling gates is marked as gated", func(t *testing.T) {
		obj := decode(t, `{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: default}, spec: {schedulingGates: [{name: example.com/wait}], containers: [{name: a, image: a}]}}`)
		if errs := create(obj); len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
		c := obj.(*corev1.Pod).Status.Conditions
		if len(c) != 1 || c[0].Type != corev1.PodScheduled || c[0].Reason != corev1.PodReasonSchedulingGated {
			t.Errorf("conditions = %+v", c)
		}
	})
}
