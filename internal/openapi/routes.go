package openapi

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"minik/internal/registry"
)

// An operation is one HTTP method on one path, described once and rendered
// into both dialects. Its shape follows kube-apiserver's installer
// (k8s.io/apiserver/pkg/endpoints/installer.go): the same operation ids,
// descriptions, query parameters and responses.
type operation struct {
	method       string // lower case: get, put, post, patch, delete
	id           string
	doc          string
	tag          string
	action       string                   // x-kubernetes-action; empty for discovery
	gvk          *schema.GroupVersionKind // x-kubernetes-group-version-kind
	params       []param
	body         reflect.Type // request body; nil when there is none
	bodyModel    string       // or the model of the request body, defined apart
	bodyRequired bool
	consumes     []string
	produces     []string
	responses    []response
}

type param struct {
	name     string
	in       string // "path" or "query"
	doc      string
	typ      string // string, integer or boolean
	required bool
}

type response struct {
	code  int
	doc   string
	typ   reflect.Type // nil: no body, unless model names one
	model string       // a model the document defines apart (a custom resource's kind)
}

// A route is the operations served at one path, with the parameters they
// all share hoisted to the path, as kube's OpenAPI builder does.
type route struct {
	path   string
	params []param
	ops    []operation
}

// A section is one OpenAPI v3 document: the routes under one web service
// root ("api/v1", "apis/apps", "version"), named by that root.
type section struct {
	name   string
	routes []route
	// custom are the custom resources whose models the section defines;
	// a section of them is titled and secured as kube's CRD documents are.
	custom []*registry.CustomResource
}

// Media types, as kube-apiserver lists them for its built-in resources.
var (
	mediaTypes      = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	watchMediaTypes = append(append([]string(nil), mediaTypes...), "application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
	patchMediaTypes = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"}
	anyMediaType    = []string{"*/*"}
)

var (
	statusType     = reflect.TypeOf(metav1.Status{})
	watchEventType = reflect.TypeOf(metav1.WatchEvent{})
	patchType      = reflect.TypeOf(metav1.Patch{})
	deleteOptsType = reflect.TypeOf(metav1.DeleteOptions{})
	scaleType      = reflect.TypeOf(autoscalingv1.Scale{})
	bindingType    = reflect.TypeOf(corev1.Binding{})
	stringType     = reflect.TypeOf("")
)

// sections groups the routes of the resources into the documents kube
// serves: one per group version, one per group, the roots /api and /apis,
// and /version.
func sections(resources []*registry.Resource, types *runtime.Scheme) ([]section, error) {
	byGV := map[schema.GroupVersion][]*registry.Resource{}
	var gvs []schema.GroupVersion
	for _, r := range resources {
		if byGV[r.GroupVersion] == nil {
			gvs = append(gvs, r.GroupVersion)
		}
		byGV[r.GroupVersion] = append(byGV[r.GroupVersion], r)
	}
	sort.Slice(gvs, func(i, j int) bool { return gvs[i].String() < gvs[j].String() })

	out := []section{
		{name: "api", routes: []route{discoveryRoute("/api/", "getCoreAPIVersions", "get available API versions", "core", metav1.APIVersions{})}},
		{name: "apis", routes: []route{discoveryRoute("/apis/", "getAPIVersions", "get available API versions", "apis", metav1.APIGroupList{})}},
		{name: "version", routes: []route{versionRoute()}},
	}
	groups := map[string]bool{}
	for _, gv := range gvs {
		if gv.Group != "" && !groups[gv.Group] {
			groups[gv.Group] = true
			g := operationGroup(gv.Group)
			out = append(out, section{name: "apis/" + gv.Group, routes: []route{
				discoveryRoute("/apis/"+gv.Group+"/", "get"+idWord(g, true)+"APIGroup", "get information of a group", idWord(g, false), metav1.APIGroup{}),
			}})
		}
		prefix, tag, idPrefix := gvNames(gv)
		routes := []route{discoveryRoute(prefix+"/", "get"+idPrefix+"APIResources", "get available resources", tag, metav1.APIResourceList{})}
		for _, r := range byGV[gv] {
			rs, err := resourceRoutes(r, types)
			if err != nil {
				return nil, err
			}
			routes = append(routes, rs...)
		}
		out = append(out, section{name: strings.TrimPrefix(prefix, "/"), routes: routes})
	}
	return out, nil
}

// gvNames returns the path prefix of a group version ("/apis/apps/v1"), its
// operation tag ("apps_v1") and the word its operation ids carry ("AppsV1"),
// as k8s.io/apiserver/pkg/endpoints/openapi.GetOperationIDAndTags makes them.
func gvNames(gv schema.GroupVersion) (prefix, tag, idPrefix string) {
	prefix = "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		prefix = "/api/" + gv.Version
	}
	g := operationGroup(gv.Group)
	return prefix, idWord(g, false) + "_" + idWord(gv.Version, false), idWord(g, true) + idWord(gv.Version, true)
}

