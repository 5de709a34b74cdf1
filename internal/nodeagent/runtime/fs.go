package runtime

import (
	"errors"
	"path"
	"sort"
	"strings"
	"sync"
)

// Volume is a directory of files that can be mounted into containers: an
// emptyDir shared by a pod's containers, or the files of a ConfigMap or
// Secret. It is safe for concurrent use.
type Volume struct {
	mu       sync.RWMutex
	files    map[string][]byte
	readOnly bool
}

// NewVolume returns a volume holding files (relative path → content).
// A read-only volume refuses writes as a configMap volume does.
func NewVolume(files map[string][]byte, readOnly bool) *Volume {
	v := &Volume{files: map[string][]byte{}, readOnly: readOnly}
	for p, data := range files {
		v.files[clean(p)] = append([]byte(nil), data...)
	}
	return v
}

// Mount mounts a volume at a path of a container's file system; SubPath,
// when set, mounts one entry of the volume.
type Mount struct {
	Path     string
	Volume   *Volume
	SubPath  string
	ReadOnly bool
}

// fs is a container's file system: its own files plus its mounts.
type fs struct {
	root   *Volume
	mounts []Mount // longest path first
}

func newFS(mounts []Mount, files map[string][]byte) *fs {
	f := &fs{root: NewVolume(files, false)}
	for _, m := range mounts {
		m.Path = clean(m.Path)
		f.mounts = append(f.mounts, m)
	}
	sort.SliceStable(f.mounts, func(i, j int) bool { return len(f.mounts[i].Path) > len(f.mounts[j].Path) })
	return f
}

var (
	errNotExist = errors.New("No such file or directory")
	errReadOnly = errors.New("Read-only file system")
	errIsDir    = errors.New("Is a directory")
)

func clean(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// resolve finds the volume and relative path of an absolute path.
func (f *fs) resolve(p string) (*Volume, string, bool) {
	p = clean(p)
	for _, m := range f.mounts {
		if p == m.Path || strings.HasPrefix(p, m.Path+"/") || m.Path == "" {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, m.Path), "/")
			if m.SubPath != "" {
				rel = clean(path.Join(m.SubPath, rel))
			}
			return m.Volume, rel, m.ReadOnly || m.Volume.readOnly
		}
	}
	return f.root, p, false
}

func (f *fs) read(p string) ([]byte, error) {
	v, rel, _ := f.resolve(p)
	v.mu.RLock()
	defer v.mu.RUnlock()
	if data, ok := v.files[rel]; ok {
		return data, nil
	}
	if v.isDirLocked(rel) {
		return nil, errIsDir
	}
	return nil, errNotExist
}

func (f *fs) write(p string, data []byte, appendTo bool) error {
	v, rel, ro := f.resolve(p)
	if ro {
		return errReadOnly
	}
	if rel == "" {
		return errIsDir
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if appendTo {
		v.files[rel] = append(append([]byte(nil), v.files[rel]...), data...)
	} else {
		v.files[rel] = append([]byte(nil), data...)
	}
	return nil
}

func (f *fs) remove(p string) error {
	v, rel, ro := f.resolve(p)
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.files[rel]
	if !ok && !v.isDirLocked(rel) {
		return errNotExist
	}
	if ro {
		return errReadOnly
	}
	delete(v.files, rel)
	for k := range v.files {
		if strings.HasPrefix(k, rel+"/") {
			delete(v.files, k)
		}
	}
	return nil
}

// exists tells whether p is a file (isDir false) or a directory.
func (f *fs) stat(p string) (exists, isDir bool) {
	if clean(p) == "" {
		return true, true
	}
	for _, m := range f.mounts {
		if clean(p) == m.Path {
			return true, true
		}
	}
	v, rel, _ := f.resolve(p)
	v.mu.RLock()
	defer v.mu.RUnlock()
	if _, ok := v.files[rel]; ok {
		return true, false
	}
	if v.isDirLocked(rel) {
		return true, true
	}
	return false, false
}

func (f *fs) list(p string) ([]string, error) {
	v, rel, _ := f.resolve(p)
	v.mu.RLock()
	defer v.mu.RUnlock()
	if _, ok := v.files[rel]; ok {
		return []string{path.Base(rel)}, nil
	}
	seen := map[string]bool{}
	prefix := rel + "/"
	if rel == "" {
		prefix = ""
	}
	for k := range v.files {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			first, _, _ := strings.Cut(rest, "/")
			seen[first] = true
		}
	}
	for _, m := range f.mounts {
		if rest, ok := strings.CutPrefix(m.Path, clean(p)+"/"); ok || clean(p) == "" && m.Path != "" {
			if !ok {
				rest = m.Path
			}
			first, _, _ := strings.Cut(rest, "/")
			seen[first] = true
		}
	}
	if len(seen) == 0 && !v.isDirLocked(rel) {
		if exists, _ := f.stat(p); !exists {
			return nil, errNotExist
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// isDirLocked tells whether rel is a directory of v (some file is under
// it, or it was made with mkdir).
func (v *Volume) isDirLocked(rel string) bool {
	if rel == "" {
		return true
	}
	for k := range v.files {
		if strings.HasPrefix(k, rel+"/") {
			return true
		}
	}
	return false
}
