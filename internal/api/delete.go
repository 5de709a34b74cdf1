package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minik/internal/admission"
	"minik/internal/storage"
)

// decodeDeleteOptions decodes a DeleteOptions body in any group version, as
// kube's delete handler does: meta's internal scheme holds DeleteOptions as
// an unversioned kind, so a client may label it with the custom resource's
// own group version (controller-runtime does), meta.k8s.io/v1 or v1.
func decodeDeleteOptions(r *http.Request, body []byte, opts *metav1.DeleteOptions) error {
	mt, err := inputMediaType(r)
	if err != nil {
		return err
	}
	info, ok := runtime.SerializerInfoForMediaType(metainternalscheme.Codecs.SupportedMediaTypes(), mt)
	if !ok {
		return unsupportedMediaType(mt)
	}
	def := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
	dec := metainternalscheme.Codecs.DecoderToVersion(info.Serializer, metav1.SchemeGroupVersion)
	obj, _, err := dec.Decode(body, &def, opts)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if obj != opts {
		return apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
	}
	return nil
}

// deleteOptions reads DeleteOptions from the body, or else from the query.
func deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		if err := decodeDeleteOptions(r, body, opts); err != nil {
			return nil, err
		}
	} else if err := metainternalscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if vals := r.URL.Query()["dryRun"]; len(vals) > 0 && len(opts.DryRun) == 0 {
		opts.DryRun = vals
	}
	for _, v := range opts.DryRun {
		if v != metav1.DryRunAll {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("Invalid dry run value: %s. Supported value is: All", v))
		}
	}
	//lint:ignore SA1019 kube-apiserver still honours the deprecated field
	if opts.OrphanDependents != nil && opts.PropagationPolicy != nil {
		return nil, apierrors.NewBadRequest("orphanDependents and propagationPolicy cannot be both set")
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan:
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("propagationPolicy: Unsupported value: %q: supported values: \"Foreground\", \"Background\", \"Orphan\"", *p))
		}
	}
	return opts, nil
}

