package api

import (
	"net/http/httptest"
	"testing"
)

func TestRequestInfoNamesTheObjectAListSelects(t *testing.T) {
	cases := []struct {
		name, method, url string
		verb, object      string
	}{
		{"a get", "GET", "/api/v1/namespaces/demo/secrets/tls", "get", "tls"},
		{"a list", "GET", "/api/v1/namespaces/demo/secrets", "list", ""},
		{"a list of one name", "GET", "/api/v1/namespaces/demo/secrets?fieldSelector=metadata.name%3Dtls", "list", "tls"},
		{"a watch of one name", "GET", "/api/v1/namespaces/demo/configmaps?watch=true&fieldSelector=metadata.name%3Dsettings", "watch", "settings"},
		{"a list of one name and more", "GET", "/api/v1/namespaces/demo/secrets?fieldSelector=metadata.name%3Dtls,type%3Dopaque", "list", "tls"},
		{"a list excluding a name", "GET", "/api/v1/namespaces/demo/secrets?fieldSelector=metadata.name!%3Dtls", "list", ""},
		{"a list selecting a name that is no path segment", "GET", "/api/v1/namespaces/demo/secrets?fieldSelector=metadata.name%3D..", "list", ""},
		{"a deletecollection of one name", "DELETE", "/api/v1/namespaces/demo/secrets?fieldSelector=metadata.name%3Dtls", "deletecollection", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := ParseRequestInfo(httptest.NewRequest(c.method, c.url, nil))
			if info.Verb != c.verb || info.Name != c.object {
				t.Fatalf("verb %q name %q, want %q %q", info.Verb, info.Name, c.verb, c.object)
			}
		})
	}
}
