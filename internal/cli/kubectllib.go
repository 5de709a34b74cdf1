package cli

import (
	"context"
	"io"
	"net/url"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/streaming/pkg/httpstream"
)

// The streaming verbs (exec, attach, cp, port-forward, run, debug, top)
// drive k8s.io/kubectl's option types — their Complete/Validate/Run are
// kubectl's own behaviour, messages included — from minikctl's cobra
// commands and Factory. This file adapts minikctl's Factory and streams to
// what those types take.

// restClientGetter is minikctl's Factory seen as cli-runtime's
// RESTClientGetter, so that kubectl's library code shares its REST config,
// cached discovery and RESTMapper.
type restClientGetter struct{ f *Factory }

// ToRESTConfig returns a copy of the invocation's client configuration:
// kubectl's code changes what it is given (top sets a protobuf content
// type), which must not reach minikctl's other clients.
func (g restClientGetter) ToRESTConfig() (*rest.Config, error) {
	cfg, err := g.f.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return rest.CopyConfig(cfg), nil
}

// ToDiscoveryClient returns the invocation's cached discovery client.
func (g restClientGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.f.Discovery()
}

// ToRESTMapper returns the invocation's RESTMapper (short names included).
func (g restClientGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.f.ToRESTMapper() }

// ToRawKubeConfigLoader returns the merged kubeconfig of the global flags.
func (g restClientGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return g.f.ToRawKubeConfigLoader()
}

// kubectlFactory returns kubectl's command factory over minikctl's,
// wrapped as kubectl wraps its kubeconfig flags: its REST configs carry
// the core group's defaults (group version, API path, serializer), which
// kubectl's exec and attach build REST clients from.
func kubectlFactory(f *Factory) cmdutil.Factory {
	return cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(restClientGetter{f}))
}

// kubectlStreams converts minikctl's streams to cli-runtime's.
func kubectlStreams(s IOStreams) genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: s.In, Out: s.Out, ErrOut: s.ErrOut}
}

// streamExecutor runs exec and attach sessions as kubectl does —
// WebSocket (v5.channel.k8s.io) first, SPDY when the upgrade fails — and
// ends them when ctx is done (kubectl's own executor never does). It is
// both kubectl's exec.RemoteExecutor and attach.RemoteAttach.
type streamExecutor struct{ ctx context.Context }

// Execute runs one exec session on url; it blocks until the remote
// command ends or the executor's context is done.
func (e streamExecutor) Execute(u *url.URL, cfg *rest.Config, stdin io.Reader, stdout, stderr io.Writer, tty bool, q remotecommand.TerminalSizeQueue) error {
	return e.ExecuteWithContext(e.ctx, u, cfg, stdin, stdout, stderr, tty, q)
}

// ExecuteWithContext is Execute bounded by ctx as well.
func (e streamExecutor) ExecuteWithContext(ctx context.Context, u *url.URL, cfg *rest.Config, stdin io.Reader, stdout, stderr io.Writer, tty bool, q remotecommand.TerminalSizeQueue) error {
	ex, err := newStreamExecutor(u, cfg)
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty, TerminalSizeQueue: q})
}

// Attach runs one attach session on url, as Execute does.
func (e streamExecutor) Attach(u *url.URL, cfg *rest.Config, stdin io.Reader, stdout, stderr io.Writer, tty bool, q remotecommand.TerminalSizeQueue) error {
	return e.ExecuteWithContext(e.ctx, u, cfg, stdin, stdout, stderr, tty, q)
}

// newStreamExecutor returns kubectl's executor for a streaming URL: the
// WebSocket executor falling back to SPDY, or SPDY alone when
// KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false, as kubectl.
func newStreamExecutor(u *url.URL, cfg *rest.Config) (remotecommand.Executor, error) {
	spdyExec, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		return nil, err
	}
	if cmdutil.RemoteCommandWebsockets.IsDisabled() {
		return spdyExec, nil
	}
	// A WebSocket handshake is a GET (RFC 6455 4.1).
	wsExec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(wsExec, spdyExec, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}
