package openapi

import (
	"fmt"
	"maps"
	"reflect"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// info and security are what kube's documents declare about themselves.
var (
	info = &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: "unversioned"}}

	bearerToken = "BearerToken"
	bearerDoc   = "Bearer Token authentication"
)

// buildV3 renders one section as an OpenAPI 3.0 document holding the models
// its operations reach.
func buildV3(sec section, facts *typeFacts) (*spec3.OpenAPI, error) {
	w := newWalker(openAPI3, facts)
	for _, cr := range sec.custom {
		if err := w.defineCustomResource(cr); err != nil {
			return nil, err
		}
	}
	paths := map[string]*spec3.Path{}
	for _, r := range sec.routes {
		p := &spec3.Path{}
		p.Parameters = v3Params(r.params)
		for _, o := range r.ops {
			op, err := v3Operation(w, o)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", o.method, r.path, err)
			}
			switch o.method {
			case "get":
				p.Get = op
			case "put":
				p.Put = op
			case "post":
				p.Post = op
			case "patch":
				p.Patch = op
			case "delete":
				p.Delete = op
			}
		}
		paths[r.path] = p
	}
	doc := &spec3.OpenAPI{
		Version: "3.0.0",
		Info:    info,
		Paths:   &spec3.Paths{Paths: paths},
		Components: &spec3.Components{
			Schemas: w.definitions(),
			SecuritySchemes: spec3.SecuritySchemes{bearerToken: &spec3.SecurityScheme{
				SecuritySchemeProps: spec3.SecuritySchemeProps{Type: "apiKey", Name: "authorization", In: "header", Description: bearerDoc},
			}},
		},
	}
	if len(sec.custom) > 0 {
		doc.Info, doc.Components.SecuritySchemes = crdInfo, nil
	}
	return doc, nil
}

func v3Operation(w *walker, o operation) (*spec3.Operation, error) {
	op := &spec3.Operation{OperationProps: spec3.OperationProps{
		Description: o.doc,
		OperationId: o.id,
		Tags:        []string{o.tag},
		Parameters:  v3Params(o.params),
		Responses:   &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{}}},
	}}
	op.Extensions = operationExtensions(o)
	if o.body != nil || o.bodyModel != "" {
		content, err := v3Content(w, o.consumes, o.body, o.bodyModel)
		if err != nil {
			return nil, err
		}
		op.RequestBody = &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{Content: content, Required: o.bodyRequired}}
	}
	for _, r := range o.responses {
		resp := &spec3.Response{ResponseProps: spec3.ResponseProps{Description: r.doc}}
		if r.typ != nil || r.model != "" {
			content, err := v3Content(w, o.produces, r.typ, r.model)
			if err != nil {
				return nil, err
			}
			resp.Content = content
		}
		op.Responses.StatusCodeResponses[r.code] = resp
	}
	return op, nil
}

func v3Content(w *walker, mediaTypes []string, body reflect.Type, model string) (map[string]*spec3.MediaType, error) {
	s, err := w.bodySchema(body, model)
	if err != nil {
		return nil, err
	}
	content := map[string]*spec3.MediaType{}
	for _, mt := range mediaTypes {
		s := s
		content[mt] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: &s}}
	}
	return content, nil
}

func v3Params(ps []param) []*spec3.Parameter {
	var out []*spec3.Parameter
	for _, p := range ps {
		out = append(out, &spec3.Parameter{ParameterProps: spec3.ParameterProps{
			Name: p.name, In: p.in, Description: p.doc, Required: p.required,
			Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{p.typ}, UniqueItems: true}},
		}})
	}
	return out
}

