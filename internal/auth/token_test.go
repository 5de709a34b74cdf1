package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"minik/internal/auth"
)

func TestParseTokens(t *testing.T) {
	toks, err := auth.ParseTokens(strings.NewReader(`secret-1,alice,u-1,"devs,ops"
secret-2,bob,u-2
,nobody,u-3
`))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a token with groups is its user in those groups", func(t *testing.T) {
		u, ok, err := toks.AuthenticateToken(context.Background(), "secret-1")
		if !ok || err != nil || u.Name != "alice" || u.UID != "u-1" || !reflect.DeepEqual(u.Groups, []string{"devs", "ops"}) {
			t.Fatalf("%+v %v %v", u, ok, err)
		}
	})
	t.Run("a token without groups has none", func(t *testing.T) {
		u, ok, _ := toks.AuthenticateToken(context.Background(), "secret-2")
		if !ok || u.Name != "bob" || len(u.Groups) != 0 {
			t.Fatalf("%+v", u)
		}
	})
	t.Run("an empty token is skipped", func(t *testing.T) {
		if toks.Len() != 2 {
			t.Fatalf("%d tokens", toks.Len())
		}
	})
	t.Run("a line with too few columns is an error", func(t *testing.T) {
		_, err := auth.ParseTokens(strings.NewReader("secret,alice\n"))
		if err == nil || err.Error() != "record 1: must have at least 3 columns (token, user name, user uid), found 2" {
			t.Fatalf("err = %v", err)
		}
	})
}

func bearer(token string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "https://minik/api", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func TestBearerTokenAuthenticator(t *testing.T) {
	toks, _ := auth.ParseTokens(strings.NewReader("secret-1,alice,u-1,devs\n"))
	a := &auth.BearerTokenAuthenticator{Tokens: []auth.TokenAuthenticator{toks}}
	t.Run("a known token authenticates and joins system:authenticated", func(t *testing.T) {
		r := bearer("secret-1")
		u, ok, err := a.Authenticate(r)
		if !ok || err != nil || u.Name != "alice" || !reflect.DeepEqual(u.Groups, []string{"devs", auth.GroupAuthenticated}) {
			t.Fatalf("%+v %v %v", u, ok, err)
		}
		if r.Header.Get("Authorization") != "" {
			t.Fatal("the Authorization header is still there")
		}
	})
	t.Run("an unknown token fails rather than being anonymous", func(t *testing.T) {
		_, ok, err := a.Authenticate(bearer("nope"))
		if ok || !errors.Is(err, auth.ErrInvalidBearerToken) {
			t.Fatalf("ok %v err %v", ok, err)
		}
	})
	t.Run("no bearer token is no credential", func(t *testing.T) {
		r := bearer("")
		r.Header.Set("Authorization", "Basic YTpi")
		if _, ok, err := a.Authenticate(r); ok || err != nil {
			t.Fatalf("ok %v err %v", ok, err)
		}
	})
}

// objects is an ObjectGetter over maps.
type objects struct {
	sas     map[string]*corev1.ServiceAccount
	pods    map[string]*corev1.Pod
	secrets map[string]*corev1.Secret
	nodes   map[string]*corev1.Node
}

func notFound(res, name string) error {
	return apierrors.NewNotFound(corev1.Resource(res), name)
}

func (o *objects) GetServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if sa, ok := o.sas[ns+"/"+name]; ok {
		return sa, nil
	}
	return nil, notFound("serviceaccount", name)
}

func (o *objects) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if p, ok := o.pods[ns+"/"+name]; ok {
		return p, nil
	}
	return nil, notFound("pod", name)
}

func (o *objects) GetSecret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if s, ok := o.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, notFound("secret", name)
}

func (o *objects) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	if n, ok := o.nodes[name]; ok {
		return n, nil
	}
	return nil, notFound("node", name)
}

func meta(ns, name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}
}

