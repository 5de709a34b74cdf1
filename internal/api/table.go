package api

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minik/internal/tables"
)

// defaultTable is the Name/Age table of resources without their own.
var defaultTable = &tables.TableConvertor{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	Row: func(obj runtime.Object) ([]interface{}, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		return []interface{}{m.GetName(), m.GetCreationTimestamp().UTC().Format("2006-01-02T15:04:05Z")}, nil
	},
}

// toTable converts objects to a server-side Table, each row carrying the
// object's metadata (includeObject=Metadata, the default), the whole
// object (Object) or nothing (None).
func (h *resourceHandler) toTable(r *http.Request, objs []runtime.Object, lm metav1.ListMeta) (*metav1.Table, error) {
	tc := h.res.Strategy.Table
	if tc == nil {
		tc = defaultTable
	}
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	switch include {
	case "":
		include = metav1.IncludeMetadata
	case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("includeObject: Unsupported value: %q", include))
	}
	if tc.Order != nil && len(objs) > 1 {
		objs = slices.Clone(objs)
		slices.SortStableFunc(objs, tc.Order)
	}
	t := &metav1.Table{ListMeta: lm, ColumnDefinitions: tc.Columns, Rows: make([]metav1.TableRow, 0, len(objs))}
	enc := Codecs.WithoutConversion().EncoderForVersion(storageSerializer, h.res.GroupVersion)
	metaEnc := Codecs.WithoutConversion().EncoderForVersion(storageSerializer, metaV1)
	for _, obj := range objs {
		cells, err := tc.Row(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		row := metav1.TableRow{Cells: cells}
		if tc.Conditions != nil {
			row.Conditions = tc.Conditions(obj)
		}
		var buf bytes.Buffer
		switch include {
		case metav1.IncludeObject:
			if err := enc.Encode(obj, &buf); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		case metav1.IncludeMetadata:
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			pom := &metav1.PartialObjectMetadata{ObjectMeta: *metaOf(m)}
			if err := metaEnc.Encode(pom, &buf); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
		if buf.Len() > 0 {
			row.Object = runtime.RawExtension{Raw: bytes.TrimSpace(buf.Bytes())}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// metaOf copies an object's metadata.
func metaOf(m metav1.Object) *metav1.ObjectMeta {
	if om, ok := m.(*metav1.ObjectMeta); ok {
		return om.DeepCopy()
	}
	return &metav1.ObjectMeta{
		Name: m.GetName(), GenerateName: m.GetGenerateName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
		ResourceVersion: m.GetResourceVersion(), Generation: m.GetGeneration(), CreationTimestamp: m.GetCreationTimestamp(),
		DeletionTimestamp: m.GetDeletionTimestamp(), DeletionGracePeriodSeconds: m.GetDeletionGracePeriodSeconds(),
		Labels: m.GetLabels(), Annotations: m.GetAnnotations(), OwnerReferences: m.GetOwnerReferences(), Finalizers: m.GetFinalizers(),
	}
}
