package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidateReplicationController(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string // the 422 message; empty when the object is valid
	}{{
		name: "a selector defaulted from the template is valid",
		manifest: `
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default}
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`,
	}, {
		name: "no selector and no template labels",
		manifest: `
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default}
spec:
  template:
    spec: {containers: [{name: web, image: nginx}]}
`,
		want: `ReplicationController "web" is invalid: spec.selector: Required value`,
	}, {
		name: "no template",
		manifest: `
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default}
spec: {selector: {app: web}}
`,
		want: `ReplicationController "web" is invalid: spec.template: Required value`,
	}, {
		name: "a selector the template does not match, and what a replica's pod may not have",
		manifest: `
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default}
spec:
  replicas: -1
  minReadySeconds: -5
  selector: {app: web}
  template:
    metadata: {labels: {app: db}}
    spec: {restartPolicy: OnFailure, activeDeadlineSeconds: 30, containers: [{name: web, image: nginx}]}
`,
		want: `ReplicationController "web" is invalid: [spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0, spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.metadata.labels: Invalid value: {"app":"db"}: ` + "`selector` does not match template `labels`" + `, spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always", spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported]`,
	}, {
		name: "the template is validated as a pod's",
		manifest: `
apiVersion: v1
kind: ReplicationController
metadata: {name: Web, namespace: default}
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: Web, image: nginx}]}
`,
		want: `ReplicationController "Web" is invalid: [metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.template.spec.containers[0].name: Invalid value: "Web": ` + dns1123Label + `]`,
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

func TestReplicationControllerDefaults(t *testing.T) {
	obj := defaulted(decode(t, `
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default}
spec:
  template:
    metadata: {labels: {app: web, tier: front}}
    spec: {containers: [{name: web, image: nginx}]}
`)).(*corev1.ReplicationController)
	sameJSON(t, obj, `
apiVersion: v1
kind: ReplicationController
metadata:
  name: web
  namespace: default
  labels: {app: web, tier: front}
spec:
  replicas: 1
  selector: {app: web, tier: front}
  template:
    metadata: {labels: {app: web, tier: front}}
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
status:
  replicas: 0
`)

	// Labels and a selector of the object's own are kept.
	own := defaulted(decode(t, `
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default, labels: {team: a}}
spec:
  replicas: 0
  selector: {app: web}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec: {containers: [{name: web, image: nginx}]}
`)).(*corev1.ReplicationController)
	if own.Labels["team"] != "a" || len(own.Labels) != 1 || len(own.Spec.Selector) != 1 || *own.Spec.Replicas != 0 {
		t.Errorf("labels %v, selector %v, replicas %d; want the object's own", own.Labels, own.Spec.Selector, *own.Spec.Replicas)
	}
}

// A ReplicationController's selector may change, unlike a ReplicaSet's.
func TestReplicationControllerSelectorIsMutable(t *testing.T) {
	manifest := `
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default, resourceVersion: "1"}
spec:
  selector: {app: web}
  template:
    metadata: {labels: {app: web, track: stable}}
    spec: {containers: [{name: web, image: nginx}]}
`
	old := decode(t, manifest)
	if errs := create(old); len(errs) != 0 {
		t.Fatal(errs)
	}
	changed := decode(t, manifest).(*corev1.ReplicationController)
	changed.Spec.Selector = map[string]string{"app": "web", "track": "stable"}
	if errs := update(changed, old); len(errs) != 0 {
		t.Errorf("a selector change: %v; want valid", errs)
	}
}

func TestScaleSelectorOfReplicationControllers(t *testing.T) {
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"tier": "front", "app": "web"}}}
	if got, ok := ScaleSelector(rc); !ok || got != "app=web,tier=front" {
		t.Errorf("ScaleSelector = %q, %v; want app=web,tier=front", got, ok)
	}
	if _, ok := ScaleSelector(&corev1.Pod{}); ok {
		t.Error("ScaleSelector answers for a Pod")
	}
}

// Writes through /status check the replica counts, as kube's status
// strategies of ReplicationControllers and ReplicaSets do.
func TestReplicaCountsOfStatusWrites(t *testing.T) {
	rc := decode(t, `
apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default}
status: {replicas: 1, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 2, observedGeneration: -1}
`)
	want := `ReplicationController "web" is invalid: [status.observedGeneration: Invalid value: -1: must be greater than or equal to 0, status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas]`
	if got := invalid(rc, strategyOf(rc).ValidateStatus(t.Context(), rc)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	rs := decode(t, `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: default}
status: {replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 1, terminatingReplicas: -1}
`)
	want = `ReplicaSet.apps "web" is invalid: status.terminatingReplicas: Invalid value: -1: must be greater than or equal to 0`
	if got := invalid(rs, strategyOf(rs).ValidateStatus(t.Context(), rs)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
