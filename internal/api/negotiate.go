package api

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// output is what a response should be encoded as.
type output struct {
	info runtime.SerializerInfo
	// table is set when the client asked for a meta.k8s.io Table, with the
	// Table's group version.
	table *schema.GroupVersion
	// partial is set when the client asked for the objects' metadata only
	// (as=PartialObjectMetadata, or PartialObjectMetadataList for a list),
	// with the meta.k8s.io group version to encode them in.
	partial *schema.GroupVersion
	// pretty asks for indented JSON.
	pretty bool
}

const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// transforms are the meta.k8s.io kinds an endpoint may answer instead of
// its objects: a Table, and the objects' metadata as kind partial
// (PartialObjectMetadata for a get or watch, PartialObjectMetadataList
// for a list); kube-apiserver's endpoints allow the same.
type transforms struct {
	table   bool
	partial string
}

var (
	// objectTransforms are those of a get or a watch.
	objectTransforms = transforms{table: true, partial: "PartialObjectMetadata"}
	// listTransforms are those of a list.
	listTransforms = transforms{table: true, partial: "PartialObjectMetadataList"}
)

// negotiateOutput picks the response encoding from the Accept header as
// kube-apiserver does. Table is honoured only where tables are allowed;
// metadata only (PartialObjectMetadata) is not.
func negotiateOutput(r *http.Request, allowTable bool) (output, error) {
	return negotiateFor(r, transforms{table: allowTable})
}

// negotiateFor picks the response encoding from the Accept header, taking
// the first clause the endpoint can answer: a clause asking for a kind the
// endpoint cannot give is passed over, as in kube.
func negotiateFor(r *http.Request, allow transforms) (output, error) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		accept = mediaJSON
	}
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*":
			mt = mediaJSON
		}
		info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mt)
		if !ok {
			continue
		}
		o := output{info: info, pretty: isTrue(r.URL.Query().Get("pretty"))}
		switch params["as"] {
		case "":
		case "Table":
			if !allow.table || params["g"] != "meta.k8s.io" || (params["v"] != "v1" && params["v"] != "v1beta1") || mt == mediaProtobuf {
				continue
			}
			o.table = &schema.GroupVersion{Group: "meta.k8s.io", Version: params["v"]}
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			if allow.partial != params["as"] || params["g"] != "meta.k8s.io" || params["v"] != "v1" {
				continue
			}
			o.partial = &schema.GroupVersion{Group: "meta.k8s.io", Version: params["v"]}
		default:
			continue
		}
		return o, nil
	}
	return output{}, apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "", schema.GroupResource{}, "", "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf", 0, false)
}

// inputSerializer returns the serializer for a request body's content type.
func inputSerializer(r *http.Request) (runtime.SerializerInfo, error) {
	mt, err := inputMediaType(r)
	if err != nil {
		return runtime.SerializerInfo{}, err
	}
	info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mt)
	if !ok {
		return runtime.SerializerInfo{}, unsupportedMediaType(mt)
	}
	return info, nil
}

// inputMediaType is the media type of the request body (JSON when unsaid).
func inputMediaType(r *http.Request) (string, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = mediaJSON
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", unsupportedMediaType(ct)
	}
	return mt, nil
}

// encoder returns an encoder of objects of gv for the output.
func (o output) encoder(gv schema.GroupVersion) runtime.Encoder {
	s := o.info.Serializer
	if o.pretty && o.info.PrettySerializer != nil {
		s = o.info.PrettySerializer
	}
	return Codecs.WithoutConversion().EncoderForVersion(s, gv)
}

// writeObject encodes obj (of group version gv) as the response.
func writeObject(w http.ResponseWriter, o output, code int, gv schema.GroupVersion, obj runtime.Object) {
	w.Header().Set("Content-Type", o.info.MediaType)
	w.WriteHeader(code)
	if err := o.encoder(gv).Encode(obj, w); err != nil {
		// The status line is gone; all that can be done is to stop.
		fmt.Fprintf(w, "\nencode %s: %v\n", obj.GetObjectKind().GroupVersionKind().Kind, err)
	}
}

// statusGV is the group version Status objects are encoded as.
var statusGV = schema.GroupVersion{Version: "v1"}

// writeError encodes err as a Status, in the client's format when it can be
// negotiated and JSON otherwise.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := errorToStatus(err)
	o, nerr := negotiateOutput(r, false)
	if nerr != nil {
		o, _ = negotiateOutput(&http.Request{Header: http.Header{}, URL: r.URL}, false)
	}
	writeObject(w, o, int(status.Code), statusGV, status)
}

// errorToStatus converts an error to the Status kube-apiserver would send.
func errorToStatus(err error) *metav1.Status {
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		if st.Code == 0 {
			st.Code = http.StatusInternalServerError
		}
		st.Status = metav1.StatusFailure
		return &st
	}
	st := apierrors.NewInternalError(err).Status()
	return &st
}

// unsupportedMediaType is kube's 415 for a body it cannot decode.
func unsupportedMediaType(ct string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", acceptedBodyTypes(ct)),
	}}
}

func acceptedBodyTypes(string) string {
	return "application/json, application/yaml, application/vnd.kubernetes.protobuf"
}

// errNoResource is kube's 404 for a path that names no resource.
func errNoResource() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource", Details: &metav1.StatusDetails{},
	}}
}

// errMethodNotAllowed is kube's 405 for a method its router has no route
// for on a path it serves (DELETE of the namespaces collection): the
// generic Status its go-restful service error handler writes.
func errMethodNotAllowed() error {
	return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "405: Method Not Allowed", 0, false)
}