// operationGroup is the group as operation ids spell it: "core" for the
// legacy group, without the ".k8s.io" suffix otherwise.
func operationGroup(group string) string {
	if group == "" {
		return "core"
	}
	return strings.TrimSuffix(group, ".k8s.io")
}

// idWord turns "rbac.authorization" into "rbacAuthorization" (or, with
// capitalize, "RbacAuthorization"): letters and digits are kept and the
// letter after each dropped character is upper-cased.
func idWord(s string, capitalize bool) string {
	var b strings.Builder
	upper := capitalize
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if upper {
				r = unicode.ToUpper(r)
				upper = false
			}
			b.WriteRune(r)
		} else {
			upper = true
		}
	}
	return b.String()
}

func discoveryRoute(path, id, doc, tag string, result interface{}) route {
	return route{path: path, ops: []operation{{
		method: "get", id: id, doc: doc, tag: tag,
		consumes: mediaTypes, produces: mediaTypes,
		responses: []response{ok(reflect.TypeOf(result)), unauthorized},
	}}}
}

func versionRoute() route {
	json := []string{"application/json"}
	return route{path: "/version/", ops: []operation{{
		method: "get", id: "getCodeVersion", doc: "get the version information for this server", tag: "version",
		consumes: json, produces: json,
		responses: []response{ok(reflect.TypeOf(version.Info{})), unauthorized},
	}}}
}

var unauthorized = response{code: 401, doc: "Unauthorized"}

func ok(t reflect.Type) response       { return response{code: 200, doc: "OK", typ: t} }
func created(t reflect.Type) response  { return response{code: 201, doc: "Created", typ: t} }
func accepted(t reflect.Type) response { return response{code: 202, doc: "Accepted", typ: t} }

