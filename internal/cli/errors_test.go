package cli

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestPrintError(t *testing.T) {
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	notFound := apierrors.NewNotFound(deployments, "nope")
	tests := []struct {
		name string
		err  error
		want string
		code int
	}{
		{"no error prints nothing", nil, "", 0},
		{"a server status prints its reason", notFound, "Error from server (NotFound): deployments.apps \"nope\" not found\n", 1},
		{"apply names the manifest inside the server's message", addSourceToErr("creating", "web.yaml", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "demo")),
			"Error from server (NotFound): error when creating \"web.yaml\": namespaces \"demo\" not found\n", 1},
		{"a client error gets error:", errors.New("must specify one of -f and -k"), "error: must specify one of -f and -k\n", 1},
		{"error: is not repeated", errors.New("error: already said"), "error: already said\n", 1},
		{"an invalid object lists its causes",
			apierrors.NewInvalid(deployment, "web", field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be greater than or equal to 0")}),
			"The Deployment \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n", 1},
		{"several causes go one a line",
			apierrors.NewInvalid(deployment, "web", field.ErrorList{field.Required(field.NewPath("spec", "selector"), ""), field.Required(field.NewPath("spec", "template"), "")}),
			"The Deployment \"web\" is invalid: \n* spec.selector: Required value\n* spec.template: Required value\n", 1},
		{"several errors go one a line, without error:",
			utilerrors.NewAggregate([]error{errors.New("the namespace does not match"), notFound}),
			"the namespace does not match\nError from server (NotFound): deployments.apps \"nope\" not found\n", 1},
		{"an aggregate of one is its error", utilerrors.NewAggregate([]error{notFound}), "Error from server (NotFound): deployments.apps \"nope\" not found\n", 1},
		{"unauthorized asks to log in", apierrors.NewUnauthorized("Unauthorized"), "error: You must be logged in to the server (Unauthorized)\n", 1},
		{"a refused connection names the server",
			&url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api?timeout=32s", Err: fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED)},
			"The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n", 1},
		{"other connection errors", &url.Error{Op: "Get", URL: "https://x/api", Err: errors.New("x509: certificate signed by unknown authority")},
			"Unable to connect to the server: x509: certificate signed by unknown authority\n", 1},
		{"ErrExit prints nothing", ErrExit, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			code := PrintError(&out, tt.err)
			if out.String() != tt.want || code != tt.code {
				t.Errorf("got %q (exit %d), want %q (exit %d)", out.String(), code, tt.want, tt.code)
			}
		})
	}
}
