package api

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minik/internal/auth"
)

// recordingAuthorizer allows everything but the names in deny, and
// records what it was asked.
type recordingAuthorizer struct {
	deny  []string
	asked []string
}

func (a *recordingAuthorizer) Authorize(_ context.Context, at auth.Attributes) (auth.Decision, string, error) {
	res := at.Resource
	if at.Subresource != "" {
		res += "/" + at.Subresource
	}
	a.asked = append(a.asked, fmt.Sprintf("%s %s %s %s/%s %s", at.User.Name, at.Verb, at.APIGroup, at.Namespace, res, at.Name))
	if slices.Contains(a.deny, at.Name) {
		return auth.NoOpinion, "", nil
	}
	return auth.Allow, "", nil
}

func TestImpersonate(t *testing.T) {
	alice := &auth.User{Name: "alice", Groups: []string{"system:authenticated"}}
	tests := []struct {
		name    string
		headers http.Header
		deny    []string
		want    *auth.User
		asked   []string
		wantErr string
		code    int32
	}{
		{
			name:    "a request without headers impersonates no one",
			headers: http.Header{"Accept": {"application/json"}},
		},
		{
			name:    "a user gets system:authenticated",
			headers: http.Header{"Impersonate-User": {"bob"}},
			want:    &auth.User{Name: "bob", Groups: []string{"system:authenticated"}, Extra: map[string][]string{}},
			asked:   []string{"alice impersonate  /users bob"},
		},
		{
			name:    "a service account gets its groups and is checked in its namespace",
			headers: http.Header{"Impersonate-User": {"system:serviceaccount:demo:builder"}},
			want:    &auth.User{Name: "system:serviceaccount:demo:builder", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:demo", "system:authenticated"}, Extra: map[string][]string{}},
			asked:   []string{"alice impersonate  demo/serviceaccounts builder"},
		},
		{
			name:    "a service account name that is not a valid name is a plain user",
			headers: http.Header{"Impersonate-User": {"system:serviceaccount:Demo:builder"}},
			want:    &auth.User{Name: "system:serviceaccount:Demo:builder", Groups: []string{"system:authenticated"}, Extra: map[string][]string{}},
			asked:   []string{"alice impersonate  /users system:serviceaccount:Demo:builder"},
		},
		{
			name:    "groups given replace a service account's own",
			headers: http.Header{"Impersonate-User": {"system:serviceaccount:demo:builder"}, "Impersonate-Group": {"devs"}},
			want:    &auth.User{Name: "system:serviceaccount:demo:builder", Groups: []string{"devs", "system:authenticated"}, Extra: map[string][]string{}},
			asked:   []string{"alice impersonate  demo/serviceaccounts builder", "alice impersonate  /groups devs"},
		},
		{
			name:    "system:unauthenticated given keeps system:authenticated out",
			headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"devs", "system:unauthenticated"}},
			want:    &auth.User{Name: "bob", Groups: []string{"devs", "system:unauthenticated"}, Extra: map[string][]string{}},
			asked:   []string{"alice impersonate  /users bob", "alice impersonate  /groups devs", "alice impersonate  /groups system:unauthenticated"},
		},
		{
			name:    "system:anonymous gets system:unauthenticated",
			headers: http.Header{"Impersonate-User": {"system:anonymous"}},
			want:    &auth.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}, Extra: map[string][]string{}},
			asked:   []string{"alice impersonate  /users system:anonymous"},
		},
		{
			name: "extras are lower case and unescaped, and the uid is checked last",
			headers: http.Header{
				"Impersonate-User": {"bob"}, "Impersonate-Uid": {"1234"},
				"Impersonate-Extra-Scopes": {"view", "edit"}, "Impersonate-Extra-Example.com%2fteam": {"blue"},
			},
			want: &auth.User{Name: "bob", UID: "1234", Groups: []string{"system:authenticated"}, Extra: map[string][]string{"scopes": {"view", "edit"}, "example.com/team": {"blue"}}},
			asked: []string{
				"alice impersonate  /users bob",
				"alice impersonate authentication.k8s.io /userextras/example.com/team blue",
				"alice impersonate authentication.k8s.io /userextras/scopes view",
				"alice impersonate authentication.k8s.io /userextras/scopes edit",
				"alice impersonate authentication.k8s.io /uids 1234",
			},
		},
		{
			name:    "a user not allowed is forbidden in kube's words",
			headers: http.Header{"Impersonate-User": {"bob"}},
			deny:    []string{"bob"},
			asked:   []string{"alice impersonate  /users bob"},
			wantErr: `users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`,
			code:    http.StatusForbidden,
		},
		{
			name:    "the first refusal ends the checks",
			headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"admins", "devs"}},
			deny:    []string{"admins"},
			asked:   []string{"alice impersonate  /users bob", "alice impersonate  /groups admins"},
			wantErr: `groups "admins" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope`,
			code:    http.StatusForbidden,
		},
		{
			name:    "a service account not allowed is forbidden in its namespace",
			headers: http.Header{"Impersonate-User": {"system:serviceaccount:demo:builder"}},
			deny:    []string{"builder"},
			asked:   []string{"alice impersonate  demo/serviceaccounts builder"},
			wantErr: `serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "demo"`,
			code:    http.StatusForbidden,
		},
		{
			name:    "an extra not allowed names its key as a subresource",
			headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Extra-Scopes": {"admin"}},
			deny:    []string{"admin"},
			asked:   []string{"alice impersonate  /users bob", "alice impersonate authentication.k8s.io /userextras/scopes admin"},
			wantErr: `userextras.authentication.k8s.io "admin" is forbidden: User "alice" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`,
			code:    http.StatusForbidden,
		},
		{
			name:    "a uid not allowed is forbidden",
			headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Uid": {"1234"}},
			deny:    []string{"1234"},
			asked:   []string{"alice impersonate  /users bob", "alice impersonate authentication.k8s.io /uids 1234"},
			wantErr: `uids.authentication.k8s.io "1234" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`,
			code:    http.StatusForbidden,
		},
		{
			name:    "groups without a user are a bad request, checked before any authorization",
			headers: http.Header{"Impersonate-Group": {"devs"}},
			wantErr: `requested [{Group  devs    }] without impersonating a user`,
			code:    http.StatusBadRequest,
		},
		{
			name:    "a uid and an extra without a user are a bad request",
			headers: http.Header{"Impersonate-Uid": {"1234"}, "Impersonate-Extra-Scopes": {"view"}},
			wantErr: `requested [{UserExtra  view  authentication.k8s.io/v1  scopes} {UID  1234  authentication.k8s.io/v1  }] without impersonating a user`,
			code:    http.StatusBadRequest,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			authz := &recordingAuthorizer{deny: tt.deny}
			s := &Server{cfg: Config{Authorizers: []auth.Authorizer{authz}}}
			r, err := http.NewRequest(http.MethodGet, "/api/v1/namespaces/demo/pods", nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header = tt.headers.Clone()
			got, err := s.impersonate(context.Background(), r, alice)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v\nwant  %s", err, tt.wantErr)
				}
				if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Code != tt.code {
					t.Fatalf("err %#v, want code %d", err, tt.code)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("user = %+v\nwant   %+v", got, tt.want)
			}
			if !slices.Equal(authz.asked, tt.asked) {
				t.Fatalf("asked %q\nwant  %q", authz.asked, tt.asked)
			}
			if got != nil {
				for name := range r.Header {
					t.Errorf("header %s left on the request", name)
				}
			}
		})
	}
}