// resourceRoutes describes the verbs kube serves for a resource: list,
// create and deletecollection on the collection, get, replace, patch and
// delete on an item, the deprecated watch paths, the cross-namespace list
// for namespaced resources, and the status, scale, binding and log
// subresources the descriptor declares, and those that are writable views
// of the object (finalize, ephemeralcontainers, resize). Other
// subresources are not described.
func resourceRoutes(r *registry.Resource, types *runtime.Scheme) ([]route, error) {
	gvk := r.GroupVersionKind()
	obj, err := types.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("openapi for %s: %w", r.GroupResource(), err)
	}
	listObj, err := types.New(r.GroupVersion.WithKind(r.Kind + "List"))
	if err != nil {
		return nil, fmt.Errorf("openapi for %s: %w", r.GroupResource(), err)
	}
	d := newResourceDoc(r)
	objType, listType := reflect.TypeOf(obj).Elem(), reflect.TypeOf(listObj).Elem()
	kind := r.Kind
	collection := d.prefix + d.nsPath + "/" + r.Name
	item := collection + "/{name}"
	itemParams := d.itemParams(kind)
	listOpts := optionParams(metav1.ListOptions{})

	list := d.op("get", d.id("list", "", "", r.Namespaced), "list or watch objects of kind "+kind, "list", gvk, d.nsParams, listOpts)
	list.produces, list.responses = watchMediaTypes, []response{ok(listType), unauthorized}

	create := d.op("post", d.id("create", "", "", r.Namespaced), "create"+article(kind)+kind, "post", gvk, d.nsParams, optionParams(metav1.CreateOptions{}))
	create.body, create.bodyRequired = objType, true
	create.responses = []response{ok(objType), created(objType), accepted(objType), unauthorized}

	deleteCollection := d.op("delete", d.id("deletecollection", "", "", r.Namespaced), "delete collection of "+kind, "deletecollection", gvk, d.nsParams,
		optionParams(metav1.DeleteOptions{}), optionParams(metav1.ListOptions{}, "watch", "allowWatchBookmarks"))
	deleteCollection.body = deleteOptsType
	deleteCollection.responses = []response{ok(statusType), unauthorized}

	deleted := statusType
	if r.DeleteReturnsObject {
		deleted = objType
	}
	del := d.op("delete", d.id("delete", "", "", r.Namespaced), "delete"+article(kind)+kind, "delete", gvk, itemParams, optionParams(metav1.DeleteOptions{}))
	del.body = deleteOptsType
	del.responses = []response{ok(deleted), accepted(deleted), unauthorized}

	watchList := "watch individual changes to a list of " + kind + ". deprecated: use the 'watch' parameter with a list operation instead."
	watchItem := "watch changes to an object of kind " + kind + ". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter."
	watch := func(id, doc, action string, params []param) operation {
		o := d.op("get", id, doc, action, gvk, params, listOpts)
		o.produces, o.responses = watchMediaTypes, []response{ok(watchEventType), unauthorized}
		return o
	}

	collectionOps := []operation{list, create}
	if r.Serves("deletecollection") {
		collectionOps = append(collectionOps, deleteCollection)
	}
	routes := []route{
		{path: collection, ops: collectionOps},
		{path: item, ops: append(d.readWriteOps("", "the specified "+kind, gvk, objType, itemParams), del)},
		{path: d.prefix + "/watch" + d.nsPath + "/" + r.Name, ops: []operation{watch(d.id("watch", "", "List", r.Namespaced), watchList, "watchlist", d.nsParams)}},
		{path: d.prefix + "/watch" + d.nsPath + "/" + r.Name + "/{name}", ops: []operation{watch(d.id("watch", "", "", r.Namespaced), watchItem, "watch", itemParams)}},
	}
	if r.Namespaced {
		all := d.op("get", d.id("list", "", "ForAllNamespaces", false), "list or watch objects of kind "+kind, "list", gvk, listOpts)
		all.produces, all.responses = watchMediaTypes, []response{ok(listType), unauthorized}
		routes = append(routes,
			route{path: d.prefix + "/" + r.Name, ops: []operation{all}},
			route{path: d.prefix + "/watch/" + r.Name, ops: []operation{watch(d.id("watch", "", "ListForAllNamespaces", false), watchList, "watchlist", nil)}},
		)
	}

	if r.HasStatus {
		routes = append(routes, route{path: item + "/status",
			ops: d.readWriteOps("status", "status of the specified "+kind, gvk, objType, itemParams)})
	}
	if r.HasScale {
		routes = append(routes, route{path: item + "/scale",
			ops: d.readWriteOps("scale", "scale of the specified "+kind, autoscalingv1.SchemeGroupVersion.WithKind("Scale"), scaleType, d.itemParams("Scale"))})
	}
	for _, sr := range r.Subresources {
		sub := sr.Name
		switch sub {
		case "binding":
			bind := d.op("post", d.id("create", sub, "", r.Namespaced), "create binding of"+article(kind)+kind, "post",
				corev1.SchemeGroupVersion.WithKind("Binding"), d.itemParams("Binding"), optionParams(metav1.CreateOptions{}))
			bind.body, bind.bodyRequired = bindingType, true
			bind.responses = []response{ok(bindingType), created(bindingType), accepted(bindingType), unauthorized}
			routes = append(routes, route{path: item + "/" + sub, ops: []operation{bind}})
		case "log":
			log := d.op("get", d.id("read", sub, "", r.Namespaced), "read log of the specified "+kind, "get", gvk, itemParams, optionParams(corev1.PodLogOptions{}))
			log.produces = append([]string{"text/plain"}, mediaTypes...)
			log.responses = []response{ok(stringType), unauthorized}
			routes = append(routes, route{path: item + "/" + sub, ops: []operation{log}})
		default:
			if sr.Update == nil || sr.Kind != r.Kind {
				continue
			}
			// A writable view of the object (namespaces/finalize,
			// pods/ephemeralcontainers, pods/resize): the operations of
			// its verbs.
			methods := map[string]bool{"get": slices.Contains(sr.Verbs, "get"), "put": slices.Contains(sr.Verbs, "update"), "patch": slices.Contains(sr.Verbs, "patch")}
			var ops []operation
			for _, o := range d.readWriteOps(sub, sub+" of the specified "+kind, gvk, objType, itemParams) {
				if methods[o.method] {
					ops = append(ops, o)
				}
			}
			routes = append(routes, route{path: item + "/" + sub, ops: ops})
		}
	}
	for i := range routes {
		routes[i].hoistCommonParams()
	}
	return routes, nil
}

// resourceDoc holds what the operations of one resource share.
type resourceDoc struct {
	r                     *registry.Resource
	prefix, tag, idPrefix string
	nsPath                string  // "/namespaces/{namespace}" or ""
	nsParams              []param // the namespace path parameter, if any
}

func newResourceDoc(r *registry.Resource) *resourceDoc {
	d := &resourceDoc{r: r}
	d.prefix, d.tag, d.idPrefix = gvNames(r.GroupVersion)
	if r.Namespaced {
		d.nsPath = "/namespaces/{namespace}"
		d.nsParams = []param{{name: "namespace", in: "path", doc: "object name and auth scope, such as for teams and projects", typ: "string", required: true}}
	}
	return d
}