// buildV2 renders every section as one Swagger 2.0 document.
func buildV2(secs []section, facts *typeFacts) (*spec.Swagger, error) {
	w := newWalker(swagger2, facts)
	paths := map[string]spec.PathItem{}
	for _, sec := range secs {
		for _, cr := range sec.custom {
			if err := w.defineCustomResource(cr); err != nil {
				return nil, err
			}
		}
		for _, r := range sec.routes {
			var p spec.PathItem
			p.Parameters = v2Params(r.params)
			for _, o := range r.ops {
				op, err := v2Operation(w, o)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", o.method, r.path, err)
				}
				switch o.method {
				case "get":
					p.Get = op
				case "put":
					p.Put = op
				case "post":
					p.Post = op
				case "patch":
					p.Patch = op
				case "delete":
					p.Delete = op
				}
			}
			paths[r.path] = p
		}
	}
	defs := spec.Definitions{}
	for name, s := range w.definitions() {
		defs[name] = *s
	}
	return &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        info,
		Paths:       &spec.Paths{Paths: paths},
		Definitions: defs,
		SecurityDefinitions: spec.SecurityDefinitions{bearerToken: &spec.SecurityScheme{
			SecuritySchemeProps: spec.SecuritySchemeProps{Type: "apiKey", Name: "authorization", In: "header", Description: bearerDoc},
		}},
		Security: []map[string][]string{{bearerToken: {}}},
	}}, nil
}

// mergeV2 returns static with the paths and models of secs added, as kube
// merges the documents of custom resources into its static one: what
// static has already is kept. static is not modified; the result shares
// its paths and models.
func mergeV2(static *spec.Swagger, secs []section, facts *typeFacts) (*spec.Swagger, error) {
	if len(secs) == 0 {
		return static, nil
	}
	custom, err := buildV2(secs, facts)
	if err != nil {
		return nil, err
	}
	out := *static
	paths := *static.Paths
	paths.Paths = maps.Clone(static.Paths.Paths)
	out.Paths, out.Definitions = &paths, maps.Clone(static.Definitions)
	for p, item := range custom.Paths.Paths {
		if _, ok := out.Paths.Paths[p]; !ok {
			out.Paths.Paths[p] = item
		}
	}
	for name, model := range custom.Definitions {
		if _, ok := out.Definitions[name]; !ok {
			out.Definitions[name] = model
		}
	}
	return &out, nil
}

func v2Operation(w *walker, o operation) (*spec.Operation, error) {
	op := &spec.Operation{OperationProps: spec.OperationProps{
		Description: o.doc,
		ID:          o.id,
		Tags:        []string{o.tag},
		Consumes:    o.consumes,
		Produces:    o.produces,
		Schemes:     []string{"https"},
		Responses:   &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{}}},
	}}
	op.Extensions = operationExtensions(o)
	if o.body != nil || o.bodyModel != "" {
		s, err := w.bodySchema(o.body, o.bodyModel)
		if err != nil {
			return nil, err
		}
		op.Parameters = append(op.Parameters, spec.Parameter{ParamProps: spec.ParamProps{Name: "body", In: "body", Required: o.bodyRequired, Schema: &s}})
	}
	op.Parameters = append(op.Parameters, v2Params(o.params)...)
	for _, r := range o.responses {
		resp := spec.Response{ResponseProps: spec.ResponseProps{Description: r.doc}}
		if r.typ != nil || r.model != "" {
			s, err := w.bodySchema(r.typ, r.model)
			if err != nil {
				return nil, err
			}
			resp.Schema = &s
		}
		op.Responses.StatusCodeResponses[r.code] = resp
	}
	return op, nil
}

func v2Params(ps []param) []spec.Parameter {
	var out []spec.Parameter
	for _, p := range ps {
		out = append(out, spec.Parameter{
			ParamProps:        spec.ParamProps{Name: p.name, In: p.in, Description: p.doc, Required: p.required},
			SimpleSchema:      spec.SimpleSchema{Type: p.typ},
			CommonValidations: spec.CommonValidations{UniqueItems: true},
		})
	}
	return out
}

// operationExtensions are what kubectl keys on: the kind an operation acts
// on and the kind of action it is.
func operationExtensions(o operation) spec.Extensions {
	if o.gvk == nil {
		return nil
	}
	return spec.Extensions{extAction: o.action, extGVK: gvkExtension(*o.gvk)}
}
