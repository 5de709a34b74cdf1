package cli

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/restmapper"
)

// resourceTuple is a "TYPE/NAME" argument.
type resourceTuple struct {
	Resource string
	Name     string
}

// resourceArgs are the positional arguments of get, parsed as kubectl's
// resource builder does: either TYPE[,TYPE...] [NAME...] or TYPE/NAME...
type resourceArgs struct {
	Types  []string
	Names  []string
	Tuples []resourceTuple
}

// parseResourceArgs parses get's arguments. A list of types followed by
// names ("deploy,svc web") means each type with each name. Categories
// ("all") are expanded in the type list by expand, when given.
func parseResourceArgs(args []string, baseName string, expand func(string) string) (resourceArgs, error) {
	var r resourceArgs
	args = normalizeMultipleResourcesArgs(args)
	slashes := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			slashes++
		}
	}
	switch {
	case slashes > 0 && slashes == len(args):
		for _, a := range args {
			seg := strings.Split(a, "/")
			if len(seg) != 2 {
				return r, fmt.Errorf("arguments in resource/name form may not have more than one slash")
			}
			if seg[0] == "" || seg[1] == "" || len(splitResourceArgument(seg[0])) != 1 {
				return r, fmt.Errorf("arguments in resource/name form must have a single resource and name")
			}
			r.Tuples = append(r.Tuples, resourceTuple{Resource: seg[0], Name: seg[1]})
		}
		return r, nil
	case slashes > 0:
		return r, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. '%s get resource/<resource_name>' instead of '%s get resource resource/<resource_name>'", baseName, baseName)
	}
	if len(args) == 0 {
		return r, nil
	}
	first := args[0]
	if expand != nil {
		first = expand(first)
	}
	r.Types = splitResourceArgument(first)
	r.Names = args[1:]
	return r, nil
}

// normalizeMultipleResourcesArgs turns "a,b name1 name2" into "a/name1
// a/name2 b/name1 b/name2".
func normalizeMultipleResourcesArgs(args []string) []string {
	if len(args) < 2 {
		return args
	}
	resources := splitResourceArgument(args[0])
	if len(resources) <= 1 {
		return args
	}
	var out []string
	for _, resource := range resources {
		for _, name := range args[1:] {
			out = append(out, resource+"/"+name)
		}
	}
	return out
}

// splitResourceArgument splits "a,b,a" into unique "a", "b".
func splitResourceArgument(arg string) []string {
	var out []string
	seen := sets.New[string]()
	for _, s := range strings.Split(arg, ",") {
		if seen.Has(s) {
			continue
		}
		seen.Insert(s)
		out = append(out, s)
	}
	return out
}

// categoryAliases returns a function expanding categories in a type list
// ("all" → "pods,services,...").
func categoryAliases(expander restmapper.CategoryExpander) func(string) string {
	return func(input string) string {
		var replaced []string
		for _, arg := range strings.Split(input, ",") {
			if resources, ok := expander.Expand(arg); ok {
				var names []string
				for _, gr := range resources {
					if gr.Group == "" {
						names = append(names, gr.Resource)
						continue
					}
					names = append(names, gr.Resource+"."+gr.Group)
				}
				arg = strings.Join(names, ",")
			}
			replaced = append(replaced, arg)
		}
		return strings.Join(replaced, ",")
	}
}

// mappingFor resolves a type argument — resource, short name, singular,
// kind, optionally qualified ("deployments.v1.apps", "deploy.apps") — to
// its REST mapping.
func mappingFor(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	fullySpecifiedGVR, groupResource := schema.ParseResourceArg(arg)
	gvk := schema.GroupVersionKind{}
	if fullySpecifiedGVR != nil {
		gvk, _ = mapper.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(groupResource.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullySpecifiedGVK, groupKind := schema.ParseKindArg(arg)
	if fullySpecifiedGVK == nil {
		gvk := groupKind.WithVersion("")
		fullySpecifiedGVK = &gvk
	}
	if !fullySpecifiedGVK.Empty() {
		if mapping, err := mapper.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return mapping, nil
		}
	}
	mapping, err := mapper.RESTMapping(groupKind, gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the server doesn't have a resource type %q", groupResource.Resource)
		}
		return nil, err
	}
	return mapping, nil
}
