package runtime

import (
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/interp"
)

// Describe tells, in a few lines, what the rules make of a container:
// whether its image pulls, its argv, and what the process does. It is the
// rules' documentation by example (see testdata/rules.golden).
func (r *Rules) Describe(spec ContainerSpec, policy ImagePolicy) string {
	var b strings.Builder
	image := spec.Image
	ref, err := ParseReference(image)
	if err != nil {
		fmt.Fprintf(&b, "pull: InvalidImageName: Failed to apply default image tag %q: %v\n", image, err)
		return b.String()
	}
	img, err := r.Resolve(ref, policy)
	if err != nil {
		fmt.Fprintf(&b, "pull: ErrImagePull: %v\n", err)
		return b.String()
	}
	where := "not in the catalog"
	if img.rule != nil {
		where = "in the catalog"
	}
	fmt.Fprintf(&b, "pull: %s, %d bytes, %s\n", ref, img.Size, where)
	c := &Container{spec: spec}
	c.p = &process{rules: r, image: img.rule, spec: &c.spec}
	argv := c.argv()
	if len(argv) == 0 {
		fmt.Fprintf(&b, "argv: (the image's own, unknown to the rules)\n")
	} else {
		fmt.Fprintf(&b, "argv: %s\n", quoteArgv(argv))
	}
	top, err := c.p.resolveTop(argv)
	if err != nil {
		fmt.Fprintf(&b, "start: StartError: %v\n", err)
		return b.String()
	}
	var steps []string
	for depth := 0; depth < 8; depth++ {
		prog := top
		if depth > 0 || prog == nil {
			if len(argv) == 0 {
				break
			}
			prog = r.program(argv[0])
		}
		switch {
		case prog == nil:
			if _, ok := utilities[baseName(argv[0])]; ok || interp.IsBuiltin(argv[0]) {
				steps = append(steps, fmt.Sprintf("the shell utility %s", argv[0]))
			} else {
				steps = append(steps, fmt.Sprintf("%s: not found (exit 127)", argv[0]))
			}
		case prog.Shell:
			steps = append(steps, "the simulated shell")
		case prog.Builtin == "agnhost":
			steps = append(steps, describeAgnhost(argv))
		case prog.Wrapper:
			steps = append(steps, fmt.Sprintf("%s (entrypoint wrapper)", argv[0]))
			argv = argv[1:]
			continue
		case prog.RequireEnv != nil && !hasAnyEnv(c.spec.Env, prog.RequireEnv.AnyOf):
			steps = append(steps, fmt.Sprintf("%s: exits %d unless one of %v is set", prog.Names[0], prog.RequireEnv.ExitCode, prog.RequireEnv.AnyOf))
		case prog.Serve != nil:
			ps, _ := c.p.servePorts(prog.Serve, argv)
			if len(ps) == 0 {
				steps = append(steps, fmt.Sprintf("%s: runs until stopped, serving nothing", prog.Names[0]))
				break
			}
			var s []string
			for _, p := range ps {
				s = append(s, ":"+strconv.Itoa(int(p)))
			}
			over := ""
			if prog.Serve.TLS {
				over = " over TLS"
			}
			steps = append(steps, fmt.Sprintf("%s: serves %s%s on %s", prog.Names[0], prog.Serve.Style, over, strings.Join(s, ",")))
		case prog.Forever:
			steps = append(steps, fmt.Sprintf("%s: runs until stopped", prog.Names[0]))
		default:
			steps = append(steps, prog.Names[0])
		}
		break
	}
	fmt.Fprintf(&b, "runs: %s\n", strings.Join(steps, " → "))
	return b.String()
}

func hasAnyEnv(env []EnvVar, names []string) bool {
	for _, e := range env {
		for _, n := range names {
			if e.Name == n && e.Value != "" {
				return true
			}
		}
	}
	return false
}

func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'$;") {
			q[i] = strconv.Quote(a)
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}
