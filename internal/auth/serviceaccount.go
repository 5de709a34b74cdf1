package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/clock"

	"minik/internal/pki"
)

// Service account identities, as kube names them.
const (
	// ServiceAccountUserPrefix starts a service account's user name:
	// system:serviceaccount:<namespace>:<name>.
	ServiceAccountUserPrefix = "system:serviceaccount:"
	// GroupServiceAccounts holds every service account; each is also in
	// system:serviceaccounts:<namespace>.
	GroupServiceAccounts = "system:serviceaccounts"
	// LegacyIssuer is the issuer of the long-lived tokens kept in Secrets
	// of type kubernetes.io/service-account-token.
	LegacyIssuer = "kubernetes/serviceaccount"
	// DefaultIssuer is the issuer of the tokens minikd signs (kubeadm's).
	DefaultIssuer = "https://kubernetes.default.svc.cluster.local"
)

// The user info extra keys of a bound service account token.
const (
	ExtraPodName      = "authentication.kubernetes.io/pod-name"
	ExtraPodUID       = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName     = "authentication.kubernetes.io/node-name"
	ExtraNodeUID      = "authentication.kubernetes.io/node-uid"
	ExtraCredentialID = "authentication.kubernetes.io/credential-id"
)

// ServiceAccountUser returns the user name of a service account.
func ServiceAccountUser(namespace, name string) string {
	return ServiceAccountUserPrefix + namespace + ":" + name
}

// ServiceAccountGroups returns the groups of a service account in
// namespace (without system:authenticated).
func ServiceAccountGroups(namespace string) []string {
	return []string{GroupServiceAccounts, GroupServiceAccounts + ":" + namespace}
}

// SplitServiceAccountUser returns the namespace and name of a service
// account user name.
func SplitServiceAccountUser(user string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, ServiceAccountUserPrefix)
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	if !ok || namespace == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return namespace, name, true
}

// ObjectGetter reads the objects a service account token refers to. An
// implementation reads from informer caches, not from storage on every
// request.
type ObjectGetter interface {
	GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
}

// LoadOrCreateSigningKey loads the service account signing key (an ECDSA
// P-256 key, PEM) from path, creating it (mode 0600) when missing.
func LoadOrCreateSigningKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generate service account key: %w", err)
		}
		der, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, fmt.Errorf("encode service account key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
		}
		if err := pki.WriteFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return nil, err
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read service account key: %w", err)
	}
	key, err := jwt.ParseECPrivateKeyFromPEM(data)
	if err != nil {
		return nil, fmt.Errorf("parse service account key %s: %w", path, err)
	}
	return key, nil
}

// ServiceAccountTokensConfig configures ServiceAccountTokens.
type ServiceAccountTokensConfig struct {
	// Key signs and verifies tokens. Required.
	Key *ecdsa.PrivateKey
	// Issuer is the iss of issued tokens; empty means DefaultIssuer.
	Issuer string
	// APIAudiences are the audiences the API server accepts, and those of a
	// TokenRequest that names none; empty means [Issuer].
	APIAudiences []string
	// Getter reads the service accounts, pods, secrets and nodes tokens
	// are bound to. Required to authenticate.
	Getter ObjectGetter
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock
}

// ServiceAccountTokens issues service account tokens (signed JWTs with
// kube's claims) and authenticates them: bound tokens (from TokenRequest)
// are checked for expiry, audience and against the live service account
// (and pod, secret or node) UID; legacy tokens against the Secret holding
// them. Successful checks are remembered for ten seconds, as kube's token
// cache does, so that a client's requests do not each verify a signature.
type ServiceAccountTokens struct {
	cfg   ServiceAccountTokensConfig
	keyID string

	mu    sync.Mutex
	cache map[[32]byte]cachedUser
}

type cachedUser struct {
	user    *User
	expires time.Time
}

const (
	tokenCacheTTL  = 10 * time.Second
	tokenCacheSize = 4096
	// tokenLeeway absorbs clock skew on exp and nbf, as kube's.
	tokenLeeway = time.Minute
)

