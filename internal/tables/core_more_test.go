package tables

//lint:file-ignore SA1019 core/v1 Endpoints and ComponentStatus are deprecated, and kube-apiserver still serves them: so does minik.

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fixtures of the Endpoints, PodTemplate and ComponentStatus tables.

func endpointsFixtures() []runtime.Object {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		out := make([]corev1.EndpointAddress, len(ips))
		for i, ip := range ips {
			out[i] = corev1.EndpointAddress{IP: ip}
		}
		return out
	}
	return []runtime.Object{
		// Two ports: each address once per port, the fourth and later counted.
		&corev1.Endpoints{ObjectMeta: objMeta("web", time.Hour), Subsets: []corev1.EndpointSubset{{
			Addresses:         addrs("10.244.1.7", "10.244.2.3"),
			NotReadyAddresses: addrs("10.244.3.9"),
			Ports:             []corev1.EndpointPort{{Name: "http", Port: 8080}, {Name: "https", Port: 8443}},
		}}},
		// Exactly three: no "more".
		&corev1.Endpoints{ObjectMeta: objMeta("three", 2*time.Minute), Subsets: []corev1.EndpointSubset{{
			Addresses: addrs("10.244.1.7", "10.244.1.8", "fd00::1"),
			Ports:     []corev1.EndpointPort{{Port: 80}},
		}}},
		// A headless service without ports lists bare addresses.
		&corev1.Endpoints{ObjectMeta: objMeta("headless", 30*time.Second), Subsets: []corev1.EndpointSubset{
			{Addresses: addrs("10.244.1.7", "10.244.1.8")},
			{Addresses: addrs("10.244.2.1", "10.244.2.2", "10.244.2.3")},
		}},
		// Only not-ready addresses: an empty cell.
		&corev1.Endpoints{ObjectMeta: objMeta("starting", 5*time.Second), Subsets: []corev1.EndpointSubset{{
			NotReadyAddresses: addrs("10.244.1.9"), Ports: []corev1.EndpointPort{{Port: 80}},
		}}},
		&corev1.Endpoints{ObjectMeta: objMeta("no-pods", 3*24*time.Hour)},
	}
}

func podTemplateFixtures() []runtime.Object {
	return []runtime.Object{
		&corev1.PodTemplate{ObjectMeta: objMeta("web", time.Hour), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "nginx", Image: "nginx:1.27"}, {Name: "sidecar", Image: "busybox:1.36"},
			}},
		}},
		&corev1.PodTemplate{ObjectMeta: objMeta("bare", time.Minute), Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "agnhost:2.66.1"}}},
		}},
	}
}

func componentStatusFixtures() []runtime.Object {
	healthy := func(name string) *corev1.ComponentStatus {
		return &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: name}, Conditions: []corev1.ComponentCondition{
			{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"},
		}}
	}
	return []runtime.Object{
		healthy("scheduler"),
		healthy("etcd-0"),
		&corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "controller-manager"}, Conditions: []corev1.ComponentCondition{
			{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Error: "controller manager is not running"},
		}},
		&corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "no-conditions"}},
	}
}