func TestServiceAccountTokens(t *testing.T) {
	key, err := auth.LoadOrCreateSigningKey(filepath.Join(t.TempDir(), "pki", "sa.key"))
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	sa := &corev1.ServiceAccount{ObjectMeta: meta("demo", "builder", "sa-uid")}
	pod := &corev1.Pod{ObjectMeta: meta("demo", "web-1", "pod-uid"), Spec: corev1.PodSpec{ServiceAccountName: "builder", NodeName: "n1"}}
	node := &corev1.Node{ObjectMeta: meta("", "n1", "node-uid")}
	secret := &corev1.Secret{ObjectMeta: meta("demo", "builder-token", "secret-uid"), Type: corev1.SecretTypeServiceAccountToken}
	objs := &objects{
		sas:     map[string]*corev1.ServiceAccount{"demo/builder": sa},
		pods:    map[string]*corev1.Pod{"demo/web-1": pod},
		secrets: map[string]*corev1.Secret{"demo/builder-token": secret},
		nodes:   map[string]*corev1.Node{"n1": node},
	}
	tokens, err := auth.NewServiceAccountTokens(auth.ServiceAccountTokensConfig{Key: key, Getter: objs, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	issue := func(t *testing.T, spec auth.TokenSpec) string {
		t.Helper()
		spec.ServiceAccount = sa
		if spec.Expiration == 0 {
			spec.Expiration = time.Hour
		}
		tok, exp, err := tokens.IssueToken(spec)
		if err != nil {
			t.Fatal(err)
		}
		if want := clk.Now().Add(spec.Expiration); !exp.Equal(want) {
			t.Fatalf("expires %v, want %v", exp, want)
		}
		return tok
	}

	t.Run("a bound token carries kube's claims", func(t *testing.T) {
		tok := issue(t, auth.TokenSpec{})
		claims := jwt.MapClaims{}
		parsed, _, err := jwt.NewParser().ParseUnverified(tok, claims)
		if err != nil {
			t.Fatal(err)
		}
		if parsed.Header["alg"] != "ES256" || parsed.Header["kid"] == "" {
			t.Fatalf("header %v", parsed.Header)
		}
		if claims["iss"] != auth.DefaultIssuer || claims["sub"] != "system:serviceaccount:demo:builder" {
			t.Fatalf("claims %v", claims)
		}
		k := claims["kubernetes.io"].(map[string]any)
		if k["namespace"] != "demo" || k["serviceaccount"].(map[string]any)["uid"] != "sa-uid" {
			t.Fatalf("kubernetes.io claims %v", k)
		}
	})
	t.Run("a bound token authenticates as the service account", func(t *testing.T) {
		u, ok, err := tokens.AuthenticateToken(ctx, issue(t, auth.TokenSpec{}))
		if !ok || err != nil {
			t.Fatalf("ok %v err %v", ok, err)
		}
		want := []string{"system:serviceaccounts", "system:serviceaccounts:demo", auth.GroupAuthenticated}
		if u.Name != "system:serviceaccount:demo:builder" || u.UID != "sa-uid" || !reflect.DeepEqual(u.Groups, want) {
			t.Fatalf("user %+v", u)
		}
		if id := u.Extra[auth.ExtraCredentialID]; len(id) != 1 || !strings.HasPrefix(id[0], "JTI=") {
			t.Fatalf("extra %v", u.Extra)
		}
	})
	t.Run("a pod-bound token names the pod and its node", func(t *testing.T) {
		u, ok, err := tokens.AuthenticateToken(ctx, issue(t, auth.TokenSpec{Pod: pod, Node: node}))
		if !ok || err != nil {
			t.Fatalf("ok %v err %v", ok, err)
		}
		if u.Extra[auth.ExtraPodName][0] != "web-1" || u.Extra[auth.ExtraPodUID][0] != "pod-uid" || u.Extra[auth.ExtraNodeName][0] != "n1" {
			t.Fatalf("extra %v", u.Extra)
		}
	})
	t.Run("a token for another audience is refused", func(t *testing.T) {
		_, ok, err := tokens.AuthenticateToken(ctx, issue(t, auth.TokenSpec{Audiences: []string{"vault"}}))
		if ok || err == nil || !strings.Contains(err.Error(), `token audiences ["vault"] is invalid for the target audiences`) {
			t.Fatalf("ok %v err %v", ok, err)
		}
		_, ok, err = tokens.AuthenticateToken(auth.WithAudiences(ctx, []string{"vault"}), issue(t, auth.TokenSpec{Audiences: []string{"vault"}}))
		if !ok || err != nil {
			t.Fatalf("asked for its audience: ok %v err %v", ok, err)
		}
	})
	t.Run("an expired token is refused", func(t *testing.T) {
		tok := issue(t, auth.TokenSpec{Expiration: 10 * time.Minute})
		clk.Step(12 * time.Minute)
		defer clk.Step(-12 * time.Minute)
		if _, ok, err := tokens.AuthenticateToken(ctx, tok); ok || err == nil || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("ok %v err %v", ok, err)
		}
	})
	t.Run("a token whose service account was recreated is refused", func(t *testing.T) {
		tok := issue(t, auth.TokenSpec{})
		objs.sas["demo/builder"] = &corev1.ServiceAccount{ObjectMeta: meta("demo", "builder", "new-uid")}
		defer func() { objs.sas["demo/builder"] = sa }()
		_, ok, err := tokens.AuthenticateToken(ctx, tok)
		if ok || err == nil || err.Error() != "service account UID (new-uid) does not match claim (sa-uid)" {
			t.Fatalf("ok %v err %v", ok, err)
		}
	})
	t.Run("a token bound to a deleted pod is refused once the cache forgets it", func(t *testing.T) {
		tok := issue(t, auth.TokenSpec{Pod: pod})
		if _, ok, err := tokens.AuthenticateToken(ctx, tok); !ok {
			t.Fatalf("before: %v", err)
		}
		delete(objs.pods, "demo/web-1")
		defer func() { objs.pods["demo/web-1"] = pod }()
		if _, ok, _ := tokens.AuthenticateToken(ctx, tok); !ok {
			t.Fatal("a checked token is remembered for ten seconds")
		}
		clk.Step(11 * time.Second)
		if _, ok, err := tokens.AuthenticateToken(ctx, tok); ok || !apierrors.IsNotFound(err) {
			t.Fatalf("ok %v err %v", ok, err)
		}
	})
	t.Run("a legacy token is checked against its secret", func(t *testing.T) {
		tok, err := tokens.IssueLegacyToken(sa, secret)
		if err != nil {
			t.Fatal(err)
		}
		secret.Data = map[string][]byte{corev1.ServiceAccountTokenKey: []byte(tok)}
		u, ok, err := tokens.AuthenticateToken(ctx, tok)
		if !ok || err != nil || u.Name != "system:serviceaccount:demo:builder" {
			t.Fatalf("ok %v err %v user %+v", ok, err, u)
		}
		clk.Step(11 * time.Second)
		secret.Data[corev1.ServiceAccountTokenKey] = []byte("rotated")
		if _, ok, err := tokens.AuthenticateToken(ctx, tok); ok || err == nil || err.Error() != "token does not match server's copy" {
			t.Fatalf("ok %v err %v", ok, err)
		}
	})
	t.Run("a token signed by another key is refused", func(t *testing.T) {
		other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		forger, _ := auth.NewServiceAccountTokens(auth.ServiceAccountTokensConfig{Key: other, Clock: clk})
		tok, _, _ := forger.IssueToken(auth.TokenSpec{ServiceAccount: sa, Expiration: time.Hour})
		if _, ok, err := tokens.AuthenticateToken(ctx, tok); ok || err == nil {
			t.Fatalf("ok %v err %v", ok, err)
		}
	})
	t.Run("a JWT of another issuer is left to other authenticators", func(t *testing.T) {
		other, _ := auth.NewServiceAccountTokens(auth.ServiceAccountTokensConfig{Key: key, Issuer: "https://elsewhere", Clock: clk})
		tok, _, _ := other.IssueToken(auth.TokenSpec{ServiceAccount: sa, Expiration: time.Hour})
		if _, ok, err := tokens.AuthenticateToken(ctx, tok); ok || err != nil {
			t.Fatalf("ok %v err %v", ok, err)
		}
	})
	t.Run("the signing key is kept and reloaded", func(t *testing.T) {
		dir := t.TempDir()
		k1, err := auth.LoadOrCreateSigningKey(filepath.Join(dir, "sa.key"))
		if err != nil {
			t.Fatal(err)
		}
		k2, err := auth.LoadOrCreateSigningKey(filepath.Join(dir, "sa.key"))
		if err != nil || !k1.Equal(k2) {
			t.Fatalf("reloaded a different key (%v)", err)
		}
	})
}
