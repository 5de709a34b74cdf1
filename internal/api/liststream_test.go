package api

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func (fs *filterServer) get(t *testing.T, path, accept string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fs.URL+path, nil)
	req.Header.Set("X-Test-User", "alice")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := fs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s (%v)", path, resp.StatusCode, body, err)
	}
	return string(body)
}

// ageCell is a table row's last cell when it is an age ("0s", "3m2s").
var ageCell = regexp.MustCompile(`"[0-9][0-9a-z]*"\]`)

func TestStreamedListIsTheList(t *testing.T) {
	defer func(n int64) { listPageSize = n }(listPageSize)
	listPageSize = 7
	fs := startFilterServer(t, Config{})
	fs.create(t, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`)
	for i := range 30 {
		fs.create(t, "/api/v1/namespaces/default/configmaps", fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%02d","labels":{"odd":"%t"}},"data":{"i":"%d","html":"<a&b>"}}`, i, i%2 == 1, i))
	}
	table := "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, tc := range []struct{ name, path, accept string }{
		{"a list over several pages", "/api/v1/namespaces/default/configmaps", ""},
		{"a list across namespaces", "/api/v1/configmaps", ""},
		{"a list with a label selector", "/api/v1/namespaces/default/configmaps?labelSelector=odd%3Dtrue", ""},
		{"a list that selects nothing", "/api/v1/namespaces/default/configmaps?labelSelector=odd%3Dmaybe", ""},
		{"an empty collection", "/api/v1/namespaces/empty/secrets", ""},
		{"a table", "/api/v1/namespaces/default/configmaps", table},
		{"a table with whole objects", "/api/v1/namespaces/default/configmaps?includeObject=Object", table},
		{"an empty table", "/api/v1/namespaces/empty/secrets", table},
	} {
		t.Run(tc.name+" streams the bytes of the whole list", func(t *testing.T) {
			streamed := fs.get(t, tc.path, tc.accept)
			sep := "?"
			if strings.Contains(tc.path, "?") {
				sep = "&"
			}
			// A limit above the collection's size reads it whole.
			whole := fs.get(t, tc.path+sep+"limit=1000", tc.accept)
			// A table's Age cells are read at each request: the two may
			// straddle a second.
			streamed, whole = ageCell.ReplaceAllString(streamed, `"AGE"]`), ageCell.ReplaceAllString(whole, `"AGE"]`)
			if streamed != whole {
				t.Fatalf("streamed:\n%s\nwhole:\n%s", streamed, whole)
			}
		})
	}
}