// NewServiceAccountTokens validates cfg and fills defaults.
func NewServiceAccountTokens(cfg ServiceAccountTokensConfig) (*ServiceAccountTokens, error) {
	if cfg.Key == nil {
		return nil, errors.New("service account tokens: a signing key is required")
	}
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if len(cfg.APIAudiences) == 0 {
		cfg.APIAudiences = []string{cfg.Issuer}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	kid, err := keyID(cfg.Key.Public())
	if err != nil {
		return nil, err
	}
	return &ServiceAccountTokens{cfg: cfg, keyID: kid, cache: map[[32]byte]cachedUser{}}, nil
}

// keyID is kube's key id: the unpadded base64url SHA-256 of the public
// key's PKIX DER.
func keyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("service account key id: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// APIAudiences returns the audiences the API server accepts.
func (t *ServiceAccountTokens) APIAudiences() []string { return slices.Clone(t.cfg.APIAudiences) }

// Issuer returns the iss of issued tokens.
func (t *ServiceAccountTokens) Issuer() string { return t.cfg.Issuer }

// ref is a reference claim.
type ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// kubernetesClaims are the private claims of a bound token.
type kubernetesClaims struct {
	Namespace      string           `json:"namespace,omitempty"`
	ServiceAccount ref              `json:"serviceaccount,omitempty"`
	Pod            *ref             `json:"pod,omitempty"`
	Secret         *ref             `json:"secret,omitempty"`
	Node           *ref             `json:"node,omitempty"`
	WarnAfter      *jwt.NumericDate `json:"warnafter,omitempty"`
}

// claims are every claim of a token, bound or legacy.
type claims struct {
	jwt.RegisteredClaims
	Kubernetes *kubernetesClaims `json:"kubernetes.io,omitempty"`

	LegacyName       string `json:"kubernetes.io/serviceaccount/service-account.name,omitempty"`
	LegacyUID        string `json:"kubernetes.io/serviceaccount/service-account.uid,omitempty"`
	LegacySecretName string `json:"kubernetes.io/serviceaccount/secret.name,omitempty"`
	LegacyNamespace  string `json:"kubernetes.io/serviceaccount/namespace,omitempty"`
}

// TokenSpec is what a TokenRequest asks for.
type TokenSpec struct {
	// ServiceAccount is the account the token authenticates as. Required.
	ServiceAccount *corev1.ServiceAccount
	// Audiences; empty means the API audiences.
	Audiences []string
	// Expiration is the token's lifetime. Required.
	Expiration time.Duration
	// At most one of Pod and Secret binds the token to an object; Node may
	// accompany Pod (the pod's node) or stand alone.
	Pod    *corev1.Pod
	Secret *corev1.Secret
	Node   *corev1.Node
}

// TokenIssuer issues bound service account tokens.
type TokenIssuer interface {
	IssueToken(spec TokenSpec) (token string, expires time.Time, err error)
	APIAudiences() []string
}

// IssueToken signs a bound token.
func (t *ServiceAccountTokens) IssueToken(spec TokenSpec) (string, time.Time, error) {
	sa := spec.ServiceAccount
	if sa == nil {
		return "", time.Time{}, errors.New("issue token: no service account")
	}
	auds := spec.Audiences
	if len(auds) == 0 {
		auds = t.cfg.APIAudiences
	}
	now := t.cfg.Clock.Now().Truncate(time.Second)
	exp := now.Add(spec.Expiration)
	k := &kubernetesClaims{Namespace: sa.Namespace, ServiceAccount: ref{Name: sa.Name, UID: string(sa.UID)}}
	if spec.Pod != nil {
		k.Pod = &ref{Name: spec.Pod.Name, UID: string(spec.Pod.UID)}
	}
	if spec.Secret != nil {
		k.Secret = &ref{Name: spec.Secret.Name, UID: string(spec.Secret.UID)}
	}
	if spec.Node != nil {
		k.Node = &ref{Name: spec.Node.Name, UID: string(spec.Node.UID)}
	}
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    t.cfg.Issuer,
			Subject:   ServiceAccountUser(sa.Namespace, sa.Name),
			Audience:  jwt.ClaimStrings(auds),
			ExpiresAt: jwt.NewNumericDate(exp),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ID:        string(uuid.NewUUID()),
		},
		Kubernetes: k,
	}
	s, err := t.sign(c)
	return s, exp, err
}

