package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// copyBomb is a JSON patch of n copies, each of the pod's spec into
// itself: the spec doubles n times.
func copyBomb(n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"/spec","path":"/spec/x%d"}`, i)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

func TestPatchesThatCannotApplyAnswerKubesStatus(t *testing.T) {
	a := newTestAPI(t)
	const (
		pod    = "/api/v1/namespaces/fuzz/pods/p"
		deploy = "/apis/apps/v1/namespaces/fuzz/deployments/d"
		json_  = "application/json-patch+json"
		merge  = "application/merge-patch+json"
		smp    = "application/strategic-merge-patch+json"
		apply  = "application/apply-patch+yaml"
	)
	tooMany := "[" + strings.Repeat(`{"op":"test","path":"/kind","value":"Pod"},`, 10000) + `{"op":"test","path":"/kind","value":"Pod"}]`
	big := `{"metadata":{"annotations":{"a":"` + strings.Repeat("x", maxBodyBytes) + `"}}}`
	// kube answers a JSON patch that does not apply with a generic 422
	// that drops the library's message.
	const unprocessable = "the server rejected our request due to an error in our request"
	tests := []struct {
		name, path, ctype, patch string
		code                     int
		reason                   metav1.StatusReason
		message                  string // a prefix
	}{
		{"a JSON patch testing the whole object without a value fails its test", pod, json_, `[{"op":"test","path":""}]`,
			422, metav1.StatusReasonInvalid, unprocessable},
		{"a JSON patch testing the whole object against null fails its test", pod, json_, `[{"op":"test","path":"","value":null}]`,
			422, metav1.StatusReasonInvalid, unprocessable},
		{"a JSON patch replacing the whole object without a value does not apply", pod, json_, `[{"op":"replace","path":""}]`,
			422, metav1.StatusReasonInvalid, unprocessable},
		{"a JSON patch replacing the whole object by null does not apply", pod, json_, `[{"op":"replace","path":"","value":null}]`,
			422, metav1.StatusReasonInvalid, unprocessable},
		{"a JSON patch of more than 10,000 operations is too large", pod, json_, tooMany,
			413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"},
		{"a JSON patch whose copies add more than 3 MiB stops there", pod, json_, copyBomb(14),
			422, metav1.StatusReasonInvalid, unprocessable},
		{"a merge patch beyond the body limit is too large", pod, merge, big,
			413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: limit is 3145728"},
		{"a strategic merge patch beyond the body limit is too large", pod, smp, big,
			413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: limit is 3145728"},
		{"a strategic merge patch with an object as merge key is a bad request", pod, smp, `{"spec":{"containers":[{"name":{"a":1}}]}}`,
			400, metav1.StatusReasonBadRequest, "the merge key name of a containers entry must be a string, a number or a boolean"},
		{"a merge key that is a list is a bad request too", deploy, smp, `{"spec":{"template":{"spec":{"containers":[{"name":["web"]}]}}}}`,
			400, metav1.StatusReasonBadRequest, "the merge key name of a containers entry must be a string, a number or a boolean"},
		{"a $retainKeys naming an object is a bad request", pod, smp, `{"spec":{"$retainKeys":[{"a":1}]}}`,
			400, metav1.StatusReasonBadRequest, "invalid patch format of retainKeys"},
		{"a $retainKeys that is no list is a bad request", pod, smp, `{"spec":{"volumes":[{"name":"data","$retainKeys":"name"}]}}`,
			400, metav1.StatusReasonBadRequest, "invalid patch format of retainKeys"},
		{"a merge key deeper down that is an object is a bad request", pod, smp, `{"spec":{"containers":[{"name":"web","ports":[{"containerPort":{"a":1}}]}]}}`,
			400, metav1.StatusReasonBadRequest, "the merge key containerPort of a ports entry must be a string, a number or a boolean"},
		{"a $setElementOrder of a list of scalars naming an object is a bad request", pod, smp, `{"metadata":{"$setElementOrder/finalizers":[{"a":1}]}}`,
			400, metav1.StatusReasonBadRequest, "invalid patch format of setElementOrder list"},
		{"a $setElementOrder naming an object by an object is a bad request", pod, smp, `{"spec":{"$setElementOrder/containers":[{"name":{"a":1}}]}}`,
			400, metav1.StatusReasonBadRequest, "invalid patch format of setElementOrder list"},
		{"a merged list of scalars holding a list is unprocessable", pod, smp, `{"metadata":{"finalizers":[["a"]]}}`,
			422, metav1.StatusReasonInvalid, unprocessable},
		{"a strategic merge patch that is not an object is a bad request", pod, smp, `[]`,
			400, metav1.StatusReasonBadRequest, "json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"an apply with a field of the wrong type is a bad request with the field manager's message", deploy + "?fieldManager=t", apply,
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: two}\n",
			400, metav1.StatusReasonBadRequest, "failed to create typed patch object (/d; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string"},
		{"an apply with a field the schema lacks is a bad request", pod + "?fieldManager=t", apply,
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {wings: 2}\n",
			400, metav1.StatusReasonBadRequest, "failed to create typed patch object (/p; /v1, Kind=Pod): .spec.wings: field not declared in schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := a.do(http.MethodPatch, tt.path, tt.ctype, []byte(tt.patch))
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatalf("answered %d with %q: %v", rec.Code, rec.Body, err)
			}
			if rec.Code != tt.code || int(st.Code) != tt.code || st.Reason != tt.reason || !strings.HasPrefix(st.Message, tt.message) {
				t.Fatalf("answered %d %s %.300q, want %d %s %q", rec.Code, st.Reason, rec.Body, tt.code, tt.reason, tt.message)
			}
		})
	}
	t.Run("the copies stop at kube's bound of 3 MiB", func(t *testing.T) {
		if jsonpatch.AccumulatedCopySizeLimit != 3<<20 {
			t.Fatalf("the json-patch library's copy bound is %d, want 3 MiB", jsonpatch.AccumulatedCopySizeLimit)
		}
		current := a.do(http.MethodGet, pod, "", nil).Body.Bytes()
		_, err := applyPatch(types.JSONPatchType, current, []byte(copyBomb(14)), &corev1.Pod{})
		var st apierrors.APIStatus
		if !errors.As(err, &st) || st.Status().Code != http.StatusUnprocessableEntity {
			t.Fatalf("got %v, want a 422", err)
		}
		p, _ := jsonpatch.DecodePatch([]byte(copyBomb(14)))
		var tooBig *jsonpatch.AccumulatedCopySizeError
		if _, err := p.Apply(current); !errors.As(err, &tooBig) || !strings.HasSuffix(err.Error(), "exceeding the limit 3145728") {
			t.Fatalf("the library answered %v, want its copy size error", err)
		}
	})
	t.Run("patches that apply still do", func(t *testing.T) {
		for _, p := range []struct{ path, ctype, patch, want string }{
			{pod, json_, `[{"op":"test","path":"/kind","value":"Pod"},{"op":"add","path":"/metadata/labels/x","value":"1"}]`, `"x":"1"`},
			{pod, smp, `{"metadata":{"labels":{"y":"2"}},"spec":{"containers":[{"name":"web","image":"nginx:1.28"}],"$setElementOrder/containers":[{"name":"web"}]}}`, `"image":"nginx:1.28"`},
			{deploy, smp, `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`, `"strategy":{"type":"Recreate"}`},
		} {
			rec := a.do(http.MethodPatch, p.path, p.ctype, []byte(p.patch))
			if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(p.want)) {
				t.Fatalf("%s %s answered %d %s", p.ctype, p.patch, rec.Code, rec.Body)
			}
		}
	})
}
