package tables

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The Gateway API kinds' tables: a cluster serves these kinds from the
// project's CRDs, so their tables are the CRDs' additionalPrinterColumns
// (gateway-api v1.6.3, the module minik's Gateway types come from,
// config/crd/standard), printed as kube prints a custom resource's.

// GatewayClass is the table of gateway.networking.k8s.io GatewayClasses.
var GatewayClass = mustPrinterColumns([]apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Controller", Type: "string", JSONPath: ".spec.controllerName"},
	{Name: "Accepted", Type: "string", JSONPath: `.status.conditions[?(@.type=="Accepted")].status`},
	{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	{Name: "Description", Type: "string", JSONPath: ".spec.description", Priority: 1},
})

// Gateway is the table of gateway.networking.k8s.io Gateways.
var Gateway = mustPrinterColumns([]apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Class", Type: "string", JSONPath: ".spec.gatewayClassName"},
	{Name: "Address", Type: "string", JSONPath: ".status.addresses[*].value"},
	{Name: "Programmed", Type: "string", JSONPath: `.status.conditions[?(@.type=="Programmed")].status`},
	{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
})

// HTTPRoute is the table of gateway.networking.k8s.io HTTPRoutes.
var HTTPRoute = mustPrinterColumns([]apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Hostnames", Type: "string", JSONPath: ".spec.hostnames"},
	{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
})

// ReferenceGrant is the table of gateway.networking.k8s.io
// ReferenceGrants: its CRD's one column, Age, of type date.
var ReferenceGrant = mustPrinterColumns([]apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
})