// IssueLegacyToken signs a long-lived token for sa kept in secret, as
// kube's token controller fills Secrets of type
// kubernetes.io/service-account-token.
func (t *ServiceAccountTokens) IssueLegacyToken(sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error) {
	return t.sign(claims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: LegacyIssuer, Subject: ServiceAccountUser(sa.Namespace, sa.Name)},
		LegacyNamespace:  sa.Namespace, LegacyName: sa.Name, LegacyUID: string(sa.UID), LegacySecretName: secret.Name,
	})
}

func (t *ServiceAccountTokens) sign(c claims) (string, error) {
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = t.keyID
	s, err := tok.SignedString(t.cfg.Key)
	if err != nil {
		return "", fmt.Errorf("sign service account token: %w", err)
	}
	return s, nil
}

// AuthenticateToken implements TokenAuthenticator. A token that is not a
// JWT of this issuer (or the legacy one) is not recognised (ok false, no
// error), so that other authenticators may try it.
func (t *ServiceAccountTokens) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	if strings.Count(token, ".") != 2 {
		return nil, false, nil
	}
	auds, ok := AudiencesFrom(ctx)
	if !ok {
		auds = t.cfg.APIAudiences
	}
	key := cacheKey(token, auds)
	now := t.cfg.Clock.Now()
	t.mu.Lock()
	if c, ok := t.cache[key]; ok && now.Before(c.expires) {
		t.mu.Unlock()
		return c.user.clone(), true, nil
	}
	t.mu.Unlock()

	var unverified claims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &unverified); err != nil {
		return nil, false, nil
	}
	if unverified.Issuer != t.cfg.Issuer && unverified.Issuer != LegacyIssuer {
		return nil, false, nil
	}
	var c claims
	_, err := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}),
		jwt.WithLeeway(tokenLeeway),
		jwt.WithTimeFunc(t.cfg.Clock.Now),
	).ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.cfg.Key.Public(), nil })
	if err != nil {
		return nil, false, fmt.Errorf("service account token: %w", err)
	}
	var u *User
	if c.Issuer == LegacyIssuer {
		u, err = t.validateLegacy(ctx, token, &c)
	} else {
		u, err = t.validateBound(ctx, &c, auds)
	}
	if err != nil {
		return nil, false, err
	}
	expires := now.Add(tokenCacheTTL)
	if c.ExpiresAt != nil && c.ExpiresAt.Before(expires) {
		expires = c.ExpiresAt.Time
	}
	t.mu.Lock()
	if len(t.cache) >= tokenCacheSize {
		clear(t.cache)
	}
	t.cache[key] = cachedUser{user: u.clone(), expires: expires}
	t.mu.Unlock()
	return u, true, nil
}

func cacheKey(token string, auds []string) [32]byte {
	return sha256.Sum256([]byte(token + "\x00" + strings.Join(auds, "\x00")))
}

func (u *User) clone() *User {
	c := &User{Name: u.Name, UID: u.UID, Groups: slices.Clone(u.Groups)}
	if u.Extra != nil {
		c.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			c.Extra[k] = slices.Clone(v)
		}
	}
	return c
}

