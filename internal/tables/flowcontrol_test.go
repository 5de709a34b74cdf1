package tables

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fixtures of the FlowSchema, PriorityLevelConfiguration,
// StorageVersionMigration and mutating admission policy tables.

func flowSchemaFixtures() []runtime.Object {
	dangling := func(status flowcontrolv1.ConditionStatus) flowcontrolv1.FlowSchemaStatus {
		return flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: status}}}
	}
	return []runtime.Object{
		&flowcontrolv1.FlowSchema{ObjectMeta: clusterMeta("exempt", 48*time.Hour),
			Spec:   flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "exempt"}, MatchingPrecedence: 1},
			Status: dangling(flowcontrolv1.ConditionFalse)},
		&flowcontrolv1.FlowSchema{ObjectMeta: clusterMeta("service-accounts", 48*time.Hour),
			Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"}, MatchingPrecedence: 9000,
				DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}},
			Status: dangling(flowcontrolv1.ConditionFalse)},
		&flowcontrolv1.FlowSchema{ObjectMeta: clusterMeta("broken", time.Minute),
			Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "missing"}, MatchingPrecedence: 500,
				DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}},
			Status: dangling(flowcontrolv1.ConditionTrue)},
		&flowcontrolv1.FlowSchema{ObjectMeta: clusterMeta("new", 0),
			Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"}, MatchingPrecedence: 1000}},
	}
}

func priorityLevelConfigurationFixtures() []runtime.Object {
	i32 := func(v int32) *int32 { return &v }
	return []runtime.Object{
		&flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: clusterMeta("exempt", 48*time.Hour),
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt,
				Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: i32(0), LendablePercent: i32(0)}}},
		&flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: clusterMeta("catch-all", 48*time.Hour),
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: i32(5), LendablePercent: i32(0),
					LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}},
		&flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: clusterMeta("workload-low", 2*time.Hour),
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: i32(100), LendablePercent: i32(90),
					LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
						Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50}}}}},
	}
}

func storageVersionMigrationFixtures() []runtime.Object {
	cond := func(typ storagemigrationv1.MigrationConditionType, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: string(typ), Status: status}
	}
	svm := func(name, group, resource string, conds ...metav1.Condition) runtime.Object {
		return &storagemigrationv1.StorageVersionMigration{ObjectMeta: clusterMeta(name, time.Hour),
			Spec:   storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}},
			Status: storagemigrationv1.StorageVersionMigrationStatus{Conditions: conds}}
	}
	return []runtime.Object{
		svm("secrets", "", "secrets"),
		svm("deployments", "apps", "deployments", cond(storagemigrationv1.MigrationRunning, metav1.ConditionTrue)),
		svm("done", "apps", "statefulsets", cond(storagemigrationv1.MigrationRunning, metav1.ConditionFalse), cond(storagemigrationv1.MigrationSucceeded, metav1.ConditionTrue)),
		svm("failed", "example.com", "widgets", cond(storagemigrationv1.MigrationRunning, metav1.ConditionFalse), cond(storagemigrationv1.MigrationFailed, metav1.ConditionTrue)),
	}
}

func mutatingAdmissionPolicyFixtures() []runtime.Object {
	return []runtime.Object{
		&admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: clusterMeta("sidecar", 2*time.Hour),
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
				ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
				Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration}, {PatchType: admissionregistrationv1.PatchTypeJSONPatch}},
			}},
		&admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: clusterMeta("label", 5*time.Minute),
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeJSONPatch}}}},
	}
}

func mutatingAdmissionPolicyBindingFixtures() []runtime.Object {
	return []runtime.Object{
		&admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: clusterMeta("sidecar-demo", time.Hour),
			Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "sidecar", ParamRef: &admissionregistrationv1.ParamRef{Name: "sidecar-config", Namespace: "demo"}}},
		&admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: clusterMeta("label-all", time.Hour),
			Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "label"}},
	}
}
