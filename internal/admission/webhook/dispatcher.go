package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	admissionlisters "k8s.io/client-go/listers/admissionregistration/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"

	"minik/internal/admission"
	"minik/internal/admission/cel"
	"minik/internal/admission/match"
	"minik/internal/auth"
)

// readyWait bounds how long a request waits for the configuration cache to
// fill after the server starts.
const readyWait = 10 * time.Second

// Config configures the webhook plugins.
type Config struct {
	// Mutating and Validating read the configurations from an informer
	// cache. Required.
	Mutating   admissionlisters.MutatingWebhookConfigurationLister
	Validating admissionlisters.ValidatingWebhookConfigurationLister
	// Namespaces reads a request's namespace for namespaceSelector.
	// Required.
	Namespaces match.NamespaceGetter
	// Services and EndpointSlices resolve hooks given by service reference.
	// Optional: without them only url hooks can be called.
	Services       corelisters.ServiceLister
	EndpointSlices discoverylisters.EndpointSliceLister
	// Default re-applies a resource's defaults to an object a mutating hook
	// patched, as kube does. Optional.
	Default func(obj runtime.Object)
	// Compiler compiles match conditions; nil makes one.
	Compiler *cel.Compiler
	// Authorizer answers match conditions' authorizer checks (the server's
	// authorizer chain), as kube's; nil leaves the variable unset.
	Authorizer auth.Authorizer
	// HasSynced tells whether the caches are filled. Optional.
	HasSynced func() bool
	// Equivalents lists equivalent resources for matchPolicy Equivalent.
	Equivalents match.Equivalents
	// Logger logs hooks that fail open; nil means slog.Default().
	Logger *slog.Logger
}

// Plugins are the two webhook admission plugins, sharing one cache of
// compiled configurations and HTTP clients.
type Plugins struct {
	cfg     Config
	src     *source
	clients *clients
}

// New validates cfg and builds the plugins.
func New(cfg Config) (*Plugins, error) {
	if cfg.Mutating == nil || cfg.Validating == nil || cfg.Namespaces == nil {
		return nil, errors.New("webhook: configuration listers and a namespace getter are required")
	}
	if cfg.Compiler == nil {
		c, err := cel.NewCompiler()
		if err != nil {
			return nil, err
		}
		cfg.Compiler = c
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Plugins{
		cfg:     cfg,
		src:     &source{mutating: cfg.Mutating, validating: cfg.Validating, compiler: cfg.Compiler},
		clients: &clients{services: cfg.Services, endpoints: cfg.EndpointSlices},
	}, nil
}

// Mutating is the MutatingAdmissionWebhook plugin.
func (p *Plugins) Mutating() admission.Mutator { return &mutating{p} }

// Validating is the ValidatingAdmissionWebhook plugin.
func (p *Plugins) Validating() admission.Validator { return &validating{p} }

type mutating struct{ p *Plugins }

func (*mutating) Name() string { return "MutatingAdmissionWebhook" }

type validating struct{ p *Plugins }

func (*validating) Name() string { return "ValidatingAdmissionWebhook" }

// waitForReady waits (bounded) for the configuration cache.
func (p *Plugins) waitForReady(ctx context.Context) bool {
	if p.cfg.HasSynced == nil || p.cfg.HasSynced() {
		return true
	}
	deadline := time.NewTimer(readyWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return p.cfg.HasSynced()
		case <-tick.C:
			if p.cfg.HasSynced() {
				return true
			}
		}
	}
}

// Admit implements admission.Mutator: the matching mutating hooks are
// called in order, each seeing the object as the hooks before it left it;
// a hook with reinvocationPolicy IfNeeded is called once more when a later
// hook changed the object.
func (m *mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if match.Exempt(a) || (a.Operation != admission.Create && a.Operation != admission.Update) {
		return nil
	}
	if !m.p.waitForReady(ctx) {
		return admission.NewForbidden(a, fmt.Errorf("not yet ready to handle request"))
	}
	hooks, err := m.p.src.mutatingHooks()
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(hooks) == 0 {
		return nil
	}
	var reinvocable []*hook
	reinvoke := map[string]bool{}
	for _, h := range hooks {
		called, changed, err := m.p.mutate(ctx, h, a)
		if err != nil {
			return err
		}
		if changed {
			for _, prev := range reinvocable {
				reinvoke[prev.key] = true
			}
		}
		if called && h.reinvoke {
			reinvocable = append(reinvocable, h)
		}
	}
	for _, h := range hooks {
		if !reinvoke[h.key] {
			continue
		}
		if _, _, err := m.p.mutate(ctx, h, a); err != nil {
			return err
		}
	}
	return nil
}

