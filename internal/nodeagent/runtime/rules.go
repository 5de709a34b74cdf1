package runtime

import (
	_ "embed"
	"fmt"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

//go:embed rules.yaml
var defaultRules []byte

// Rules are the simulation's data: which images exist and what the
// programs they run do. rules.yaml documents every field.
type Rules struct {
	Images   []ImageRule   `json:"images"`
	Programs []ProgramRule `json:"programs"`

	repos    map[string]*ImageRule
	programs map[string]*ProgramRule
}

// ImageRule describes one repository of the registry catalog.
type ImageRule struct {
	Repository string   `json:"repository"`
	Tags       []string `json:"tags"`
	Size       int64    `json:"size"`
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	Shell      bool     `json:"shell,omitempty"`
	// Ports, when set, replace the default ports of the image's server.
	Ports []int32 `json:"ports,omitempty"`
	// Files are files of the image (path → content); a path ending in
	// "/" is an empty directory.
	Files map[string]string `json:"files,omitempty"`

	tags []*regexp.Regexp
}

// ProgramRule describes what an executable does.
type ProgramRule struct {
	Names   []string   `json:"names"`
	Wrapper bool       `json:"wrapper,omitempty"`
	Shell   bool       `json:"shell,omitempty"`
	Serve   *ServeRule `json:"serve,omitempty"`
	Forever bool       `json:"forever,omitempty"`
	// Builtin names a program implemented in Go (agnhost.go): its
	// subcommands and flags decide what it does.
	Builtin    string      `json:"builtin,omitempty"`
	RequireEnv *RequireEnv `json:"requireEnv,omitempty"`
	Stdout     []string    `json:"stdout,omitempty"`
	Stderr     []string    `json:"stderr,omitempty"`
	// TermExit is the exit code on SIGTERM; nil means SIGTERM is ignored.
	TermExit *int `json:"termExit,omitempty"`
}

// ServeRule is a program's server.
type ServeRule struct {
	Style      string  `json:"style"`
	Ports      []int32 `json:"ports"`
	PortFlag   string  `json:"portFlag,omitempty"`
	ListenFlag string  `json:"listenFlag,omitempty"`
	TextFlag   string  `json:"textFlag,omitempty"`
	// TLS serves every port over TLS; TLSPorts serves those ports over
	// TLS. CertFlag and KeyFlag name the flags of a certificate and key
	// file (PEM, from the container's files: a mounted Secret); given,
	// every port serves TLS with them, else with a self-signed one.
	TLS      bool    `json:"tls,omitempty"`
	TLSPorts []int32 `json:"tlsPorts,omitempty"`
	CertFlag string  `json:"certFlag,omitempty"`
	KeyFlag  string  `json:"keyFlag,omitempty"`
}

// RequireEnv makes a program exit unless one of the variables is set.
type RequireEnv struct {
	AnyOf    []string `json:"anyOf"`
	ExitCode int      `json:"exitCode"`
	Stderr   []string `json:"stderr,omitempty"`
}

// serveStyles are the server styles implemented in serve.go.
var serveStyles = map[string]bool{"nginx": true, "httpd": true, "echo": true, "whoami": true, "hello": true, "generic": true, "tcp": true}

// builtins are the programs implemented in Go.
var builtins = map[string]bool{"agnhost": true}

// DefaultRules returns the embedded rules (rules.yaml).
func DefaultRules() *Rules {
	r, err := ParseRules(defaultRules)
	if err != nil {
		panic(fmt.Sprintf("embedded rules.yaml: %v", err))
	}
	return r
}

// ParseRules reads and checks rules in rules.yaml's format.
func ParseRules(data []byte) (*Rules, error) {
	r := &Rules{}
	if err := yaml.UnmarshalStrict(data, r); err != nil {
		return nil, fmt.Errorf("parse rules: %w", err)
	}
	r.repos = map[string]*ImageRule{}
	for i := range r.Images {
		im := &r.Images[i]
		if im.Repository == "" {
			return nil, fmt.Errorf("rules: image %d has no repository", i)
		}
		if _, dup := r.repos[im.Repository]; dup {
			return nil, fmt.Errorf("rules: image %s listed twice", im.Repository)
		}
		for _, t := range im.Tags {
			re, err := regexp.Compile("^(?:" + t + ")$")
			if err != nil {
				return nil, fmt.Errorf("rules: image %s: tag pattern %q: %w", im.Repository, t, err)
			}
			im.tags = append(im.tags, re)
		}
		r.repos[im.Repository] = im
	}
	r.programs = map[string]*ProgramRule{}
	for i := range r.Programs {
		p := &r.Programs[i]
		if len(p.Names) == 0 {
			return nil, fmt.Errorf("rules: program %d has no names", i)
		}
		if p.Builtin != "" && !builtins[p.Builtin] {
			return nil, fmt.Errorf("rules: program %s: unknown builtin %q", p.Names[0], p.Builtin)
		}
		if p.Serve != nil && !serveStyles[p.Serve.Style] {
			return nil, fmt.Errorf("rules: program %s: unknown serve style %q", p.Names[0], p.Serve.Style)
		}
		for _, n := range p.Names {
			if _, dup := r.programs[n]; dup {
				return nil, fmt.Errorf("rules: program name %s listed twice", n)
			}
			r.programs[n] = p
		}
	}
	return r, nil
}

// image returns the catalog entry of a normalized repository, or nil.
func (r *Rules) image(repo string) *ImageRule { return r.repos[repo] }

// program returns the rule of an executable, by its name or base name.
func (r *Rules) program(exe string) *ProgramRule {
	if p, ok := r.programs[exe]; ok {
		return p
	}
	if strings.Contains(exe, "/") {
		return r.programs[path.Base(exe)]
	}
	return nil
}

// hasTag tells whether a tag exists in the catalog entry.
func (im *ImageRule) hasTag(tag string) bool {
	for _, re := range im.tags {
		if re.MatchString(tag) {
			return true
		}
	}
	return false
}
