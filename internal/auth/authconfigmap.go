package auth

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"
)

// The ConfigMap in which kube-apiserver publishes how it authenticates
// clients, read by every extension API server (k8s.io/apiserver's
// DelegatingAuthenticationOptions) and by the controller manager and
// scheduler, through the Role extension-apiserver-authentication-reader.
const (
	AuthenticationConfigMapNamespace = "kube-system"
	AuthenticationConfigMapName      = "extension-apiserver-authentication"
)

// Keys of the authentication ConfigMap, as kube-apiserver writes them.
// The requestheader-* keys are written only by an API server started with
// a front-proxy CA (--requestheader-client-ca-file); their header lists
// are JSON arrays.
const (
	ClientCAKey                     = "client-ca-file"
	RequestHeaderClientCAKey        = "requestheader-client-ca-file"
	RequestHeaderUsernameHeadersKey = "requestheader-username-headers"
	RequestHeaderGroupHeadersKey    = "requestheader-group-headers"
	RequestHeaderExtraHeadersKey    = "requestheader-extra-headers-prefix"
	RequestHeaderAllowedNamesKey    = "requestheader-allowed-names"
	RequestHeaderUIDHeadersKey      = "requestheader-uid-headers"
)

// RequestHeader is how an API server that proxies requests to extension
// API servers tells them who the user is (kube-apiserver's
// --requestheader-* flags): it presents a client certificate signed by
// ClientCA with one of AllowedNames as its common name, and names the
// user in the headers.
type RequestHeader struct {
	// ClientCA is the PEM bundle of the front-proxy CA.
	ClientCA []byte
	// AllowedNames are the client certificate common names accepted.
	AllowedNames []string
	// UsernameHeaders, GroupHeaders and ExtraHeaderPrefixes are the
	// headers that carry the user's name, groups and extra facts.
	UsernameHeaders, GroupHeaders, ExtraHeaderPrefixes []string
}

// FrontProxyRequestHeader is kubeadm's front-proxy configuration with
// the given CA: the common name front-proxy-client, X-Remote-User,
// X-Remote-Group and X-Remote-Extra-.
func FrontProxyRequestHeader(clientCA []byte) *RequestHeader {
	return &RequestHeader{
		ClientCA: clientCA, AllowedNames: []string{"front-proxy-client"},
		UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
	}
}

// EnsureAuthenticationConfigMap writes kube-system/extension-apiserver-
// authentication as kube-apiserver's cluster-authentication-trust
// controller does: client-ca-file holds the certificates already there
// followed by those of clientCA that are missing (several API servers
// sharing etcd each add theirs, none removes another's); with rh, the
// requestheader-* keys too (requestheader-client-ca-file combined the
// same way, the header and name lists as JSON arrays holding those
// already there and rh's); other keys are kept as they are. Without rh
// no requestheader-* key is written, as kube-apiserver without
// --requestheader-client-ca-file. It retries on conflicts and returns
// once the ConfigMap holds clientCA.
func EnsureAuthenticationConfigMap(ctx context.Context, cs kubernetes.Interface, clientCA []byte, rh *RequestHeader) error {
	want, err := cert.ParseCertsPEM(clientCA)
	if err != nil {
		return fmt.Errorf("configmap %s/%s: client CA: %w", AuthenticationConfigMapNamespace, AuthenticationConfigMapName, err)
	}
	var wantFrontProxy []*x509.Certificate
	if rh != nil {
		if wantFrontProxy, err = cert.ParseCertsPEM(rh.ClientCA); err != nil {
			return fmt.Errorf("configmap %s/%s: front-proxy CA: %w", AuthenticationConfigMapNamespace, AuthenticationConfigMapName, err)
		}
	}
	cms := cs.CoreV1().ConfigMaps(AuthenticationConfigMapNamespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cms.Get(ctx, AuthenticationConfigMapName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			cur = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: AuthenticationConfigMapNamespace, Name: AuthenticationConfigMapName}}
		} else if err != nil {
			return err
		}
		next := cur.DeepCopy()
		if next.Data == nil {
			next.Data = map[string]string{}
		}
		bundle, err := combineCABundle(next.Data[ClientCAKey], want)
		if err != nil {
			return err
		}
		next.Data[ClientCAKey] = bundle
		if rh != nil {
			if next.Data[RequestHeaderClientCAKey], err = combineCABundle(next.Data[RequestHeaderClientCAKey], wantFrontProxy); err != nil {
				return err
			}
			for key, add := range map[string][]string{
				RequestHeaderUsernameHeadersKey: rh.UsernameHeaders, RequestHeaderGroupHeadersKey: rh.GroupHeaders,
				RequestHeaderExtraHeadersKey: rh.ExtraHeaderPrefixes, RequestHeaderAllowedNamesKey: rh.AllowedNames,
			} {
				if next.Data[key], err = combineJSONList(next.Data[key], add); err != nil {
					return fmt.Errorf("%s: %w", key, err)
				}
			}
		}
		if equality.Semantic.DeepEqual(next, cur) {
			return nil
		}
		if cur.ResourceVersion == "" {
			_, err = cms.Create(ctx, next, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				// Another API server wrote it first: read it again.
				return apierrors.NewConflict(corev1.Resource("configmaps"), AuthenticationConfigMapName, err)
			}
			return err
		}
		_, err = cms.Update(ctx, next, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("configmap %s/%s: %w", AuthenticationConfigMapNamespace, AuthenticationConfigMapName, err)
	}
	return nil
}

// combineJSONList returns the JSON array of existing's strings followed
// by those of add it lacks, as kube's controller unites the lists of
// several API servers.
func combineJSONList(existing string, add []string) (string, error) {
	var list []string
	if existing != "" {
		if err := json.Unmarshal([]byte(existing), &list); err != nil {
			return "", err
		}
	}
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	if list == nil {
		list = []string{}
	}
	b, err := json.Marshal(list)
	return string(b), err
}

// combineCABundle returns the PEM bundle of existing's certificates
// followed by those of add it lacks, each once and none expired, as
// kube's combineCertLists orders and filters them.
func combineCABundle(existing string, add []*x509.Certificate) (string, error) {
	var certs []*x509.Certificate
	if existing != "" {
		parsed, err := cert.ParseCertsPEM([]byte(existing))
		if err != nil {
			return "", fmt.Errorf("existing %s: %w", ClientCAKey, err)
		}
		certs = parsed
	}
	certs = slices.DeleteFunc(certs, func(c *x509.Certificate) bool { return time.Now().After(c.NotAfter) })
	for _, c := range add {
		seen := false
		for _, have := range certs {
			if bytes.Equal(have.Raw, c.Raw) {
				seen = true
				break
			}
		}
		if !seen {
			certs = append(certs, c)
		}
	}
	var out []byte
	for _, c := range certs {
		pem, err := cert.EncodeCertificates(c)
		if err != nil {
			return "", err
		}
		out = append(out, pem...)
	}
	return string(out), nil
}