// Validate implements admission.Validator: the matching validating hooks
// are called in parallel; the first refusal in hook order is returned.
func (v *validating) Validate(ctx context.Context, a *admission.Attributes) error {
	if match.Exempt(a) || a.Operation == admission.Connect {
		return nil
	}
	if !v.p.waitForReady(ctx) {
		return admission.NewForbidden(a, fmt.Errorf("not yet ready to handle request"))
	}
	hooks, err := v.p.src.validatingHooks()
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var selected []*hook
	for _, h := range hooks {
		ok, err := v.p.shouldCall(ctx, h, a)
		if err != nil {
			return err
		}
		if ok {
			selected = append(selected, h)
		}
	}
	if len(selected) == 0 {
		return nil
	}
	req, err := admission.AdmissionRequest(a)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	errs := make([]error, len(selected))
	var wg sync.WaitGroup
	for i, h := range selected {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := v.p.call(ctx, h, req, false)
			errs[i] = v.p.outcome(ctx, h, a, resp, err)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// outcome turns a hook's answer into the request's fate: nil when allowed
// (or when the call failed and the hook fails open), else kube's error.
func (p *Plugins) outcome(ctx context.Context, h *hook, a *admission.Attributes, resp *admissionv1.AdmissionResponse, err error) error {
	var callErr *callError
	if errors.As(err, &callErr) {
		if h.failure == admissionregistrationv1.Ignore {
			p.cfg.Logger.Warn("failed calling webhook, failing open", "webhook", h.name, "err", callErr)
			return nil
		}
		return apierrors.NewInternalError(callErr)
	}
	if err != nil {
		return err
	}
	for _, w := range resp.Warnings {
		admission.AddWarning(ctx, w)
	}
	if !resp.Allowed {
		return denied(h.name, resp.Result)
	}
	return nil
}

// shouldCall tells whether a hook applies to a request: its rules, its
// namespace and object selectors and its match conditions; and refuses a
// dry run the hook may not see.
func (p *Plugins) shouldCall(ctx context.Context, h *hook, a *admission.Attributes) (bool, error) {
	if !match.Rules(h.rules, h.matchPol, a, p.cfg.Equivalents) {
		return false, nil
	}
	if ok, err := match.Namespace(ctx, h.nsSelector, a, p.cfg.Namespaces); err != nil || !ok {
		return false, err
	}
	if ok, err := match.Object(h.objSelector, a); err != nil || !ok {
		return false, err
	}
	if len(h.conditions) > 0 {
		act, err := cel.NewActivation(a, nil)
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		act.WithAuthorizer(a, p.cfg.Authorizer)
		ok, err := cel.Match(h.conditions, act)
		if err != nil {
			if h.failure == admissionregistrationv1.Ignore {
				return false, nil
			}
			return false, admission.NewForbidden(a, err)
		}
		if !ok {
			return false, nil
		}
	}
	if a.DryRun && h.sideEffect != admissionregistrationv1.SideEffectClassNone && h.sideEffect != admissionregistrationv1.SideEffectClassNoneOnDryRun {
		return false, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.name))
	}
	return true, nil
}

