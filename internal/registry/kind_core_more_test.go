package registry

//lint:file-ignore SA1019 core/v1 Endpoints and ComponentStatus are deprecated, and kube-apiserver still serves them: so does minik.

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidateEndpointsAndPodTemplates(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string // the 422 message; empty when the object is valid
	}{{
		name: "Endpoints with ready and not-ready addresses on pod IPs are valid",
		manifest: `
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets:
- addresses: [{ip: 10.244.1.7, nodeName: node-1, targetRef: {kind: Pod, name: web-1, namespace: default}}]
  notReadyAddresses: [{ip: 10.244.1.8}]
  ports: [{name: http, port: 80}, {name: https, port: 443}]
`,
	}, {
		name: "Endpoints on minik's loopback pod addresses are valid",
		manifest: `
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets: [{addresses: [{ip: 127.1.0.5}], ports: [{port: 80}]}]
`,
	}, {
		name: "a subset without addresses is refused",
		manifest: `
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets: [{ports: [{port: 80}]}]
`,
		want: `Endpoints "web" is invalid: subsets[0]: Required value: must specify ` + "`addresses` or `notReadyAddresses`",
	}, {
		name: "several ports must be named, with valid numbers",
		manifest: `
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{name: http, port: 80}, {port: 70000, protocol: ICMP}]}]
`,
		want: `Endpoints "web" is invalid: [subsets[0].ports[1].name: Required value, subsets[0].ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive, subsets[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"]`,
	}, {
		name: "addresses must be IPs a client can reach",
		manifest: `
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets: [{addresses: [{ip: 169.254.1.1}, {ip: web.example.com}], notReadyAddresses: [{ip: 0.0.0.0, hostname: Web_1}]}]
`,
		want: `Endpoints "web" is invalid: [subsets[0].addresses[0].ip: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10), subsets[0].addresses[1].ip: Invalid value: "web.example.com": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), subsets[0].addresses[1].ip: Invalid value: "web.example.com": must be a valid IP address, subsets[0].notReadyAddresses[0].hostname: Invalid value: "Web_1": ` + dns1123Label + `, subsets[0].notReadyAddresses[0].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)]`,
	}, {
		name: "a PodTemplate with a container is valid",
		manifest: `
apiVersion: v1
kind: PodTemplate
metadata: {name: web, namespace: default}
template:
  metadata: {labels: {app: web}}
  spec: {restartPolicy: OnFailure, containers: [{name: web, image: nginx}]}
`,
	}, {
		name: "a PodTemplate's template is validated as a pod's",
		manifest: `
apiVersion: v1
kind: PodTemplate
metadata: {name: web, namespace: default}
template:
  metadata: {labels: {"bad key!": x}}
  spec: {containers: [{name: Web, image: nginx}]}
`,
		want: `PodTemplate "web" is invalid: [template.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), template.spec.containers[0].name: Invalid value: "Web": ` + dns1123Label + `]`,
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

func TestEndpointsPortsDefaultToTCP(t *testing.T) {
	obj := defaulted(decode(t, `
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{port: 80}, {port: 53, protocol: UDP}]}]
`)).(*corev1.Endpoints)
	if got := ep0Protocols(obj); got != "TCP,UDP" {
		t.Errorf("port protocols %s; want TCP,UDP", got)
	}
}

func ep0Protocols(ep *corev1.Endpoints) string {
	s := ""
	for i, p := range ep.Subsets[0].Ports {
		if i > 0 {
			s += ","
		}
		s += string(p.Protocol)
	}
	return s
}

// kube keeps Endpoints whose subsets older versions accepted: an update
// that leaves invalid subsets as they were is valid, one that changes
// them is not.
func TestEndpointsUpdateKeepsOldSubsets(t *testing.T) {
	manifest := `
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default, resourceVersion: "1"}
subsets: [{addresses: [{ip: 169.254.1.1}]}]
`
	old := defaulted(decode(t, manifest))
	relabelled := decode(t, manifest).(*corev1.Endpoints)
	relabelled.Labels = map[string]string{"app": "web"}
	if errs := update(relabelled, old); len(errs) != 0 {
		t.Errorf("an update keeping the stored subsets: %v; want valid", errs)
	}
	changed := decode(t, manifest).(*corev1.Endpoints)
	changed.Subsets[0].Addresses = append(changed.Subsets[0].Addresses, corev1.EndpointAddress{IP: "10.0.0.1"})
	if errs := update(changed, old); len(errs) != 1 || errs[0].Field != "subsets[0].addresses[0].ip" {
		t.Errorf("an update changing the subsets: %v; want the link-local address refused", errs)
	}
}
