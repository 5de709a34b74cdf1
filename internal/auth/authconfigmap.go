package auth

import (
	"bytes"
	"context"
	"crypto/x509"
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

// EnsureAuthenticationConfigMap writes kube-system/extension-apiserver-
// authentication as kube-apiserver's cluster-authentication-trust
// controller does: client-ca-file holds the certificates already there
// followed by those of clientCA that are missing (several API servers
// sharing etcd each add theirs, none removes another's); the other keys
// are kept as they are. minik has no front-proxy CA, so it writes no
// requestheader-* key, as kube-apiserver without
// --requestheader-client-ca-file. It retries on conflicts and returns
// once the ConfigMap holds clientCA.
func EnsureAuthenticationConfigMap(ctx context.Context, cs kubernetes.Interface, clientCA []byte) error {
	want, err := cert.ParseCertsPEM(clientCA)
	if err != nil {
		return fmt.Errorf("configmap %s/%s: client CA: %w", AuthenticationConfigMapNamespace, AuthenticationConfigMapName, err)
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
