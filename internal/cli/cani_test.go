package cli

import (
	"fmt"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestAccessRules(t *testing.T) {
	tests := []struct {
		name   string
		status authorizationv1.SubjectRulesReviewStatus
		want   []string
	}{
		{
			name: "verbs of one resource merge in the order first seen",
			status: authorizationv1.SubjectRulesReviewStatus{ResourceRules: []authorizationv1.ResourceRule{
				{Verbs: []string{"list", "get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
				{Verbs: []string{"get", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			}},
			want: []string{"pods [] [] [list get watch]"},
		},
		{
			name: "each resource name and group is a line of its own",
			status: authorizationv1.SubjectRulesReviewStatus{ResourceRules: []authorizationv1.ResourceRule{
				{Verbs: []string{"get"}, APIGroups: []string{"", "apps"}, Resources: []string{"secrets"}, ResourceNames: []string{"b", "a"}},
			}},
			want: []string{"secrets [] [a] [get]", "secrets [] [b] [get]", "secrets.apps [] [a] [get]", "secrets.apps [] [b] [get]"},
		},
		{
			name: "non-resource URLs are never merged, and sort with the rest by their verbs first",
			status: authorizationv1.SubjectRulesReviewStatus{
				ResourceRules: []authorizationv1.ResourceRule{
					{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
					{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"deployments/scale"}},
				},
				NonResourceRules: []authorizationv1.NonResourceRule{
					{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/api"}},
					{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}},
				},
			},
			want: []string{"*.* [] [] [*]", " [/api] [] [get]", " [/healthz] [] [get]", " [/healthz] [] [get]", "deployments.apps/scale [] [] [get]"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range accessRules(tt.status) {
				got = append(got, fmt.Sprintf("%s %v %v %v", resourceGroup(r.Resources, r.APIGroups), r.NonResourceURLs, r.ResourceNames, r.Verbs))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
