package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minik/internal/tables"
)

// limitRanges: LimitRanges have no generation; Container items get
// kube's defaults (default limit from max, default request from default
// limit, then from min).
var limitRanges = &Resource{
	GroupVersion: coreV1, Name: "limitranges", SingularName: "limitrange", Kind: "LimitRange",
	Namespaced: true, ShortNames: []string{"limits"},
	Strategy: Strategy{
		Default:  defaulter(defaultLimitRange),
		Validate: validator(validateLimitRange),
		ValidateUpdate: updateValidator(func(lr, old *corev1.LimitRange) field.ErrorList {
			return append(validateLimitRange(lr), validateObjectMetaUpdate(&lr.ObjectMeta, &old.ObjectMeta)...)
		}),
		NoGeneration: true,
		Table:        tables.CreatedAt.Convertor(nil),
	},
}

func defaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		if item.Default == nil {
			item.Default = corev1.ResourceList{}
		}
		if item.DefaultRequest == nil {
			item.DefaultRequest = corev1.ResourceList{}
		}
		for k, v := range item.Max {
			if _, ok := item.Default[k]; !ok {
				item.Default[k] = v.DeepCopy()
			}
		}
		for k, v := range item.Default {
			if _, ok := item.DefaultRequest[k]; !ok {
				item.DefaultRequest[k] = v.DeepCopy()
			}
		}
		for k, v := range item.Min {
			if _, ok := item.DefaultRequest[k]; !ok {
				item.DefaultRequest[k] = v.DeepCopy()
			}
		}
	}
}

// validateLimitRangeResourceName checks a resource name in a LimitRange
// item of the given type.
func validateLimitRangeResourceName(typ corev1.LimitType, name corev1.ResourceName, p *field.Path) field.ErrorList {
	switch typ {
	case corev1.LimitTypePod, corev1.LimitTypeContainer:
		return validateContainerResourceName(name, p)
	default:
		return validateResourceName(name, p)
	}
}

func validateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	errs := validateObjectMeta(&lr.ObjectMeta, true, nameIsDNSSubdomain)
	types := sets.New[corev1.LimitType]()
	p := specPath.Child("limits")
	for i := range lr.Spec.Limits {
		ip := p.Index(i)
		item := &lr.Spec.Limits[i]
		errs = append(errs, validateQualifiedName(string(item.Type), ip.Child("type"))...)
		if types.Has(item.Type) {
			errs = append(errs, field.Duplicate(ip.Child("type"), item.Type))
		}
		types.Insert(item.Type)

		keys := sets.New[string]()
		lists := map[string]corev1.ResourceList{}
		collect := func(name string, l corev1.ResourceList) {
			lists[name] = l
			for _, k := range sortedResourceNames(l) {
				errs = append(errs, validateLimitRangeResourceName(item.Type, k, ip.Child(name).Key(string(k)))...)
				keys.Insert(string(k))
			}
		}
		collect("max", item.Max)
		collect("min", item.Min)
		if item.Type == corev1.LimitTypePod {
			if len(item.Default) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(item.DefaultRequest) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		} else {
			collect("default", item.Default)
			collect("defaultRequest", item.DefaultRequest)
		}
		if item.Type == corev1.LimitTypePersistentVolumeClaim {
			_, minOK := item.Min[corev1.ResourceStorage]
			_, maxOK := item.Max[corev1.ResourceStorage]
			if !minOK && !maxOK {
				errs = append(errs, field.Required(ip.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		collect("maxLimitRequestRatio", item.MaxLimitRequestRatio)

		for _, k := range sets.List(keys) {
			kp := ip.Key(k)
			name := corev1.ResourceName(k)
			minQ, minOK := item.Min[name]
			maxQ, maxOK := item.Max[name]
			defQ, defOK := lists["default"][name]
			reqQ, reqOK := lists["defaultRequest"][name]
			ratio, ratioOK := item.MaxLimitRequestRatio[name]
			if minOK && maxOK && minQ.Cmp(maxQ) > 0 {
				errs = append(errs, field.Invalid(kp, minQ, fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
			}
			if reqOK && minOK && minQ.Cmp(reqQ) > 0 {
				errs = append(errs, field.Invalid(kp, reqQ, fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), reqQ.String())))
			}
			if reqOK && maxOK && reqQ.Cmp(maxQ) > 0 {
				errs = append(errs, field.Invalid(kp, reqQ, fmt.Sprintf("default request value %s is greater than max value %s", reqQ.String(), maxQ.String())))
			}
			if reqOK && defOK && reqQ.Cmp(defQ) > 0 {
				errs = append(errs, field.Invalid(kp, reqQ, fmt.Sprintf("default request value %s is greater than default limit value %s", reqQ.String(), defQ.String())))
			}
			if defOK && minOK && minQ.Cmp(defQ) > 0 {
				errs = append(errs, field.Invalid(kp, minQ, fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), defQ.String())))
			}
			if defOK && maxOK && defQ.Cmp(maxQ) > 0 {
				errs = append(errs, field.Invalid(kp, maxQ, fmt.Sprintf("default value %s is greater than max value %s", defQ.String(), maxQ.String())))
			}
			if ratioOK && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
				errs = append(errs, field.Invalid(kp, ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
			}
			if ratioOK && minOK && maxOK {
				r, lo, hi := float64(ratio.Value()), minQ.Value(), maxQ.Value()
				if ratio.Value() < resource.MaxMilliValue && lo < resource.MaxMilliValue && hi < resource.MaxMilliValue {
					r, lo, hi = float64(ratio.MilliValue())/1000, minQ.MilliValue(), maxQ.MilliValue()
				}
				limit := float64(hi) / float64(lo)
				if r > limit {
					errs = append(errs, field.Invalid(kp, ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limit)))
				}
			}
			if !overcommitAllowed(name) && defOK && reqOK && defQ.Cmp(reqQ) != 0 {
				errs = append(errs, field.Invalid(kp.Child("defaultRequest"), reqQ, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", defQ.String(), reqQ.String(), k)))
			}
		}
	}
	return errs
}
