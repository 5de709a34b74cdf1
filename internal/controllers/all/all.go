// Package all lists every controller minikd can run, by the names
// kube-controller-manager gives them.
package all

import (
	"minik/internal/controllers"
	"minik/internal/controllers/attachdetach"
	"minik/internal/controllers/certificates"
	"minik/internal/controllers/crd"
	"minik/internal/controllers/cronjob"
	"minik/internal/controllers/daemonset"
	"minik/internal/controllers/deployment"
	"minik/internal/controllers/disruption"
	"minik/internal/controllers/endpoints"
	"minik/internal/controllers/endpointslice"
	"minik/internal/controllers/endpointslicemirroring"
	"minik/internal/controllers/garbagecollector"
	"minik/internal/controllers/job"
	"minik/internal/controllers/namespace"
	"minik/internal/controllers/nodelifecycle"
	"minik/internal/controllers/persistentvolume"
	"minik/internal/controllers/podautoscaler"
	"minik/internal/controllers/replicaset"
	"minik/internal/controllers/resourceclaim"
	"minik/internal/controllers/resourcequota"
	"minik/internal/controllers/rootcacertpublisher"
	"minik/internal/controllers/serviceaccount"
	"minik/internal/controllers/statefulset"
	"minik/internal/controllers/storageversionmigrator"
	"minik/internal/controllers/tainteviction"
)

// Controllers returns the known controllers by name.
func Controllers() map[string]controllers.Constructor {
	return map[string]controllers.Constructor{
		"deployment":          deployment.New,
		disruption.Name:       disruption.New,
		endpoints.Name:        endpoints.New,
		endpointslice.Name:    endpointslice.New,
		replicaset.Name:       replicaset.New,
		garbagecollector.Name: garbagecollector.New,
		namespace.Name:        namespace.New,
		resourcequota.Name:    resourcequota.New,
		serviceaccount.Name:   serviceaccount.New,
		nodelifecycle.Name:    nodelifecycle.New,
		tainteviction.Name:    tainteviction.New,
		statefulset.Name:      statefulset.New,
		daemonset.Name:        daemonset.New,
		cronjob.Name:          cronjob.New,
		crd.Name:              crd.New,
		job.Name:              job.New,
		job.TTLName:           job.NewTTLAfterFinished,

		rootcacertpublisher.Name: rootcacertpublisher.New,
		persistentvolume.Name:    persistentvolume.New,
		podautoscaler.Name:       podautoscaler.New,

		storageversionmigrator.Name: storageversionmigrator.New,
		resourceclaim.Name:          resourceclaim.New,
		endpointslicemirroring.Name: endpointslicemirroring.New,
		attachdetach.Name:           attachdetach.New,

		certificates.ApprovingName:  certificates.NewApproving,
		certificates.SigningName:    certificates.NewSigning,
		certificates.CleanerName:    certificates.NewCleaner,
		certificates.PCRCleanerName: certificates.NewPCRCleaner,

		replicaset.ReplicationName: replicaset.NewReplication,
	}
}

// ClientNames names each controller's client as kube-controller-manager
// names it (cmd/kube-controller-manager/app): with
// --use-service-account-credentials the controller talks as the
// ServiceAccount kube-system/<client name>, authorized by kube's bootstrap
// role system:controller:<client name>. Controllers kube runs with another
// controller's client share it (taint eviction runs as node-controller, the
// CSR controllers as certificate-controller). The custom resource
// definition controller, which kube runs inside its API server, has minik's
// role system:minik:controller:crd-controller.
func ClientNames() map[string]string {
	return map[string]string{
		"deployment":       "deployment-controller",
		disruption.Name:    "disruption-controller",
		endpoints.Name:     "endpoint-controller",
		endpointslice.Name: "endpointslice-controller",

		endpointslicemirroring.Name: "endpointslicemirroring-controller",
		attachdetach.Name:           "attachdetach-controller",
		replicaset.Name:             "replicaset-controller",
		garbagecollector.Name:       "generic-garbage-collector",
		namespace.Name:              "namespace-controller",
		resourcequota.Name:          "resourcequota-controller",
		serviceaccount.Name:         "service-account-controller",
		nodelifecycle.Name:          "node-controller",
		tainteviction.Name:          "node-controller",
		statefulset.Name:            "statefulset-controller",
		daemonset.Name:              "daemon-set-controller",
		cronjob.Name:                "cronjob-controller",
		crd.Name:                    "crd-controller",
		job.Name:                    "job-controller",
		job.TTLName:                 "ttl-after-finished-controller",

		rootcacertpublisher.Name: "root-ca-cert-publisher",
		persistentvolume.Name:    "persistent-volume-binder",
		podautoscaler.Name:       "horizontal-pod-autoscaler",

		storageversionmigrator.Name: "storage-version-migrator-controller",
		resourceclaim.Name:          "resource-claim-controller",

		certificates.ApprovingName:  "certificate-controller",
		certificates.SigningName:    "certificate-controller",
		certificates.CleanerName:    "certificate-controller",
		certificates.PCRCleanerName: "podcertificaterequestcleaner",

		replicaset.ReplicationName: "replication-controller",
	}
}
