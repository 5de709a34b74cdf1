package registry

import (
	"encoding/json"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

const stsManifest = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: nginx, volumeMounts: [{name: www, mountPath: /data}]}]
  volumeClaimTemplates: [{metadata: {name: www}, spec: {accessModes: [ReadWriteOnce]}}]
`

const dsManifest = `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: fluent-bit}]}
`

func TestStatefulSetAndDaemonSetDefaults(t *testing.T) {
	sts := defaulted(decode(t, stsManifest))
	sameJSON(t, sts, `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  podManagementPolicy: OrderedReady
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}
  revisionHistoryLimit: 10
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Retain}
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx
        imagePullPolicy: Always
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
        volumeMounts: [{name: www, mountPath: /data}]
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
  volumeClaimTemplates:
  - metadata: {name: www}
    spec: {accessModes: [ReadWriteOnce], resources: {}, volumeMode: Filesystem}
    status: {phase: Pending}
status: {replicas: 0, availableReplicas: 0}
`)
	ds := defaulted(decode(t, dsManifest))
	sameJSON(t, ds, `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1, maxSurge: 0}}
  revisionHistoryLimit: 10
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - name: agent
        image: fluent-bit
        imagePullPolicy: Always
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
status: {currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0}
`)
}

func TestValidateStatefulSetAndDaemonSet(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string
	}{{
		name:     "a StatefulSet whose mounts name its claim templates is valid",
		manifest: stsManifest,
	}, {
		name: "a StatefulSet selector must match the template labels",
		manifest: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}
`,
		want: `StatefulSet.apps "web" is invalid: spec.template.metadata.labels: Invalid value: {"app":"web"}: ` + "`selector` does not match template `labels`",
	}, {
		name: "an unknown pod management policy is refused",
		manifest: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  podManagementPolicy: Random
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}
`,
		want: `StatefulSet.apps "web" is invalid: spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel'`,
	}, {
		name: "a DaemonSet with an empty selector is refused",
		manifest: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: i}]}}
`,
		want: `DaemonSet.apps "agent" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for daemonset`,
	}, {
		name: "a DaemonSet cannot roll with nothing unavailable and no surge",
		manifest: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {rollingUpdate: {maxUnavailable: 0}}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: i}]}}
`,
		want: `DaemonSet.apps "agent" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when ` + "`maxSurge`" + ` is 0`,
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

func TestStatefulSetImmutableFields(t *testing.T) {
	old := decode(t, stsManifest)
	setResourceVersion(t, old)
	if errs := create(old); len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tt := range []struct{ name, edit, want string }{
		{"replicas, template and partition may change", `{"spec":{"replicas":3,"updateStrategy":{"rollingUpdate":{"partition":1}}}}`, ""},
		{"serviceName may not", `{"spec":{"serviceName":"other"}}`,
			`StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`},
		{"volumeClaimTemplates may not", `{"spec":{"volumeClaimTemplates":[]}}`,
			`StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := mergePatched(t, old, tt.edit)
			if got := invalid(obj, update(obj, old)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("a DaemonSet selector is immutable", func(t *testing.T) {
		old := decode(t, dsManifest)
		setResourceVersion(t, old)
		create(old)
		obj := mergePatched(t, old, `{"spec":{"selector":{"matchLabels":{"app":"agent","tier":"node"}},"template":{"metadata":{"labels":{"tier":"node"}}}}}`)
		want := `DaemonSet.apps "agent" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"agent","tier":"node"}}: field is immutable`
		if got := invalid(obj, update(obj, old)); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

// mergePatched returns a copy of obj with a JSON merge patch applied.
func mergePatched(t *testing.T, obj runtime.Object, patch string) runtime.Object {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := jsonpatch.MergePatch(raw, []byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	out := obj.DeepCopyObject()
	if err := json.Unmarshal(patched, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func setResourceVersion(t *testing.T, obj runtime.Object) {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	m.SetResourceVersion("1")
}
