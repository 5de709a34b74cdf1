package admission

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// NewForbidden is kube's admission refusal: a 403 Forbidden Status naming
// the resource and the object ("pods "web" is forbidden: <err>"). An error
// that is already a Forbidden Status is returned as it is.
func NewForbidden(a *Attributes, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), objectName(a), err)
}

// objectName is the name kube's admission errors report: the request's
// name, else the object's name or generateName, else "Unknown".
func objectName(a *Attributes) string {
	if a.Name != "" {
		return a.Name
	}
	if a.Object != nil {
		m, err := meta.Accessor(a.Object)
		if err != nil {
			return "Unknown/errorGettingName"
		}
		if m.GetName() != "" {
			return m.GetName()
		}
		if m.GetGenerateName() != "" {
			return m.GetGenerateName()
		}
	}
	return "Unknown"
}