func (h *resourceHandler) serveDelete(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	o, err := negotiateOutput(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := deleteOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, deleted, err := h.delete(r.Context(), info.Namespace, info.Name, opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h.writeDeleted(w, o, obj, deleted)
}

func (h *resourceHandler) writeDeleted(w http.ResponseWriter, o output, obj runtime.Object, deleted bool) {
	if !deleted || h.res.DeleteReturnsObject {
		writeObject(w, o, http.StatusOK, h.res.GroupVersion, obj)
		return
	}
	m, _ := meta.Accessor(obj)
	writeObject(w, o, http.StatusOK, statusGV, &metav1.Status{
		Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: m.GetName(), Group: h.res.GroupVersion.Group, Kind: h.res.Name, UID: m.GetUID(),
		},
	})
}

// delete deletes an object, or marks it for deletion when finalizers or a
// grace period hold it. deleted tells which.
func (h *objectStore) delete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	dryRun := len(opts.DryRun) > 0
	for attempt := 0; attempt < 20; attempt++ {
		kv, err := h.s.store.Get(ctx, h.key(ns, name))
		if err != nil {
			return nil, false, h.storageError(err, name)
		}
		current, err := h.codec.decode(kv)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		m, _ := meta.Accessor(current)
		if p := opts.Preconditions; p != nil {
			if p.UID != nil && *p.UID != m.GetUID() {
				return nil, false, apierrors.NewConflict(h.res.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
				return nil, false, apierrors.NewConflict(h.res.GroupResource(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, m.GetResourceVersion()))
			}
		}
		if err := h.s.chain.Validate(ctx, h.admissionAttributes(ctx, admission.Delete, "", nil, current, dryRun)); err != nil {
			return nil, false, err
		}
		marked := current.DeepCopyObject()
		if h.markForDeletion(marked, opts) {
			if dryRun {
				return marked, false, nil
			}
			data, err := h.codec.encode(marked)
			if err != nil {
				return nil, false, apierrors.NewInternalError(err)
			}
			if string(data) == string(kv.Value) {
				return current, false, nil
			}
			rev, err := h.s.store.Update(ctx, kv.Key, kv.Revision, data)
			if errors.Is(err, storage.ErrConflict) {
				continue
			}
			if err != nil {
				return nil, false, h.storageError(err, name)
			}
			mm, _ := meta.Accessor(marked)
			mm.SetResourceVersion(strconv.FormatInt(rev, 10))
			return marked, false, nil
		}
		if dryRun {
			return current, true, nil
		}
		if _, err := h.s.store.Delete(ctx, kv.Key, kv.Revision); err != nil {
			if errors.Is(err, storage.ErrConflict) {
				continue
			}
			return nil, false, h.storageError(err, name)
		}
		h.release(ctx, current, nil)
		return current, true, nil
	}
	return nil, false, conflict(h.res, name)
}

// markForDeletion sets deletionTimestamp and the propagation finalizers,
// and runs the kind's PrepareForDelete, when the object cannot go at
// once: finalizers or a grace period hold it. It returns false when the
// object can be removed now.
func (h *objectStore) markForDeletion(obj runtime.Object, opts *metav1.DeleteOptions) bool {
	strategy := h.res.Strategy
	if strategy.PrepareForDelete != nil {
		strategy.PrepareForDelete(obj)
	}
	m, _ := meta.Accessor(obj)
	finalizers := m.GetFinalizers()
	if m.GetDeletionTimestamp() == nil {
		switch propagation(opts, finalizers, strategy.OrphansByDefault) {
		case metav1.DeletePropagationOrphan:
			finalizers = addFinalizer(finalizers, metav1.FinalizerOrphanDependents)
		case metav1.DeletePropagationForeground:
			finalizers = addFinalizer(finalizers, metav1.FinalizerDeleteDependents)
		}
	}
	var grace int64
	if strategy.GracePeriod != nil {
		grace = strategy.GracePeriod(obj, opts)
	}
	hold := len(finalizers) > 0 || grace > 0 || h.holdsDeletion(obj)
	if !hold {
		return false
	}
	m.SetFinalizers(finalizers)
	now := h.s.clock.Now().Truncate(time.Second)
	if m.GetDeletionTimestamp() == nil {
		ts := metav1.NewTime(now.Add(time.Duration(grace) * time.Second))
		m.SetDeletionTimestamp(&ts)
		m.SetDeletionGracePeriodSeconds(&grace)
	} else if cur := m.GetDeletionGracePeriodSeconds(); grace > 0 && cur != nil && grace < *cur {
		// A shorter grace period may replace a longer one.
		ts := metav1.NewTime(now.Add(time.Duration(grace) * time.Second))
		m.SetDeletionTimestamp(&ts)
		m.SetDeletionGracePeriodSeconds(&grace)
	}
	return true
}

// propagation is the propagation of a delete: the options', else the
// one a propagation finalizer already on the object asks for, else the
// resource's default (orphanByDefault), as kube's shouldOrphanDependents
// and shouldDeleteDependents decide.
func propagation(opts *metav1.DeleteOptions, finalizers []string, orphanByDefault bool) metav1.DeletionPropagation {
	if opts.PropagationPolicy != nil {
		return *opts.PropagationPolicy
	}
	//lint:ignore SA1019 kube-apiserver still honours the deprecated field
	if orphan := opts.OrphanDependents; orphan != nil {
		if *orphan {
			return metav1.DeletePropagationOrphan
		}
		return metav1.DeletePropagationBackground
	}
	for _, f := range finalizers {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return metav1.DeletePropagationOrphan
		case metav1.FinalizerDeleteDependents:
			return metav1.DeletePropagationForeground
		}
	}
	if orphanByDefault {
		return metav1.DeletePropagationOrphan
	}
	return metav1.DeletePropagationBackground
}

func addFinalizer(fs []string, f string) []string {
	if slices.Contains(fs, f) {
		return fs
	}
	return append(fs, f)
}

// holdsDeletion tells whether the kind's own finalizers (a Namespace's
// spec.finalizers) still hold a deleted object.
func (h *objectStore) holdsDeletion(obj runtime.Object) bool {
	return h.res.Strategy.HoldsDeletion != nil && h.res.Strategy.HoldsDeletion(obj)
}

func (h *resourceHandler) serveDeleteCollection(w http.ResponseWriter, r *http.Request, info *RequestInfo) {
	o, err := negotiateOutput(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, err := deleteOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sel, err := h.parseSelection(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	items, lm, err := h.list(r.Context(), info.Namespace, sel, storage.ListOptions{})
	if err != nil {
		writeError(w, r, err)
		return
	}
	var out []runtime.Object
	for _, item := range items {
		m, _ := meta.Accessor(item)
		obj, _, err := h.delete(r.Context(), m.GetNamespace(), m.GetName(), opts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		out = append(out, obj)
	}
	list := h.codec.NewList()
	_ = meta.SetList(list, out)
	la, _ := meta.ListAccessor(list)
	la.SetResourceVersion(lm.ResourceVersion)
	writeObject(w, o, http.StatusOK, h.res.GroupVersion, list)
}
