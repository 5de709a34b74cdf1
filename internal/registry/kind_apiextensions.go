package registry

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// apiextensionsV1 is the group version CustomResourceDefinitions are
// served at.
var apiextensionsV1 = apiextensionsv1.SchemeGroupVersion

// CRDGroupResource is customresourcedefinitions.apiextensions.k8s.io.
var CRDGroupResource = apiextensionsV1.WithResource("customresourcedefinitions").GroupResource()

// CustomResourceCleanupFinalizer holds a deleted CustomResourceDefinition
// until its custom resources are gone, as kube's apiextensions-apiserver
// does.
const CustomResourceCleanupFinalizer = apiextensionsv1.CustomResourceCleanupFinalizer

// internalScheme converts CustomResourceDefinitions to apiextensions'
// internal version, which kube's validation is written against.
var internalScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
}()

// ToInternalCRD converts a v1 CustomResourceDefinition to the internal
// version.
func ToInternalCRD(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := internalScheme.Convert(crd, out, nil); err != nil {
		return nil, fmt.Errorf("convert CustomResourceDefinition %s: %w", crd.Name, err)
	}
	return out, nil
}

// customResourceDefinitions has kube's customresourcedefinition strategy:
// the status is the server's (reset on create, kept on update) but for the
// storage version recorded in status.storedVersions; generation bumps on
// spec changes; validation is apiextensions-apiserver's own (names, scope,
// versions, structural schemas, and the metadata: the generic metadata
// checks are not added), run on the internal version. The table is the
// generic NAME, CREATED AT.
var customResourceDefinitions = &Resource{
	GroupVersion: apiextensionsV1, Name: "customresourcedefinitions", SingularName: "customresourcedefinition", Kind: "CustomResourceDefinition",
	ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}, HasStatus: true,
	Defines: crdDefinition,
	Strategy: Strategy{
		Default:          defaulter(apiextensionsv1.SetObjectDefaults_CustomResourceDefinition),
		PrepareForCreate: creator(func(crd *apiextensionsv1.CustomResourceDefinition) { addStoredVersion(crd) }),
		PrepareForUpdate: updater(func(crd, _ *apiextensionsv1.CustomResourceDefinition) { addStoredVersion(crd) }),
		PrepareForDelete: defaulter(markCRDForDeletion),
		Validate: validator(func(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
			in, err := ToInternalCRD(crd)
			if err != nil {
				return field.ErrorList{field.InternalError(nil, err)}
			}
			return validation.ValidateCustomResourceDefinition(context.Background(), in)
		}),
		ValidateUpdate: updateValidator(func(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
			in, err := ToInternalCRD(crd)
			if err != nil {
				return field.ErrorList{field.InternalError(nil, err)}
			}
			oldIn, err := ToInternalCRD(old)
			if err != nil {
				return field.ErrorList{field.InternalError(nil, err)}
			}
			return validation.ValidateCustomResourceDefinitionUpdate(context.Background(), in, oldIn)
		}),
		Table:             tables.CreatedAt.Convertor(nil),
		validatesMetadata: true,
	},
}

// addStoredVersion records the storage version in status.storedVersions.
func addStoredVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			if !apihelpers.IsStoredVersion(crd, v.Name) {
				crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			}
			return
		}
	}
}

// markCRDForDeletion is what deleting a CustomResourceDefinition does
// first, as kube's registry does: the cleanup finalizer, and the
// Terminating condition saying the custom resources will go.
func markCRDForDeletion(crd *apiextensionsv1.CustomResourceDefinition) {
	if crd.DeletionTimestamp != nil {
		return
	}
	if !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer)
	}
	apihelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
		Reason: "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	})
}
