package cli

import (
	"bytes"
	"io"
	"os"
)

// IOStreams are the standard streams of a command: In for manifests read
// from "-", Out for data (objects, tables, "created" lines), ErrOut for
// status (warnings, errors, "No resources found").
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// StdStreams returns the process's standard streams.
func StdStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// TestStreams returns streams backed by buffers, for tests: the input buffer
// and the buffers that collect Out and ErrOut.
func TestStreams() (IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