// itemParams are the path parameters of an item: its namespace, if any, and
// its name, described by the kind the path serves.
func (d *resourceDoc) itemParams(kind string) []param {
	name := param{name: "name", in: "path", doc: "name of the " + kind, typ: "string", required: true}
	return append(append([]param(nil), d.nsParams...), name)
}

// id builds an operation id as kube does: verb, group version, scope, kind,
// subresource and suffix ("listAppsV1NamespacedDeployment",
// "readCoreV1NamespacedPodLog", "watchAppsV1DeploymentListForAllNamespaces").
func (d *resourceDoc) id(verb, sub, suffix string, namespaced bool) string {
	scope := ""
	if namespaced {
		scope = "Namespaced"
	}
	collection := ""
	if verb == "deletecollection" {
		// kube's id builder knows only the verb "delete", and capitalizes the rest.
		verb, collection = "delete", "Collection"
	}
	return verb + d.idPrefix + collection + scope + d.r.Kind + idWord(sub, true) + suffix
}

// op starts an operation with what they all share: the tag, the pretty
// parameter, the media types and the extensions kubectl looks for.
func (d *resourceDoc) op(method, id, doc, action string, gvk schema.GroupVersionKind, params ...[]param) operation {
	o := operation{
		method: method, id: id, doc: doc, tag: d.tag, action: action, gvk: &gvk,
		params: []param{pretty}, consumes: anyMediaType, produces: mediaTypes,
	}
	for _, ps := range params {
		o.params = append(o.params, ps...)
	}
	return o
}

// readWriteOps returns get, put and patch of an item or of its status or
// scale subresource; what names the target in descriptions ("the specified
// Deployment", "scale of the specified Deployment").
func (d *resourceDoc) readWriteOps(sub, what string, gvk schema.GroupVersionKind, t reflect.Type, params []param) []operation {
	ns := d.r.Namespaced
	get := d.op("get", d.id("read", sub, "", ns), "read "+what, "get", gvk, params)
	get.responses = []response{ok(t), unauthorized}

	put := d.op("put", d.id("replace", sub, "", ns), "replace "+what, "put", gvk, params, optionParams(metav1.UpdateOptions{}))
	put.body, put.bodyRequired = t, true
	put.responses = []response{ok(t), created(t), unauthorized}

	patch := d.op("patch", d.id("patch", sub, "", ns), "partially update "+what, "patch", gvk, params, optionParams(metav1.PatchOptions{}))
	patch.body, patch.bodyRequired, patch.consumes = patchType, true, patchMediaTypes
	patch.responses = []response{ok(t), created(t), unauthorized}
	return []operation{get, put, patch}
}

var pretty = param{name: "pretty", in: "query", typ: "string",
	doc: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."}

// optionParams turns an options struct into query parameters as kube's
// installer does (AddObjectParams): one per top-level field of a simple
// type, named by its json tag and described by the struct's SwaggerDoc.
func optionParams(options interface{}, exclude ...string) []param {
	t := reflect.TypeOf(options)
	var docs map[string]string
	if d, ok := options.(swaggerDoc); ok {
		docs = d.SwaggerDoc()
	}
	var out []param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct || ft.Kind() == reflect.Interface {
			continue
		}
		name := jsonTagOf(f).name
		if name == "" || name == "-" || slices.Contains(exclude, name) {
			continue
		}
		out = append(out, param{name: name, in: "query", doc: docs[name], typ: queryType(ft)})
	}
	return out
}

// queryType is the JSON type of a query parameter; lists are documented as
// their element type, as kube does.
func queryType(t reflect.Type) string {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return "string"
}

// hoistCommonParams moves the parameters every operation of the route has
// to the route, and sorts both lists by name and location.
func (r *route) hoistCommonParams() {
	type key struct{ name, in string }
	count := map[key]int{}
	for _, o := range r.ops {
		for _, p := range o.params {
			count[key{p.name, p.in}]++
		}
	}
	for i := range r.ops {
		kept := r.ops[i].params[:0:0]
		for _, p := range r.ops[i].params {
			if count[key{p.name, p.in}] != len(r.ops) {
				kept = append(kept, p)
			} else if i == 0 {
				r.params = append(r.params, p)
			}
		}
		r.ops[i].params = kept
		sortParams(r.ops[i].params)
	}
	sortParams(r.params)
}

func sortParams(ps []param) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].name != ps[j].name {
			return ps[i].name < ps[j].name
		}
		return ps[i].in < ps[j].in
	})
}

// article returns " a " or " an " for a kind, as kube's descriptions use.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOUaeiou", rune(kind[0])) {
		return " an "
	}
	return " a "
}
