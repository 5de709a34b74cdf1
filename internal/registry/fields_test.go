package registry

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
)

func TestFieldSelectors(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     fields.Set
	}{{
		name: "a Pod is selectable by node, policies, service account, phase and IPs",
		manifest: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {nodeName: node-1, serviceAccountName: robot, containers: [{name: a, image: a}]}
status: {phase: Running, podIPs: [{ip: 10.244.1.5}], nominatedNodeName: node-2}
`,
		want: fields.Set{
			"spec.nodeName": "node-1", "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
			"spec.serviceAccountName": "robot", "spec.hostNetwork": "false", "status.phase": "Running",
			"status.podIP": "10.244.1.5", "status.nominatedNodeName": "node-2",
		},
	}, {
		name: "a core Event is selectable by its object, reason, source and type",
		manifest: `
apiVersion: v1
kind: Event
metadata: {name: e, namespace: default}
involvedObject: {kind: Pod, namespace: default, name: web, uid: u1, apiVersion: v1, resourceVersion: "7", fieldPath: "spec.containers{web}"}
reason: BackOff
source: {component: kubelet}
reportingComponent: kubelet
type: Warning
`,
		want: fields.Set{
			"involvedObject.kind": "Pod", "involvedObject.namespace": "default", "involvedObject.name": "web",
			"involvedObject.uid": "u1", "involvedObject.apiVersion": "v1", "involvedObject.resourceVersion": "7",
			"involvedObject.fieldPath": "spec.containers{web}", "reason": "BackOff", "reportingComponent": "kubelet",
			"source": "kubelet", "type": "Warning",
		},
	}, {
		name: "a core Event without a source is selectable by its reporting controller as source",
		manifest: `
apiVersion: v1
kind: Event
metadata: {name: e, namespace: default}
reportingComponent: deployment-controller
`,
		want: fields.Set{
			"involvedObject.kind": "", "involvedObject.namespace": "", "involvedObject.name": "",
			"involvedObject.uid": "", "involvedObject.apiVersion": "", "involvedObject.resourceVersion": "",
			"involvedObject.fieldPath": "", "reason": "", "reportingComponent": "deployment-controller",
			"source": "deployment-controller", "type": "",
		},
	}, {
		name: "an events.k8s.io Event is selectable by what it regards",
		manifest: `
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: e, namespace: default}
regarding: {kind: Deployment, namespace: default, name: web, uid: u2, apiVersion: apps/v1}
reason: ScalingReplicaSet
reportingController: deployment-controller
type: Normal
`,
		want: fields.Set{
			"regarding.kind": "Deployment", "regarding.namespace": "default", "regarding.name": "web",
			"regarding.uid": "u2", "regarding.apiVersion": "apps/v1", "regarding.resourceVersion": "",
			"regarding.fieldPath": "", "reason": "ScalingReplicaSet", "reportingController": "deployment-controller",
			"type": "Normal",
		},
	}, {
		name:     "a Secret is selectable by type",
		manifest: `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: default}, type: kubernetes.io/tls}`,
		want:     fields.Set{"type": "kubernetes.io/tls"},
	}, {
		name:     "a Namespace is selectable by phase and, for old clients, by name",
		manifest: `{apiVersion: v1, kind: Namespace, metadata: {name: shop}, status: {phase: Terminating}}`,
		want:     fields.Set{"status.phase": "Terminating", "name": "shop"},
	}, {
		name:     "a Node is selectable by schedulability",
		manifest: `{apiVersion: v1, kind: Node, metadata: {name: n1}, spec: {unschedulable: true}}`,
		want:     fields.Set{"spec.unschedulable": "true"},
	}, {
		name:     "a ReplicaSet is selectable by its replica count",
		manifest: `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: r, namespace: default}, status: {replicas: 3}}`,
		want:     fields.Set{"status.replicas": "3"},
	}, {
		name:     "a Service is selectable by cluster IP and type",
		manifest: `{apiVersion: v1, kind: Service, metadata: {name: s, namespace: default}, spec: {clusterIP: None}}`,
		want:     fields.Set{"spec.clusterIP": "None", "spec.type": "ClusterIP"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := defaulted(decode(t, tt.manifest))
			got := strategyOf(obj).Fields(obj)
			if !maps.Equal(got, tt.want) {
				t.Errorf("fields = %v\nwant     %v", got, tt.want)
			}
		})
	}
}
