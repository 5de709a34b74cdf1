package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/clientcmd"
	utilexec "k8s.io/client-go/util/exec"
)

// DefaultErrorExitCode is the exit code of every failed command, as kubectl's.
const DefaultErrorExitCode = 1

// ErrExit makes a command fail with exit code 1 without printing anything,
// for commands that already reported their problem.
var ErrExit = errors.New("exit")

// flagError is a command line that does not parse (an unknown flag, a
// flag without its value): kubectl prints it as cobra does, "Error: ...".
type flagError struct{ error }

func (e flagError) Unwrap() error { return e.error }

// usageErrorf returns kubectl's usage error: the message, then a pointer to
// the command's help.
func usageErrorf(cmd *cobra.Command, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return fmt.Errorf("%s\nSee '%s -h' for help and examples", msg, cmd.CommandPath())
}

// addSourceToErr names the manifest an error came from, as kubectl does:
// a server Status keeps its reason and gets the prefix in its message.
func addSourceToErr(verb, source string, err error) error {
	if source == "" {
		return err
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		s.Message = fmt.Sprintf("error when %s %q: %v", verb, source, s.Message)
		return &apierrors.StatusError{ErrStatus: s}
	}
	return fmt.Errorf("error when %s %q: %v", verb, source, err)
}

// PrintError writes err to w exactly as kubectl's CheckErr would and
// returns the process exit code (0 for a nil error).
func PrintError(w io.Writer, err error) int {
	msg, code := errorMessage(err)
	if code == 0 {
		return 0
	}
	if msg != "" {
		if !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		fmt.Fprint(w, msg)
	}
	return code
}

// errorMessage translates an error into kubectl's message and exit code.
func errorMessage(err error) (string, int) {
	if agg, ok := err.(utilerrors.Aggregate); ok && len(agg.Errors()) == 1 {
		err = agg.Errors()[0]
	}
	if err == nil {
		return "", 0
	}
	if errors.Is(err, ErrExit) {
		return "", DefaultErrorExitCode
	}
	var df diffFailure
	if errors.As(err, &df) {
		// kubectl's CheckDiffErr: diff's own failures exit above 1.
		msg, code := errorMessage(df.error)
		return msg, code + 1
	}
	var fe flagError
	if errors.As(err, &fe) {
		return "Error: " + fe.Error(), DefaultErrorExitCode
	}
	if apierrors.IsInvalid(err) {
		var se apierrors.APIStatus
		errors.As(err, &se)
		details := se.Status().Details
		s := "The request is invalid"
		if details == nil {
			return s, DefaultErrorExitCode
		}
		if details.Kind != "" || details.Name != "" {
			s = fmt.Sprintf("The %s %q is invalid", details.Kind, details.Name)
		}
		if len(details.Causes) > 0 {
			return multilineError(s+": ", statusCausesToAggrError(details.Causes)), DefaultErrorExitCode
		}
		return s, DefaultErrorExitCode
	}
	if clientcmd.IsConfigurationInvalid(err) {
		return multilineError("Error in configuration: ", err), DefaultErrorExitCode
	}
	var noMatch *meta.NoResourceMatchError
	if errors.As(err, &noMatch) {
		r := noMatch.PartialResource
		switch {
		case r.Group != "" && r.Version != "":
			return fmt.Sprintf("the server doesn't have a resource type %q in group %q and version %q", r.Resource, r.Group, r.Version), DefaultErrorExitCode
		case r.Group != "":
			return fmt.Sprintf("the server doesn't have a resource type %q in group %q", r.Resource, r.Group), DefaultErrorExitCode
		case r.Version != "":
			return fmt.Sprintf("the server doesn't have a resource type %q in version %q", r.Resource, r.Version), DefaultErrorExitCode
		default:
			return fmt.Sprintf("the server doesn't have a resource type %q", r.Resource), DefaultErrorExitCode
		}
	}
	if agg, ok := err.(utilerrors.Aggregate); ok {
		return multipleErrors("", agg.Errors()), DefaultErrorExitCode
	}
	// A remote command's exit status (exec, run --restart=Never) is
	// minikctl's, as kubectl's.
	if ee, ok := err.(utilexec.ExitError); ok {
		return ee.Error(), ee.ExitStatus()
	}
	msg, ok := standardErrorMessage(err)
	if !ok {
		msg = err.Error()
		if !strings.HasPrefix(msg, "error: ") {
			msg = "error: " + msg
		}
	}
	return msg, DefaultErrorExitCode
}

// standardErrorMessage renders server and connection errors as kubectl
// does, or reports false for other errors.
func standardErrorMessage(err error) (string, bool) {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		switch {
		case s.Reason == metav1.StatusReasonUnauthorized:
			return fmt.Sprintf("error: You must be logged in to the server (%s)", s.Message), true
		case s.Reason != "":
			return fmt.Sprintf("Error from server (%s): %s", s.Reason, err.Error()), true
		default:
			return fmt.Sprintf("Error from server: %s", err.Error()), true
		}
	}
	if apierrors.IsUnexpectedObjectError(err) {
		return fmt.Sprintf("Server returned an unexpected response: %s", err.Error()), true
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if strings.Contains(uerr.Err.Error(), "connection refused") {
			host := uerr.URL
			if server, perr := url.Parse(uerr.URL); perr == nil {
				host = server.Host
			}
			return fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?", host), true
		}
		return fmt.Sprintf("Unable to connect to the server: %v", uerr.Err), true
	}
	return "", false
}

func statusCausesToAggrError(scs []metav1.StatusCause) utilerrors.Aggregate {
	errs := make([]error, 0, len(scs))
	seen := sets.New[string]()
	for _, sc := range scs {
		msg := fmt.Sprintf("%s: %s", sc.Field, sc.Message)
		if seen.Has(msg) {
			continue
		}
		seen.Insert(msg)
		errs = append(errs, errors.New(msg))
	}
	return utilerrors.NewAggregate(errs)
}

// multilineError puts each error of an aggregate on its own line.
func multilineError(prefix string, err error) string {
	if agg, ok := err.(utilerrors.Aggregate); ok {
		errs := utilerrors.Flatten(agg).Errors()
		buf := &bytes.Buffer{}
		switch len(errs) {
		case 0:
			return fmt.Sprintf("%s%v\n", prefix, err)
		case 1:
			return fmt.Sprintf("%s%v\n", prefix, messageForError(errs[0]))
		default:
			fmt.Fprintln(buf, prefix)
			for _, err := range errs {
				fmt.Fprintf(buf, "* %v\n", messageForError(err))
			}
			return buf.String()
		}
	}
	return fmt.Sprintf("%s%s\n", prefix, err)
}

// multipleErrors prints one error a line, each in its standard form.
func multipleErrors(prefix string, errs []error) string {
	buf := &bytes.Buffer{}
	for _, err := range errs {
		fmt.Fprintf(buf, "%s%v\n", prefix, messageForError(err))
	}
	return buf.String()
}

func messageForError(err error) string {
	msg, ok := standardErrorMessage(err)
	if !ok {
		msg = err.Error()
	}
	return msg
}
