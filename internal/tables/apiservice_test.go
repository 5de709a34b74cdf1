package tables

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func apiServiceFixtures() []runtime.Object {
	cond := func(status apiregistrationv1.ConditionStatus, reason string) apiregistrationv1.APIServiceStatus {
		return apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: status, Reason: reason}}}
	}
	svc := func(ns, name string) *apiregistrationv1.ServiceReference {
		port := int32(443)
		return &apiregistrationv1.ServiceReference{Namespace: ns, Name: name, Port: &port}
	}
	return []runtime.Object{
		&apiregistrationv1.APIService{ObjectMeta: clusterMeta("v1.", 30*24*time.Hour), Status: cond(apiregistrationv1.ConditionTrue, "Local")},
		&apiregistrationv1.APIService{ObjectMeta: clusterMeta("v1beta1.metrics.k8s.io", 2*time.Hour),
			Spec: apiregistrationv1.APIServiceSpec{Service: svc("kube-system", "metrics-server")}, Status: cond(apiregistrationv1.ConditionFalse, "MissingEndpoints")},
		&apiregistrationv1.APIService{ObjectMeta: clusterMeta("v1alpha1.wardle.example.com", time.Minute),
			Spec: apiregistrationv1.APIServiceSpec{Service: svc("wardle", "api")}, Status: cond(apiregistrationv1.ConditionTrue, "Passed")},
		&apiregistrationv1.APIService{ObjectMeta: clusterMeta("v1.unchecked.example.com", 5*time.Second), Spec: apiregistrationv1.APIServiceSpec{Service: svc("demo", "api")}},
		&apiregistrationv1.APIService{ObjectMeta: clusterMeta("v1.noreason.example.com", 5*time.Second), Status: cond(apiregistrationv1.ConditionFalse, "")},
	}
}
