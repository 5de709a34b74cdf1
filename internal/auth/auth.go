// Package auth holds the first two stages of the API server's handler
// chain: authentication (who is asking) and authorization (may they do
// what they ask).
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/fields"
)

// GroupMasters is the group whose members may do anything (kube's
// system:masters).
const GroupMasters = "system:masters"

// The identities and groups kube gives every request.
const (
	// GroupAuthenticated holds every authenticated user.
	GroupAuthenticated = "system:authenticated"
	// GroupUnauthenticated holds the anonymous user.
	GroupUnauthenticated = "system:unauthenticated"
	// UserAnonymous is who an anonymous request is, where one is allowed.
	UserAnonymous = "system:anonymous"
	// UserAPIServer is the API server's own loopback identity (in
	// system:masters), used by its informers and post-start work.
	UserAPIServer = "system:apiserver"
)

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
	// Extra holds further facts an authenticator knows (for a service
	// account token: the pod it is bound to, its credential id).
	Extra map[string][]string
}

// Anonymous returns the user of an anonymous request.
func Anonymous() *User {
	return &User{Name: UserAnonymous, Groups: []string{GroupUnauthenticated}}
}

// withAuthenticated returns groups with system:authenticated appended when
// missing, as kube's authenticated-group adder does.
func withAuthenticated(groups []string) []string {
	if slices.Contains(groups, GroupAuthenticated) {
		return groups
	}
	return append(slices.Clone(groups), GroupAuthenticated)
}

type userKey struct{}

// WithUser returns a context carrying u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user a context carries, or nil.
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}

// Authenticator tells who sent a request. ok is false when the request
// carries no credential it recognises.
type Authenticator interface {
	Authenticate(r *http.Request) (u *User, ok bool, err error)
}

// ClientCertAuthenticator authenticates requests by their TLS client
// certificate, as kube's x509 authenticator: CN is the user name, O the
// groups. With Roots, the certificate is verified here (for client
// authentication, against Roots, at the current time): the TLS handshake
// only requests it, so that a certificate that is expired or from another
// CA gets 401 Unauthorized rather than a TLS alert. Without Roots, only a
// certificate the handshake verified counts. A verified chain is
// remembered for up to a minute (never past its expiry), so that a
// client's later requests skip the signature checks.
type ClientCertAuthenticator struct {
	Roots *x509.CertPool
	// verified remembers chains that verified against Roots; nil
	// remembers nothing.
	verified *verifiedCerts
}

// NewClientCertAuthenticator returns the authenticator of client
// certificates signed by roots, remembering verified chains.
func NewClientCertAuthenticator(roots *x509.CertPool) ClientCertAuthenticator {
	return ClientCertAuthenticator{Roots: roots, verified: &verifiedCerts{}}
}

// Authenticate implements Authenticator.
func (a ClientCertAuthenticator) Authenticate(r *http.Request) (*User, bool, error) {
	if r.TLS == nil {
		return nil, false, nil
	}
	var cert *x509.Certificate
	switch {
	case a.Roots != nil && len(r.TLS.PeerCertificates) > 0:
		chain := r.TLS.PeerCertificates
		cert = chain[0]
		now := time.Now()
		var digest [sha256.Size]byte
		if a.verified != nil {
			if digest = chainDigest(chain); a.verified.verified(digest, now) {
				break
			}
		}
		opts := x509.VerifyOptions{Roots: a.Roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: now}
		for _, c := range chain[1:] {
			opts.Intermediates.AddCert(c)
		}
		if _, err := cert.Verify(opts); err != nil {
			return nil, false, fmt.Errorf("verify client certificate %q: %w", cert.Subject.CommonName, err)
		}
		if a.verified != nil {
			a.verified.remember(digest, chain, now)
		}
	case a.Roots == nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0:
		cert = r.TLS.VerifiedChains[0][0]
	default:
		return nil, false, nil
	}
	if cert.Subject.CommonName == "" {
		return nil, false, fmt.Errorf("client certificate has no common name")
	}
	return &User{Name: cert.Subject.CommonName, Groups: withAuthenticated(cert.Subject.Organization)}, true, nil
}

// Attributes describe the action to authorize.
type Attributes struct {
	User        *User
	Verb        string
	IsResource  bool
	APIGroup    string
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	Path        string
	// FieldSelector is the field selector of a list, watch or
	// deletecollection, as the client sent it.
	FieldSelector string
}

// FieldRequirements parses the field selector, as kube's authorizer
// attributes give it (GetFieldSelector).
func (a Attributes) FieldRequirements() (fields.Requirements, error) {
	if a.FieldSelector == "" {
		return nil, nil
	}
	sel, err := fields.ParseSelector(a.FieldSelector)
	if err != nil {
		return nil, fmt.Errorf("field selector %q: %w", a.FieldSelector, err)
	}
	return sel.Requirements(), nil
}

// Decision is an authorizer's verdict.
type Decision int

// The verdicts.
const (
	// NoOpinion: the authorizer neither allows nor denies; the request is
	// denied when no authorizer allows it.
	NoOpinion Decision = iota
	Allow
	Deny
)

// Authorizer decides whether a user may perform an action. reason
// explains a denial.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
}

// MastersAuthorizer allows everything to members of system:masters and has
// no opinion on anyone else.
type MastersAuthorizer struct{}

// Authorize implements Authorizer.
func (MastersAuthorizer) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.User != nil && slices.Contains(a.User.Groups, GroupMasters) {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
}

// ForbiddenMessage is kube's wording of a denied request, without the
// leading "<resource> is forbidden: ".
func ForbiddenMessage(a Attributes) string {
	name := "<anonymous>"
	if a.User != nil {
		name = a.User.Name
	}
	if !a.IsResource {
		return fmt.Sprintf("User %q cannot %s path %q", name, a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	msg := fmt.Sprintf("User %q cannot %s resource %q in API group %q", name, a.Verb, res, a.APIGroup)
	if a.Namespace != "" {
		msg += fmt.Sprintf(" in the namespace %q", a.Namespace)
	} else {
		msg += " at the cluster scope"
	}
	return msg
}

// Component identities.
const (
	UserControllerManager = "system:kube-controller-manager"
	UserScheduler         = "system:kube-scheduler"
	GroupNodes            = "system:nodes"
	// NodeUserPrefix starts the user name of a node: system:node:<name>.
	NodeUserPrefix = "system:node:"
)

// NodeName returns the node a user is (system:node:<name> in
// system:nodes), as kube's node identifier does.
func NodeName(u *User) (string, bool) {
	if u == nil || !strings.HasPrefix(u.Name, NodeUserPrefix) || !slices.Contains(u.Groups, GroupNodes) {
		return "", false
	}
	return strings.TrimPrefix(u.Name, NodeUserPrefix), true
}
