package cli

import (
	"fmt"
	"reflect"
	"sort"
	"unicode"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
)

// sortObject sorts a table's rows (by each row's full object) or a list's
// items by the JSONPath of --sort-by, as kubectl does: numbers by value,
// quantities by amount, other strings in natural order, objects missing
// the field first.
func sortObject(obj runtime.Object, sortBy string) error {
	field, err := RelaxedJSONPathExpression(sortBy)
	if err != nil {
		field = sortBy
	}
	parser := jsonpath.New("sorting").AllowMissingKeys(true)
	if err := parser.Parse(field); err != nil {
		return fmt.Errorf("sorting error: %v", err)
	}
	var contents []any
	var reorder func(idx []int)
	switch t := obj.(type) {
	case *metav1.Table:
		for _, row := range t.Rows {
			var c any
			if u, ok := row.Object.Object.(runtime.Unstructured); ok {
				c = u.UnstructuredContent()
			}
			contents = append(contents, c)
		}
		reorder = func(idx []int) {
			rows := make([]metav1.TableRow, len(idx))
			for k, i := range idx {
				rows[k] = t.Rows[i]
			}
			t.Rows = rows
		}
	case *unstructured.UnstructuredList:
		for _, item := range t.Items {
			contents = append(contents, item.Object)
		}
		reorder = func(idx []int) {
			items := make([]unstructured.Unstructured, len(idx))
			for k, i := range idx {
				items[k] = t.Items[i]
			}
			t.Items = items
		}
	default:
		return nil
	}
	if len(contents) == 0 {
		return nil
	}
	values := make([]reflect.Value, len(contents))
	found := false
	for i, c := range contents {
		if c == nil {
			continue
		}
		res, err := parser.FindResults(c)
		if err != nil {
			return fmt.Errorf("Failed to get values for %#v using %s (%#v)", res, field, err)
		}
		if len(res) > 0 && len(res[0]) > 0 {
			values[i] = res[0][0]
			found = true
		}
	}
	if !found {
		return fmt.Errorf("couldn't find any field with path %q in the list of objects", field)
	}
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	var sortErr error
	sort.SliceStable(idx, func(a, b int) bool {
		less, err := valueLess(values[idx[a]], values[idx[b]])
		if err != nil && sortErr == nil {
			sortErr = err
		}
		return less
	})
	if sortErr != nil {
		return fmt.Errorf("field %s is an unsortable type: %v", field, sortErr)
	}
	reorder(idx)
	return nil
}

// valueLess orders two JSONPath results; an invalid value (missing field)
// sorts first.
func valueLess(i, j reflect.Value) (bool, error) {
	if !i.IsValid() {
		return j.IsValid(), nil
	}
	if !j.IsValid() {
		return false, nil
	}
	for i.Kind() == reflect.Interface && !i.IsNil() {
		i = i.Elem()
	}
	for j.Kind() == reflect.Interface && !j.IsNil() {
		j = j.Elem()
	}
	switch iv := i.Interface().(type) {
	case int64:
		if jv, ok := j.Interface().(int64); ok {
			return iv < jv, nil
		}
		if jv, ok := j.Interface().(float64); ok {
			return float64(iv) < jv, nil
		}
	case float64:
		if jv, ok := j.Interface().(float64); ok {
			return iv < jv, nil
		}
		if jv, ok := j.Interface().(int64); ok {
			return iv < float64(jv), nil
		}
	case bool:
		if jv, ok := j.Interface().(bool); ok {
			return !iv && jv, nil
		}
	case string:
		if jv, ok := j.Interface().(string); ok {
			iq, ierr := resource.ParseQuantity(iv)
			jq, jerr := resource.ParseQuantity(jv)
			if ierr == nil && jerr == nil {
				return iq.Cmp(jq) < 0, nil
			}
			return naturalLess(iv, jv), nil
		}
	default:
		return false, fmt.Errorf("unsortable type: %T", iv)
	}
	return false, fmt.Errorf("unsortable types: %T and %T", i.Interface(), j.Interface())
}

// naturalLess compares strings with runs of digits compared as numbers.
func naturalLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	i, j := 0, 0
	for i < len(ar) && j < len(br) {
		if unicode.IsDigit(ar[i]) && unicode.IsDigit(br[j]) {
			si, sj := i, j
			for i < len(ar) && unicode.IsDigit(ar[i]) {
				i++
			}
			for j < len(br) && unicode.IsDigit(br[j]) {
				j++
			}
			na, nb := trimZeros(string(ar[si:i])), trimZeros(string(br[sj:j]))
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			continue
		}
		if ar[i] != br[j] {
			return ar[i] < br[j]
		}
		i++
		j++
	}
	return len(ar)-i < len(br)-j
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
