package auth

import (
	"crypto/sha256"
	"crypto/x509"
	"sync"
	"time"
)

// verifiedCerts remembers client certificate chains that verified, so that
// a client sending many requests pays the chain's signature checks once
// per maxVerifiedAge rather than on every request. An entry holds no
// longer than the chain's earliest NotAfter, so an expiring certificate
// is refused on time; a chain that failed is never remembered.
type verifiedCerts struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]time.Time // chain digest → valid until
}

const (
	// maxVerifiedAge bounds how long a verification is trusted.
	maxVerifiedAge = time.Minute
	// maxVerifiedCerts bounds the cache; a full cache is emptied.
	maxVerifiedCerts = 4096
)

// chainDigest is the digest of the certificates a client presented.
func chainDigest(chain []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	for _, c := range chain {
		h.Write(c.Raw)
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// verified tells whether the chain verified within its entry's life.
func (v *verifiedCerts) verified(d [sha256.Size]byte, now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	until, ok := v.entries[d]
	if ok && now.After(until) {
		delete(v.entries, d)
		return false
	}
	return ok
}

// remember records that the chain verified at now.
func (v *verifiedCerts) remember(d [sha256.Size]byte, chain []*x509.Certificate, now time.Time) {
	until := now.Add(maxVerifiedAge)
	for _, c := range chain {
		if c.NotAfter.Before(until) {
			until = c.NotAfter
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.entries == nil || len(v.entries) >= maxVerifiedCerts {
		v.entries = make(map[[sha256.Size]byte]time.Time)
	}
	v.entries[d] = until
}