func (t *ServiceAccountTokens) validateBound(ctx context.Context, c *claims, auds []string) (*User, error) {
	if c.ExpiresAt == nil {
		return nil, errors.New("service account token: no expiration")
	}
	if !intersects(c.Audience, auds) {
		return nil, fmt.Errorf("token audiences %q is invalid for the target audiences %q", []string(c.Audience), auds)
	}
	k := c.Kubernetes
	if k == nil || k.Namespace == "" || k.ServiceAccount.Name == "" {
		return nil, errors.New("service account token: no kubernetes.io claims")
	}
	if ns, name, ok := SplitServiceAccountUser(c.Subject); !ok || ns != k.Namespace || name != k.ServiceAccount.Name {
		return nil, errors.New("service account token: sub does not match the kubernetes.io claims")
	}
	if t.cfg.Getter == nil {
		return nil, errors.New("service account token: no getter to check it against")
	}
	sa, err := t.cfg.Getter.GetServiceAccount(ctx, k.Namespace, k.ServiceAccount.Name)
	if err != nil {
		return nil, err
	}
	if sa.DeletionTimestamp != nil {
		return nil, errors.New("service account has been deleted")
	}
	if string(sa.UID) != k.ServiceAccount.UID {
		return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, k.ServiceAccount.UID)
	}
	u := &User{
		Name: ServiceAccountUser(k.Namespace, k.ServiceAccount.Name), UID: string(sa.UID),
		Groups: withAuthenticated(ServiceAccountGroups(k.Namespace)),
		Extra:  map[string][]string{},
	}
	if c.ID != "" {
		u.Extra[ExtraCredentialID] = []string{"JTI=" + c.ID}
	}
	if k.Secret != nil {
		s, err := t.cfg.Getter.GetSecret(ctx, k.Namespace, k.Secret.Name)
		if err != nil {
			return nil, err
		}
		if s.DeletionTimestamp != nil {
			return nil, errors.New("secret has been deleted")
		}
		if string(s.UID) != k.Secret.UID {
			return nil, fmt.Errorf("secret UID (%s) does not match claim (%s)", s.UID, k.Secret.UID)
		}
	}
	if k.Pod != nil {
		p, err := t.cfg.Getter.GetPod(ctx, k.Namespace, k.Pod.Name)
		if err != nil {
			return nil, err
		}
		if p.DeletionTimestamp != nil {
			return nil, errors.New("pod has been deleted")
		}
		if string(p.UID) != k.Pod.UID {
			return nil, fmt.Errorf("pod UID (%s) does not match claim (%s)", p.UID, k.Pod.UID)
		}
		u.Extra[ExtraPodName] = []string{k.Pod.Name}
		u.Extra[ExtraPodUID] = []string{k.Pod.UID}
	}
	if k.Node != nil {
		if k.Pod == nil {
			// A token bound to the node alone dies with the node.
			n, err := t.cfg.Getter.GetNode(ctx, k.Node.Name)
			if err != nil {
				return nil, err
			}
			if n.DeletionTimestamp != nil {
				return nil, errors.New("node has been deleted")
			}
			if string(n.UID) != k.Node.UID {
				return nil, fmt.Errorf("node UID (%s) does not match claim (%s)", n.UID, k.Node.UID)
			}
		}
		u.Extra[ExtraNodeName] = []string{k.Node.Name}
		if k.Node.UID != "" {
			u.Extra[ExtraNodeUID] = []string{k.Node.UID}
		}
	}
	return u, nil
}

func (t *ServiceAccountTokens) validateLegacy(ctx context.Context, token string, c *claims) (*User, error) {
	if c.LegacyNamespace == "" || c.LegacyName == "" || c.LegacySecretName == "" {
		return nil, errors.New("service account token: missing legacy claims")
	}
	if ns, name, ok := SplitServiceAccountUser(c.Subject); !ok || ns != c.LegacyNamespace || name != c.LegacyName {
		return nil, errors.New("service account token: sub does not match the legacy claims")
	}
	if t.cfg.Getter == nil {
		return nil, errors.New("service account token: no getter to check it against")
	}
	secret, err := t.cfg.Getter.GetSecret(ctx, c.LegacyNamespace, c.LegacySecretName)
	if err != nil || secret.DeletionTimestamp != nil {
		return nil, errors.New("token has been invalidated")
	}
	if !bytes.Equal(secret.Data[corev1.ServiceAccountTokenKey], []byte(token)) {
		return nil, errors.New("token does not match server's copy")
	}
	sa, err := t.cfg.Getter.GetServiceAccount(ctx, c.LegacyNamespace, c.LegacyName)
	if err != nil {
		return nil, err
	}
	if sa.DeletionTimestamp != nil {
		return nil, fmt.Errorf("service account %s/%s has been deleted", c.LegacyNamespace, c.LegacyName)
	}
	if string(sa.UID) != c.LegacyUID {
		return nil, fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, c.LegacyUID)
	}
	return &User{
		Name: ServiceAccountUser(c.LegacyNamespace, c.LegacyName), UID: string(sa.UID),
		Groups: withAuthenticated(ServiceAccountGroups(c.LegacyNamespace)),
	}, nil
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