// mutate calls one mutating hook if it applies, and applies its patch to
// a.Object in place. called tells whether it was called, changed whether
// the object changed.
func (p *Plugins) mutate(ctx context.Context, h *hook, a *admission.Attributes) (called, changed bool, err error) {
	ok, err := p.shouldCall(ctx, h, a)
	if err != nil || !ok {
		return false, false, err
	}
	req, err := admission.AdmissionRequest(a)
	if err != nil {
		return false, false, apierrors.NewInternalError(err)
	}
	resp, err := p.call(ctx, h, req, true)
	if err := p.outcome(ctx, h, a, resp, err); err != nil || resp == nil {
		return true, false, err
	}
	if len(resp.Patch) == 0 {
		return true, false, nil
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return true, false, apierrors.NewInternalError(fmt.Errorf("decode patch of admission webhook %q: %w", h.name, err))
	}
	patched, err := patch.Apply(req.Object.Raw)
	if err != nil {
		return true, false, apierrors.NewInternalError(err)
	}
	if bytes.Equal(patched, req.Object.Raw) {
		return true, false, nil
	}
	next := reflect.New(reflect.TypeOf(a.Object).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(patched, next); err != nil {
		return true, false, apierrors.NewInternalError(fmt.Errorf("decode the object patched by admission webhook %q: %w", h.name, err))
	}
	if p.cfg.Default != nil {
		p.cfg.Default(next)
	}
	next.GetObjectKind().SetGroupVersionKind(a.Object.GetObjectKind().GroupVersionKind())
	reflect.ValueOf(a.Object).Elem().Set(reflect.ValueOf(next).Elem())
	return true, true, nil
}

// callError is a failure to get a valid answer from a hook; the hook's
// failurePolicy decides whether the request fails with it.
type callError struct {
	hook   string
	reason error
}

// Error reads as kube's ErrCallingWebhook.
func (e *callError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.hook, e.reason)
}

// Unwrap returns the cause.
func (e *callError) Unwrap() error { return e.reason }

// call sends the AdmissionReview to a hook and checks its answer.
func (p *Plugins) call(ctx context.Context, h *hook, req *admissionv1.AdmissionRequest, mutating bool) (*admissionv1.AdmissionResponse, error) {
	fail := func(err error) (*admissionv1.AdmissionResponse, error) {
		return nil, &callError{hook: h.name, reason: err}
	}
	u, err := hookURL(h.client, h.timeout)
	if err != nil {
		return fail(fmt.Errorf("failed to call webhook: %w", err))
	}
	hc, err := p.clients.client(h.client.CABundle)
	if err != nil {
		return fail(fmt.Errorf("failed to call webhook: %w", err))
	}
	body, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		return fail(fmt.Errorf("failed to call webhook: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return fail(fmt.Errorf("failed to call webhook: %w", err))
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, */*")
	res, err := hc.Do(hr)
	if err != nil {
		return fail(fmt.Errorf("failed to call webhook: %w", err))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 3*1024*1024))
	if err != nil {
		return fail(fmt.Errorf("failed to call webhook: %w", err))
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fail(fmt.Errorf("failed to call webhook: %w", httpError(res.StatusCode, data)))
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return fail(fmt.Errorf("failed to call webhook: %w", err))
	}
	resp, err := verify(req.UID, mutating, &review)
	if err != nil {
		return fail(fmt.Errorf("received invalid webhook response: %w", err))
	}
	return resp, nil
}

// httpError describes a non-2xx answer as client-go does.
func httpError(code int, body []byte) error {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Message != "" {
		return errors.New(st.Message)
	}
	return fmt.Errorf("the server responded with the status code %d but did not return more information", code)
}

// verify checks an AdmissionReview answer as kube does.
func verify(uid types.UID, mutating bool, r *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	if r.Response == nil {
		return nil, errors.New("webhook response was absent")
	}
	if r.Response.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.Response.UID)
	}
	want := admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")
	if got := r.GroupVersionKind(); got != want {
		return nil, fmt.Errorf("expected webhook response of %v, got %v", want.String(), got.String())
	}
	pt := ""
	if r.Response.PatchType != nil {
		pt = string(*r.Response.PatchType)
	}
	if len(r.Response.Patch) > 0 {
		switch {
		case pt == "":
			return nil, errors.New("webhook returned response.patch but not response.patchType")
		case !mutating:
			return nil, errors.New("validating webhook may not return response.patch")
		case pt != string(admissionv1.PatchTypeJSONPatch):
			return nil, fmt.Errorf("invalid webhook response.patchType %q; only JSONPatch is supported", pt)
		}
	}
	return r.Response, nil
}

// denied is kube's error for a hook that refused a request.
func denied(name string, result *metav1.Status) error {
	st := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		st = *result
	}
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	if st.Status == "" || st.Status == metav1.StatusSuccess {
		st.Status = metav1.StatusFailure
	}
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case st.Message != "":
		st.Message = by + ": " + st.Message
	case st.Reason != "":
		st.Message = by + ": " + string(st.Reason)
	default:
		st.Message = by + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: st}
}
