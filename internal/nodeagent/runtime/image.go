package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Reference is a parsed, normalized image reference, as containerd
// reports it: "nginx:1.27" is docker.io/library/nginx:1.27.
type Reference struct {
	// Repository is the normalized repository (docker.io/library/nginx).
	Repository string
	// Tag is the tag, "latest" when neither tag nor digest is given.
	Tag string
	// Digest is the digest (sha256:...), if any.
	Digest string
}

// String is the normalized reference: repository:tag, or
// repository@digest when there is a digest.
func (r Reference) String() string {
	if r.Digest != "" {
		if r.Tag != "" {
			return r.Repository + ":" + r.Tag + "@" + r.Digest
		}
		return r.Repository + "@" + r.Digest
	}
	return r.Repository + ":" + r.Tag
}

// ID is the image ID the runtime reports (repository@sha256:...),
// derived deterministically from the reference.
func (r Reference) ID() string {
	if r.Digest != "" {
		return r.Repository + "@" + r.Digest
	}
	sum := sha256.Sum256([]byte(r.Repository + ":" + r.Tag))
	return r.Repository + "@sha256:" + hex.EncodeToString(sum[:])
}

var (
	pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	domainPattern = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?$`)
	tagPattern    = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	digestPattern = regexp.MustCompile(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,}$`)
)

// ParseReference parses an image reference as the kubelet and containerd
// do, normalizing Docker Hub names. Its errors read as kube's
// InvalidImageName messages: `couldn't parse image name "X": invalid
// reference format`.
func ParseReference(image string) (Reference, error) {
	bad := func(detail string) (Reference, error) {
		msg := fmt.Sprintf("couldn't parse image name %q: invalid reference format", image)
		if detail != "" {
			msg += ": " + detail
		}
		return Reference{}, fmt.Errorf("%s", msg)
	}
	if image == "" || strings.TrimSpace(image) != image {
		return bad("")
	}
	name, digest, hasDigest := strings.Cut(image, "@")
	if hasDigest && !digestPattern.MatchString(digest) {
		return bad("")
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
		if !tagPattern.MatchString(tag) {
			return bad("")
		}
	}
	domain, rest := "", name
	if i := strings.Index(name, "/"); i >= 0 {
		first := name[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first {
			domain, rest = first, name[i+1:]
			if !domainPattern.MatchString(domain) {
				return bad("")
			}
		}
	}
	if rest == "" {
		return bad("")
	}
	for _, c := range strings.Split(rest, "/") {
		if !pathComponent.MatchString(c) {
			if strings.ToLower(c) != c {
				return bad("repository name must be lowercase")
			}
			return bad("")
		}
	}
	switch domain {
	case "", "index.docker.io", "registry-1.docker.io":
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	ref := Reference{Repository: domain + "/" + rest, Tag: tag, Digest: digest}
	if ref.Tag == "" && ref.Digest == "" {
		ref.Tag = "latest"
	}
	return ref, nil
}

// PullError is a failed pull, worded as the CRI's gRPC error the kubelet
// shows: "rpc error: code = NotFound desc = failed to pull and unpack
// image ...".
type PullError struct {
	Code string
	Desc string
}

// Error implements error.
func (e *PullError) Error() string {
	return fmt.Sprintf("rpc error: code = %s desc = %s", e.Code, e.Desc)
}

// ImagePolicy decides how references outside the catalog pull.
type ImagePolicy string

// The image policies.
const (
	// PolicyCatalog: repositories in the catalog pull only their known
	// tags; other repositories pull fine. The default.
	PolicyCatalog ImagePolicy = "catalog"
	// PolicyStrict: only the catalog's repositories and tags pull.
	PolicyStrict ImagePolicy = "strict"
)

// ParseImagePolicy reads an --image-policy value; "" is the default.
func ParseImagePolicy(s string) (ImagePolicy, error) {
	switch ImagePolicy(s) {
	case "", PolicyCatalog:
		return PolicyCatalog, nil
	case PolicyStrict:
		return PolicyStrict, nil
	}
	return "", fmt.Errorf("unknown image policy %q: want %q or %q", s, PolicyCatalog, PolicyStrict)
}

// defaultImageSize is the size reported for images outside the catalog.
const defaultImageSize = 25 << 20

// Image is a pullable image: its normalized reference, ID, size and
// catalog entry (nil when it is not in the catalog).
type Image struct {
	Ref  Reference
	Size int64
	rule *ImageRule
}

// Resolve tells whether a reference pulls under the policy, as the
// registry would answer: the image, or the pull's error.
func (r *Rules) Resolve(ref Reference, policy ImagePolicy) (Image, error) {
	rule := r.image(ref.Repository)
	if rule == nil {
		if policy == PolicyStrict {
			return Image{}, notFound(ref, false)
		}
		return Image{Ref: ref, Size: defaultImageSize}, nil
	}
	if ref.Tag != "" && !rule.hasTag(ref.Tag) && ref.Digest == "" {
		return Image{}, notFound(ref, true)
	}
	return Image{Ref: ref, Size: rule.Size, rule: rule}, nil
}

// notFound is the registry's answer for a reference that does not exist:
// Docker Hub denies access to unknown repositories, other registries and
// unknown tags answer not found.
func notFound(ref Reference, knownRepo bool) error {
	s := ref.String()
	if !knownRepo && strings.HasPrefix(ref.Repository, "docker.io/") {
		return &PullError{Code: "Unknown", Desc: fmt.Sprintf(
			"failed to pull and unpack image %q: failed to resolve reference %q: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed", s, s)}
	}
	return &PullError{Code: "NotFound", Desc: fmt.Sprintf(
		"failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", s, s, s)}
}
