package runtime

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"strings"
)

// tarOptions are a tar command line: tar [-]c|x|t[vzmpo][f FILE] [-C DIR]
// [--long-options] [FILE...].
type tarOptions struct {
	mode    byte // 'c', 'x' or 't'
	file    string
	dir     string
	gzip    bool
	verbose bool
	names   []string
}

func parseTarArgs(argv []string) (tarOptions, error) {
	o := tarOptions{file: "-"}
	args := argv[1:]
	var pending []byte // flags waiting for their argument, in order
	takeArg := func(flag byte, v string) {
		switch flag {
		case 'f':
			o.file = v
		case 'C':
			o.dir = v
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(pending) > 0 {
			takeArg(pending[0], a)
			pending = pending[1:]
			continue
		}
		switch {
		case strings.HasPrefix(a, "--"):
			name, v, hasV := strings.Cut(a[2:], "=")
			switch name {
			case "file", "directory":
				if !hasV {
					if i+1 >= len(args) {
						return o, fmt.Errorf("option '--%s' requires an argument", name)
					}
					i++
					v = args[i]
				}
				takeArg(map[string]byte{"file": 'f', "directory": 'C'}[name], v)
			case "gzip":
				o.gzip = true
			case "create", "extract", "list":
				o.mode = map[string]byte{"create": 'c', "extract": 'x', "list": 't'}[name]
			}
		case i == 0 && !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "-") && len(a) > 1:
			for _, f := range []byte(strings.TrimPrefix(a, "-")) {
				switch f {
				case 'c', 'x', 't':
					o.mode = f
				case 'z':
					o.gzip = true
				case 'v':
					o.verbose = true
				case 'f', 'C':
					pending = append(pending, f)
				}
			}
		default:
			o.names = append(o.names, a)
		}
	}
	if len(pending) > 0 {
		return o, fmt.Errorf("option requires an argument -- '%c'", pending[0])
	}
	if o.mode == 0 {
		return o, errors.New("You must specify one of the '-Acdtrux', '--delete' or '--test-label' options")
	}
	return o, nil
}

// uTar makes and reads real tar streams on the container's file system:
// what `kubectl cp` runs (tar cf - PATH, tar -xmf - -C DIR).
func uTar(c *call, argv []string) (int, error) {
	o, err := parseTarArgs(argv)
	if err != nil {
		fmt.Fprintf(c.stderr, "tar: %v\n", err)
		return 2, nil
	}
	base := c.dir
	if o.dir != "" {
		base = c.abs(o.dir)
		if fi, err := c.p.fs.statInfo(base); err != nil || !fi.IsDir() {
			fmt.Fprintf(c.stderr, "tar: can't change directory to '%s': No such file or directory\n", o.dir)
			return 2, nil
		}
	}
	switch o.mode {
	case 'c':
		return tarCreate(c, o, base)
	default:
		return tarRead(c, o, base)
	}
}

func tarCreate(c *call, o tarOptions, base string) (int, error) {
	if len(o.names) == 0 {
		fmt.Fprintln(c.stderr, "tar: empty archive")
		return 1, nil
	}
	var out io.Writer = c.stdout
	var file *bytes.Buffer
	if o.file != "-" {
		file = &bytes.Buffer{}
		out = file
	}
	var zw *gzip.Writer
	if o.gzip {
		zw = gzip.NewWriter(out)
		out = zw
	}
	tw := tar.NewWriter(out)
	now := c.p.clock.Now()
	code := 0
	warned := false
	for _, name := range o.names {
		abs := name
		if !path.IsAbs(name) {
			abs = path.Join(base, name)
		}
		member := strings.TrimLeft(path.Clean(name), "/")
		if strings.HasPrefix(name, "/") && !warned {
			fmt.Fprintln(c.stderr, "tar: removing leading '/' from member names")
			warned = true
		}
		err := c.p.fs.walk(abs, func(p string, fi iofs.FileInfo) error {
			rel := member
			if p != abs {
				rel = path.Join(member, strings.TrimPrefix(p, path.Clean(abs)+"/"))
			}
			if rel == "" || rel == "." {
				return nil
			}
			hdr := &tar.Header{Name: rel, ModTime: now, Uname: "root", Gname: "root", Format: tar.FormatUSTAR}
			if len(rel) > 99 {
				hdr.Format = tar.FormatPAX
			}
			if fi.IsDir() {
				hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, rel+"/", 0o755
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
				if o.verbose {
					fmt.Fprintln(c.stderr, hdr.Name)
				}
				return nil
			}
			data, err := c.p.fs.read(p)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(data))
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if o.verbose {
				fmt.Fprintln(c.stderr, rel)
			}
			_, err = tw.Write(data)
			return err
		})
		if errors.Is(err, errNotExist) {
			fmt.Fprintf(c.stderr, "tar: %s: No such file or directory\n", name)
			code = 1
			continue
		}
		if err != nil {
			if c.ctx.Err() != nil {
				return 0, errKilled
			}
			fmt.Fprintf(c.stderr, "tar: %v\n", err)
			return 1, nil
		}
	}
	if err := tw.Close(); err != nil {
		return 1, nil
	}
	if zw != nil {
		_ = zw.Close()
	}
	if file != nil {
		if err := c.p.fs.write(c.abs(o.file), file.Bytes(), false); err != nil {
			fmt.Fprintf(c.stderr, "tar: can't open '%s': %v\n", o.file, err)
			return 1, nil
		}
	}
	return code, nil
}

func tarRead(c *call, o tarOptions, base string) (int, error) {
	var in io.Reader
	if o.file == "-" {
		if c.stdin == nil {
			fmt.Fprintln(c.stderr, "tar: short read")
			return 1, nil
		}
		in = c.stdin
	} else {
		data, err := c.p.fs.read(c.abs(o.file))
		if err != nil {
			fmt.Fprintf(c.stderr, "tar: can't open '%s': %v\n", o.file, err)
			return 1, nil
		}
		in = bytes.NewReader(data)
	}
	if o.gzip {
		zr, err := gzip.NewReader(in)
		if err != nil {
			fmt.Fprintln(c.stderr, "tar: invalid magic")
			return 1, nil
		}
		defer zr.Close()
		in = zr
	}
	tr := tar.NewReader(in)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			if c.ctx.Err() != nil {
				return 0, errKilled
			}
			fmt.Fprintln(c.stderr, "tar: short read")
			return 1, nil
		}
		// A member cannot leave the directory: .. and leading / go.
		rel := strings.TrimLeft(path.Clean("/"+hdr.Name), "/")
		if o.mode == 't' {
			fmt.Fprintln(c.stdout, hdr.Name)
			continue
		}
		if o.verbose {
			fmt.Fprintln(c.stdout, hdr.Name)
		}
		if rel == "" {
			continue
		}
		target := path.Join(base, rel)
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = c.p.fs.mkdir(target)
		case tar.TypeReg:
			if hdr.Size > maxVolumeBytes {
				err = errNoSpace
				break
			}
			var data []byte
			data, err = io.ReadAll(io.LimitReader(tr, hdr.Size))
			if err == nil {
				err = c.p.fs.write(target, data, false)
			}
		default:
			// Links, devices and FIFOs are not simulated.
			continue
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "tar: can't create '%s': %v\n", rel, err)
			return 1, nil
		}
	}
}
