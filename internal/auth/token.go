package auth

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// TokenAuthenticator tells who a bearer token belongs to. ok is false when
// it does not know the token; err explains a token it recognises but
// rejects (expired, revoked, wrong audience).
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (u *User, ok bool, err error)
}

// ErrInvalidBearerToken is the error of a bearer token no authenticator
// accepted.
var ErrInvalidBearerToken = errors.New("invalid bearer token")

type audiencesKey struct{}

// WithAudiences returns a context asking token authenticators for tokens
// meant for one of auds (TokenReview's spec.audiences); without it they
// use the API server's own audiences.
func WithAudiences(ctx context.Context, auds []string) context.Context {
	return context.WithValue(ctx, audiencesKey{}, auds)
}

// AudiencesFrom returns the audiences a context asks for, if any.
func AudiencesFrom(ctx context.Context) ([]string, bool) {
	auds, ok := ctx.Value(audiencesKey{}).([]string)
	return auds, ok
}

// BearerTokenAuthenticator authenticates the "Authorization: Bearer"
// header with the token authenticators, in order. A request with a bearer
// token that none accepts fails (401), as kube's does, rather than being
// treated as anonymous. The header is removed once authenticated.
type BearerTokenAuthenticator struct {
	Tokens []TokenAuthenticator
}

// Authenticate implements Authenticator.
func (b *BearerTokenAuthenticator) Authenticate(r *http.Request) (*User, bool, error) {
	token, ok := bearerToken(r)
	if !ok {
		return nil, false, nil
	}
	u, ok, err := b.AuthenticateToken(r.Context(), token)
	if !ok {
		if err == nil {
			err = ErrInvalidBearerToken
		}
		return nil, false, err
	}
	r.Header.Del("Authorization")
	return u, true, nil
}

// AuthenticateToken implements TokenAuthenticator over every token
// authenticator.
func (b *BearerTokenAuthenticator) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	var errs []error
	for _, t := range b.Tokens {
		u, ok, err := t.AuthenticateToken(ctx, token)
		if ok {
			u.Groups = withAuthenticated(u.Groups)
			return u, true, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, false, fmt.Errorf("%w: %w", ErrInvalidBearerToken, errors.Join(errs...))
	}
	return nil, false, nil
}

func bearerToken(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	// A token with spaces in it is not a bearer token (kube ignores it).
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// StaticTokens authenticates the tokens of a --token-auth-file: a CSV file
// of token,user,uid[,"group1,group2"] lines, kube's format.
type StaticTokens struct {
	users map[string]*User
}

// LoadTokenFile reads a token file in kube's CSV format.
func LoadTokenFile(path string) (*StaticTokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--token-auth-file: %w", err)
	}
	defer f.Close()
	t, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("--token-auth-file %s: %w", path, err)
	}
	return t, nil
}

// ParseTokens reads tokens in kube's CSV format. Lines with an empty token
// are skipped; a token listed twice keeps its last line.
func ParseTokens(r io.Reader) (*StaticTokens, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	t := &StaticTokens{users: map[string]*User{}}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("record %d: must have at least 3 columns (token, user name, user uid), found %d", line, len(rec))
		}
		if rec[0] == "" {
			continue
		}
		u := &User{Name: rec[1], UID: rec[2]}
		if len(rec) >= 4 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		t.users[rec[0]] = u
	}
}

// AuthenticateToken implements TokenAuthenticator.
func (t *StaticTokens) AuthenticateToken(_ context.Context, token string) (*User, bool, error) {
	u, ok := t.users[token]
	if !ok {
		return nil, false, nil
	}
	return &User{Name: u.Name, UID: u.UID, Groups: slices.Clone(u.Groups)}, true, nil
}

// Len is the number of tokens.
func (t *StaticTokens) Len() int { return len(t.users) }
