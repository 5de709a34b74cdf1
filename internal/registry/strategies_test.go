package registry

import (
	"reflect"
	"testing"

	"minik/internal/tables"
)

func TestEveryResourceHasAStrategy(t *testing.T) {
	// want lists, per resource, whether kube-apiserver maintains
	// metadata.generation, whether it keeps a status sent on create, and
	// the kind's table: kinds kube-apiserver has no printer for get
	// CreatedAt, those minik has none for yet get Default.
	want := map[string]struct {
		generation, keepStatus bool
		table                  tables.Table
	}{
		"v1/namespaces":                                                     {false, false, tables.Namespace},
		"v1/pods":                                                           {true, false, tables.Pod},
		"v1/services":                                                       {false, false, tables.Service},
		"v1/configmaps":                                                     {false, false, tables.ConfigMap},
		"v1/secrets":                                                        {false, false, tables.Secret},
		"v1/serviceaccounts":                                                {false, false, tables.ServiceAccount},
		"v1/events":                                                         {false, true, tables.CoreEvent},
		"v1/nodes":                                                          {false, true, tables.Node},
		"v1/resourcequotas":                                                 {false, false, tables.ResourceQuota},
		"apps/v1/deployments":                                               {true, false, tables.Deployment},
		"apps/v1/replicasets":                                               {true, false, tables.ReplicaSet},
		"apps/v1/statefulsets":                                              {true, false, tables.StatefulSet},
		"apps/v1/daemonsets":                                                {true, false, tables.DaemonSet},
		"apps/v1/controllerrevisions":                                       {false, false, tables.ControllerRevision},
		"batch/v1/jobs":                                                     {true, false, tables.Job},
		"batch/v1/cronjobs":                                                 {true, false, tables.CronJob},
		"discovery.k8s.io/v1/endpointslices":                                {true, false, tables.EndpointSlice},
		"networking.k8s.io/v1/ingresses":                                    {true, false, tables.Ingress},
		"networking.k8s.io/v1/ingressclasses":                               {true, false, tables.IngressClass},
		"policy/v1/poddisruptionbudgets":                                    {true, false, tables.PodDisruptionBudget},
		"rbac.authorization.k8s.io/v1/roles":                                {false, false, tables.CreatedAt},
		"rbac.authorization.k8s.io/v1/rolebindings":                         {false, false, tables.RoleBinding},
		"rbac.authorization.k8s.io/v1/clusterroles":                         {false, false, tables.CreatedAt},
		"rbac.authorization.k8s.io/v1/clusterrolebindings":                  {false, false, tables.ClusterRoleBinding},
		"coordination.k8s.io/v1/leases":                                     {false, false, tables.Lease},
		"events.k8s.io/v1/events":                                           {false, true, tables.EventsV1Event},
		"scheduling.k8s.io/v1/priorityclasses":                              {false, false, tables.PriorityClass},
		"v1/limitranges":                                                    {false, false, tables.CreatedAt},
		"v1/persistentvolumes":                                              {false, false, tables.PersistentVolume},
		"v1/persistentvolumeclaims":                                         {false, false, tables.PersistentVolumeClaim},
		"v1/endpoints":                                                      {false, false, tables.Endpoints},
		"v1/podtemplates":                                                   {true, false, tables.PodTemplate},
		"v1/replicationcontrollers":                                         {true, false, tables.ReplicationController},
		"storage.k8s.io/v1/storageclasses":                                  {false, false, tables.StorageClass},
		"networking.k8s.io/v1/networkpolicies":                              {true, false, tables.NetworkPolicy},
		"networking.k8s.io/v1/ipaddresses":                                  {false, false, tables.IPAddress},
		"networking.k8s.io/v1/servicecidrs":                                 {false, false, tables.ServiceCIDR},
		"node.k8s.io/v1/runtimeclasses":                                     {false, false, tables.RuntimeClass},
		"storage.k8s.io/v1/csidrivers":                                      {true, false, tables.CSIDriver},
		"storage.k8s.io/v1/csinodes":                                        {false, false, tables.CSINode},
		"storage.k8s.io/v1/csistoragecapacities":                            {false, false, tables.CSIStorageCapacity},
		"storage.k8s.io/v1/volumeattachments":                               {false, false, tables.VolumeAttachment},
		"storage.k8s.io/v1/volumeattributesclasses":                         {false, false, tables.VolumeAttributesClass},
		"certificates.k8s.io/v1/certificatesigningrequests":                 {false, false, tables.CertificateSigningRequest},
		"certificates.k8s.io/v1/clustertrustbundles":                        {false, false, tables.ClusterTrustBundle},
		"certificates.k8s.io/v1/podcertificaterequests":                     {false, false, tables.PodCertificateRequest},
		"admissionregistration.k8s.io/v1/mutatingwebhookconfigurations":     {true, false, tables.MutatingWebhookConfiguration},
		"apiregistration.k8s.io/v1/apiservices":                             {false, false, tables.APIService},
		"admissionregistration.k8s.io/v1/validatingwebhookconfigurations":   {true, false, tables.ValidatingWebhookConfiguration},
		"admissionregistration.k8s.io/v1/validatingadmissionpolicies":       {true, false, tables.ValidatingAdmissionPolicy},
		"admissionregistration.k8s.io/v1/validatingadmissionpolicybindings": {true, false, tables.ValidatingAdmissionPolicyBinding},
		"admissionregistration.k8s.io/v1/mutatingadmissionpolicies":         {true, false, tables.MutatingAdmissionPolicy},
		"admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings":   {true, false, tables.MutatingAdmissionPolicyBinding},
		"apiextensions.k8s.io/v1/customresourcedefinitions":                 {true, false, tables.CreatedAt},
		"flowcontrol.apiserver.k8s.io/v1/flowschemas":                       {true, false, tables.FlowSchema},
		"flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations":       {true, false, tables.PriorityLevelConfiguration},
		"storagemigration.k8s.io/v1/storageversionmigrations":               {false, false, tables.StorageVersionMigration},

		// One kind at two versions: v1 shows the stored v2 objects.
		"autoscaling/v2/horizontalpodautoscalers": {true, false, tables.HorizontalPodAutoscaler},
		"autoscaling/v1/horizontalpodautoscalers": {true, false, tables.HorizontalPodAutoscaler},
		// Dynamic Resource Allocation.
		"resource.k8s.io/v1/deviceclasses":          {true, false, tables.DeviceClass},
		"resource.k8s.io/v1/devicetaintrules":       {true, false, tables.DeviceTaintRule},
		"resource.k8s.io/v1/resourceclaims":         {false, false, tables.ResourceClaim},
		"resource.k8s.io/v1/resourceclaimtemplates": {false, false, tables.ResourceClaimTemplate},
		"resource.k8s.io/v1/resourceslices":         {true, false, tables.ResourceSlice},
	}
	for _, r := range All() {
		key := r.GroupVersion.String() + "/" + r.Name
		t.Run(key+" validates, reports kube's generation and status handling, and serves its table", func(t *testing.T) {
			w, ok := want[key]
			if !ok {
				t.Fatalf("no expectation for %s", key)
			}
			s := r.Strategy
			if s.Validate == nil || s.ValidateUpdate == nil {
				t.Error("strategy does not validate")
			}
			if got := !s.NoGeneration; got != w.generation {
				t.Errorf("generation maintained = %v, want %v", got, w.generation)
			}
			if s.KeepStatusOnCreate != w.keepStatus {
				t.Errorf("KeepStatusOnCreate = %v, want %v", s.KeepStatusOnCreate, w.keepStatus)
			}
			if s.Table == nil {
				t.Fatal("no table")
			}
			if got, want := s.Table.Columns, w.table.Convertor(nil).Columns; !reflect.DeepEqual(got, want) {
				t.Errorf("table columns = %v, want %v", got, want)
			}
		})
	}
}
