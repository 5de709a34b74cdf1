package runtime

import (
	"errors"
	iofs "io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Volume is a directory of files that can be mounted into containers: an
// emptyDir shared by a pod's containers, or the files of a ConfigMap or
// Secret. It is safe for concurrent use.
type Volume struct {
	mu       sync.RWMutex
	files    map[string][]byte
	size     int64 // bytes held, bounded by maxVolumeBytes
	readOnly bool
	// modes are files' permission bits (relative path → mode); a file
	// not named has 0644.
	modes map[string]iofs.FileMode
	// defaultMode is the mode of a file SetModes did not name (0 means
	// 0644).
	defaultMode iofs.FileMode
	// rootMode is the mode of the volume's root directory (0 means
	// 0755); fsType the type statfs reports ("" is the node's disk).
	rootMode iofs.FileMode
	fsType   string
}

// Refresh replaces the volume's files with those of from, as the
// kubelet's atomic writer swaps a configMap volume's content; the modes
// set stay.
func (v *Volume) Refresh(from *Volume) {
	from.mu.RLock()
	files := make(map[string][]byte, len(from.files))
	for p, data := range from.files {
		files[p] = data
	}
	size := from.size
	from.mu.RUnlock()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.files, v.size = files, size
}

// SetModes records the permission bits of files (relative path → mode),
// as a volume's defaultMode and its items' modes set them.
func (v *Volume) SetModes(modes map[string]iofs.FileMode) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.modes == nil {
		v.modes = map[string]iofs.FileMode{}
	}
	for p, m := range modes {
		v.modes[clean(p)] = m.Perm()
	}
}

// SetDefaultMode sets the permission bits of the files SetModes does not
// name (a volume's defaultMode).
func (v *Volume) SetDefaultMode(mode iofs.FileMode) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.defaultMode = mode.Perm()
}

// SetRoot sets the mode of the volume's root directory (with
// iofs.ModeDir, and iofs.ModeSticky for a tmpfs emptyDir) and the type of
// its file system as statfs names it ("tmpfs"; "" for the node's disk).
func (v *Volume) SetRoot(mode iofs.FileMode, fsType string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rootMode, v.fsType = mode, fsType
}

// maxVolumeBytes bounds what a container's own files or one volume hold,
// so that no script (yes > /tmp/f) exhausts the node's memory.
const maxVolumeBytes = 256 << 20

// maxFiles bounds the number of files of a volume.
const maxFiles = 100_000

// NewVolume returns a volume holding files (relative path → content).
// A read-only volume refuses writes as a configMap volume does.
func NewVolume(files map[string][]byte, readOnly bool) *Volume {
	v := &Volume{files: map[string][]byte{}, readOnly: readOnly}
	for p, data := range files {
		v.files[clean(p)] = append([]byte(nil), data...)
		v.size += int64(len(data))
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
	errNoSpace  = errors.New("No space left on device")
	errNotDir   = errors.New("Not a directory")
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
	return f.root, p, f.root.readOnly
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
	if v.isDirLocked(rel) {
		return errIsDir
	}
	old, exists := v.files[rel]
	grow := int64(len(data))
	if !appendTo {
		grow -= int64(len(old))
	}
	if v.size+grow > maxVolumeBytes || !exists && len(v.files) >= maxFiles {
		return errNoSpace
	}
	v.size += grow
	if appendTo {
		// Appending in place keeps a stream of small writes linear.
		v.files[rel] = append(old, data...)
	} else {
		v.files[rel] = append([]byte(nil), data...)
	}
	return nil
}

// mkdir makes a directory (and its parents), kept by a marker entry.
func (f *fs) mkdir(p string) error {
	if fi, err := f.statInfo(p); err == nil {
		if !fi.IsDir() {
			return errNotDir
		}
		return nil
	}
	return f.write(strings.TrimSuffix(clean(p), "/")+"/"+dirMarker, nil, false)
}

// readOnly tells whether p is on a read-only mount.
func (f *fs) readOnly(p string) bool {
	_, _, ro := f.resolve(p)
	return ro
}

// fileInfo describes a file or directory of a container's file system.
type fileInfo struct {
	name  string
	size  int64
	dir   bool
	mode  iofs.FileMode // 0: 0644 for a file, 0755 for a directory
	mtime time.Time
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() iofs.FileMode {
	if i.mode != 0 {
		return i.mode
	}
	if i.dir {
		return iofs.ModeDir | 0o755
	}
	return 0o644
}
func (i fileInfo) ModTime() time.Time { return i.mtime }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }

// statInfo describes p, or fails with errNotExist.
func (f *fs) statInfo(p string) (iofs.FileInfo, error) {
	exists, dir := f.stat(p)
	if !exists {
		return nil, errNotExist
	}
	name := path.Base("/" + clean(p))
	v, rel, _ := f.resolve(p)
	v.mu.RLock()
	mode, hasMode := v.modes[rel]
	if !hasMode && v.defaultMode != 0 {
		mode, hasMode = v.defaultMode, true
	}
	rootMode := v.rootMode
	v.mu.RUnlock()
	if dir {
		fi := fileInfo{name: name, dir: true}
		if rel == "" && rootMode != 0 {
			fi.mode = rootMode
		}
		return fi, nil
	}
	data, err := f.read(p)
	if err != nil {
		return nil, err
	}
	fi := fileInfo{name: name, size: int64(len(data))}
	if hasMode {
		fi.mode = mode
	}
	return fi, nil
}

// chmod sets a file's permission bits.
func (f *fs) chmod(p string, perm iofs.FileMode) {
	v, rel, _ := f.resolve(p)
	v.SetModes(map[string]iofs.FileMode{rel: perm})
}

// Magic numbers statfs reports for the file systems a container sees,
// printed as numbers by mounttest for all but tmpfs.
const (
	overlayMagic = 0x794c7630
	ext4Magic    = 0xef53
)

// fsType names the file system of p as mounttest prints it: "tmpfs", or
// statfs's magic number (the node's disk for a volume, overlay for the
// container's own files).
func (f *fs) fsType(p string) string {
	v, _, _ := f.resolve(p)
	v.mu.RLock()
	t := v.fsType
	v.mu.RUnlock()
	switch {
	case t != "":
		return t
	case v == f.root:
		return strconv.Itoa(overlayMagic)
	}
	return strconv.Itoa(ext4Magic)
}

// walk calls fn for p and, for a directory, everything under it, in
// lexical order; rel is the path relative to p's parent.
func (f *fs) walk(p string, fn func(abs string, fi iofs.FileInfo) error) error {
	fi, err := f.statInfo(p)
	if err != nil {
		return err
	}
	if err := fn(p, fi); err != nil {
		return err
	}
	if !fi.IsDir() {
		return nil
	}
	names, err := f.list(p)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == dirMarker {
			continue
		}
		if err := f.walk(path.Join(p, n), fn); err != nil {
			return err
		}
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
	v.size -= int64(len(v.files[rel]))
	delete(v.files, rel)
	for k, data := range v.files {
		if strings.HasPrefix(k, rel+"/") {
			v.size -= int64(len(data))
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

// dirMarker keeps an empty directory made by mkdir; listings hide it.
const dirMarker = "\x00dir"
