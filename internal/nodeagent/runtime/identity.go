package runtime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A process's identity: the uid, gid and groups the container's security
// context gives it (ContainerSpec.User), as id, whoami, the shell's $UID
// and file ownership report them. Permissions are not enforced: a
// non-root process may still write where root could.

// ids returns the process's uid, gid and supplementary groups (sorted,
// with its gid, as the runtime passes them); root without a User.
func (p *process) ids() (uid, gid int64, groups []int64) {
	u := p.spec.User
	if u == nil {
		return 0, 0, []int64{0}
	}
	groups = append([]int64{u.GID}, u.Groups...)
	if u.FSGroup != nil {
		groups = append(groups, *u.FSGroup)
	}
	slices.Sort(groups)
	return u.UID, u.GID, slices.Compact(groups)
}

// idName is an id as busybox's id prints it: root is named, other ids
// (absent from the image's /etc/passwd) are bare numbers.
func idName(id int64) string {
	if id == 0 {
		return "0(root)"
	}
	return strconv.FormatInt(id, 10)
}

// owner is the owning uid and gid of a file: a volume's files belong to
// root and the pod's fsGroup, the container's own to root.
func (p *process) owner(path string) (uid, gid int64) {
	if u := p.spec.User; u != nil && u.FSGroup != nil {
		if v, _, _ := p.fs.resolve(path); v != p.fs.root {
			return 0, *u.FSGroup
		}
	}
	return 0, 0
}

// uID is id: the identity, or one part of it (-u, -g, -G; -n names).
func uID(c *call, argv []string) (int, error) {
	uid, gid, groups := c.p.ids()
	var only byte
	names := false
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			if a != "root" && a != strconv.FormatInt(uid, 10) {
				fmt.Fprintf(c.stderr, "id: unknown user %s\n", a)
				return 1, nil
			}
			continue
		}
		for _, f := range a[1:] {
			switch f {
			case 'u', 'g', 'G':
				only = byte(f)
			case 'n':
				names = true
			case 'r':
			default:
				fmt.Fprintf(c.stderr, "id: unrecognized option: %c\n", f)
				return 1, nil
			}
		}
	}
	name := func(id int64) string {
		if names && id == 0 {
			return "root"
		}
		return strconv.FormatInt(id, 10)
	}
	switch only {
	case 'u':
		fmt.Fprintln(c.stdout, name(uid))
	case 'g':
		fmt.Fprintln(c.stdout, name(gid))
	case 'G':
		s := make([]string, len(groups))
		for i, g := range groups {
			s[i] = name(g)
		}
		fmt.Fprintln(c.stdout, strings.Join(s, " "))
	default:
		s := make([]string, len(groups))
		for i, g := range groups {
			s[i] = idName(g)
		}
		fmt.Fprintf(c.stdout, "uid=%s gid=%s groups=%s\n", idName(uid), idName(gid), strings.Join(s, ","))
	}
	return 0, nil
}

// uWhoami prints the user's name: root, or busybox's answer for a uid
// the image's /etc/passwd does not name.
func uWhoami(c *call, _ []string) (int, error) {
	uid, _, _ := c.p.ids()
	if uid != 0 {
		fmt.Fprintf(c.stderr, "whoami: unknown uid %d\n", uid)
		return 1, nil
	}
	fmt.Fprintln(c.stdout, "root")
	return 0, nil
}

// idVars are the shell's UID, EUID and GID.
func (p *process) idVars() []string {
	uid, gid, _ := p.ids()
	u, g := strconv.FormatInt(uid, 10), strconv.FormatInt(gid, 10)
	return []string{"UID=" + u, "EUID=" + u, "GID=" + g}
}
