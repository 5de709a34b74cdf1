package api

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/fields"
)

// RequestInfo is what a request asks for, parsed from its path, method
// and query as kube-apiserver's RequestInfoFactory does.
type RequestInfo struct {
	// IsResourceRequest is false for non-resource paths (/healthz, /api, ...).
	IsResourceRequest bool
	// Path is the request path.
	Path string
	// Verb is the API verb: get, list, watch, create, update, patch,
	// delete, deletecollection (or the lower-case HTTP method for
	// non-resource requests).
	Verb       string
	APIPrefix  string
	APIGroup   string
	APIVersion string
	Namespace  string
	// Resource is the plural resource name.
	Resource    string
	Subresource string
	Name        string
	// Parts are the path segments after the group and version.
	Parts []string
	// FieldSelector is the fieldSelector of a list, watch or
	// deletecollection, which authorizers may judge (the node authorizer's
	// ResourceSlices of a node).
	FieldSelector string
}

// namespaceSubresources are the subresources of a Namespace, told apart from
// resources inside it.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// ParseRequestInfo parses a request.
func ParseRequestInfo(r *http.Request) *RequestInfo {
	info := &RequestInfo{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) < 2 || (parts[0] != "api" && parts[0] != "apis") {
		return info
	}
	info.APIPrefix = parts[0]
	parts = parts[1:]
	if info.APIPrefix == "apis" {
		if len(parts) < 2 {
			return info
		}
		info.APIGroup = parts[0]
		parts = parts[1:]
	}
	info.APIVersion = parts[0]
	parts = parts[1:]
	if len(parts) == 0 {
		return info
	}
	info.IsResourceRequest = true
	watchPath := false
	if parts[0] == "watch" {
		watchPath = true
		parts = parts[1:]
	}
	if len(parts) > 0 && parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		if len(parts) > 2 && !namespaceSubresources[parts[2]] {
			parts = parts[2:]
		}
	}
	info.Parts = parts
	switch {
	case len(parts) >= 3:
		info.Subresource = parts[2]
		fallthrough
	case len(parts) == 2:
		info.Name = parts[1]
		fallthrough
	case len(parts) == 1:
		info.Resource = parts[0]
	}
	if info.Resource == "namespaces" {
		info.Namespace = ""
		if len(parts) >= 2 {
			info.Name = parts[1]
		}
	}
	q := r.URL.Query()
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		info.Verb = "get"
		if info.Name == "" {
			info.Verb = "list"
			if !watchPath {
				// A list or watch of one object (a metadata.name field
				// selector) names it, so that authorizers (the node
				// authorizer, RBAC's resourceNames) can judge it.
				info.Name = selectedName(q.Get("fieldSelector"))
			}
		}
		if watchPath || isTrue(q.Get("watch")) {
			info.Verb = "watch"
		}
	case http.MethodPost:
		info.Verb = "create"
	case http.MethodPut:
		info.Verb = "update"
	case http.MethodPatch:
		info.Verb = "patch"
	case http.MethodDelete:
		info.Verb = "delete"
		if info.Name == "" {
			info.Verb = "deletecollection"
		}
	}
	switch info.Verb {
	case "list", "watch", "deletecollection":
		info.FieldSelector = q.Get("fieldSelector")
	}
	return info
}

// selectedName is the name a field selector requires (metadata.name=x),
// if it is a valid path segment, as kube's RequestInfoFactory takes it.
func selectedName(selector string) string {
	if selector == "" {
		return ""
	}
	sel, err := fields.ParseSelector(selector)
	if err != nil {
		return ""
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || len(content.IsPathSegmentName(name)) > 0 {
		return ""
	}
	return name
}

func isTrue(s string) bool {
	return s == "true" || s == "1"
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
