// Package all lists every controller minikd can run, by the names
// kube-controller-manager gives them.
package all

import (
	"minik/internal/controllers"
	"minik/internal/controllers/deployment"
	"minik/internal/controllers/endpointslice"
	"minik/internal/controllers/garbagecollector"
	"minik/internal/controllers/namespace"
	"minik/internal/controllers/nodelifecycle"
	"minik/internal/controllers/replicaset"
	"minik/internal/controllers/resourcequota"
	"minik/internal/controllers/rootcacertpublisher"
	"minik/internal/controllers/serviceaccount"
	"minik/internal/controllers/tainteviction"
)

// Controllers returns the known controllers by name.
func Controllers() map[string]controllers.Constructor {
	return map[string]controllers.Constructor{
		"deployment":          deployment.New,
		endpointslice.Name:    endpointslice.New,
		replicaset.Name:       replicaset.New,
		garbagecollector.Name: garbagecollector.New,
		namespace.Name:        namespace.New,
		resourcequota.Name:    resourcequota.New,
		serviceaccount.Name:   serviceaccount.New,
		nodelifecycle.Name:    nodelifecycle.New,
		tainteviction.Name:    tainteviction.New,

		rootcacertpublisher.Name: rootcacertpublisher.New,
	}
}
