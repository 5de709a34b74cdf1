// Package etcd starts the embedded single-member etcd that minikd stores
// its objects in, tuned to be ready in a fraction of a second, or connects
// to an external etcd cluster.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Config configures the etcd minikd uses.
type Config struct {
	// DataDir is the directory of the embedded member's data; ignored when
	// Servers is set.
	DataDir string
	// Servers are the client URLs of an external etcd cluster. When set no
	// embedded member starts.
	Servers []string
	// LogLevel is the embedded member's log level (debug, info, warn,
	// error, panic, fatal). Empty means fatal: its shutdown chatter is noise.
	LogLevel string
	// ReadyTimeout bounds how long Start waits for etcd to serve.
	// Zero means 30 seconds.
	ReadyTimeout time.Duration
}

// Etcd is a running etcd (embedded or external) and a client to it.
type Etcd struct {
	// Client talks to etcd over gRPC, as kube-apiserver's does; for the
	// embedded member through its unix socket (or loopback port).
	Client *clientv3.Client

	embedded *embed.Etcd
	// url is the embedded member's client URL.
	url       string
	closeOnce sync.Once
}

// Start starts the embedded member (or dials the external cluster) and
// returns when it serves requests. Close stops it.
func Start(ctx context.Context, cfg Config) (*Etcd, error) {
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 30 * time.Second
	}
	if len(cfg.Servers) > 0 {
		return dial(ctx, cfg)
	}
	if cfg.DataDir == "" {
		return nil, errors.New("etcd: a data dir is required for the embedded member")
	}
	ec := embed.NewConfig()
	ec.Name = "minik"
	ec.Dir = filepath.Join(cfg.DataDir, "etcd")
	ec.Logger = "zap"
	ec.LogLevel = cfg.LogLevel
	if ec.LogLevel == "" {
		ec.LogLevel = "fatal"
	}
	ec.LogOutputs = []string{"stderr"}
	// A single member elects itself at its first tick: short ticks make the
	// member ready in a few tens of milliseconds instead of about a second.
	ec.TickMs = 10
	ec.ElectionMs = 100
	ec.InitialElectionTickAdvance = true
	// minikd is a gRPC client of its member, as kube-apiserver is of its
	// etcd: over a unix socket in the data dir (only its owner may connect)
	// or, when that path is too long for a socket, a free loopback port.
	// etcd's in-process client (v3client) is not used: its watch stream is
	// an unbuffered pipe on which the client, sending a watch's create or
	// cancel, and the server, sending events, can wait on each other
	// forever, stopping every watch (issue 18).
	client := clientURL(cfg.DataDir)
	ec.ListenClientUrls = []url.URL{client}
	ec.AdvertiseClientUrls = []url.URL{client}
	peer, _ := url.Parse("http://127.0.0.1:0")
	ec.ListenPeerUrls = []url.URL{*peer}
	ec.AdvertisePeerUrls = []url.URL{*peer}
	ec.InitialCluster = "minik=http://127.0.0.1:0"
	ec.ListenMetricsUrls = nil
	// Keep the history kube-apiserver keeps (about five minutes) so that
	// watches can resume; older revisions answer 410 Gone.
	ec.AutoCompactionMode = embed.CompactorModePeriodic
	ec.AutoCompactionRetention = "5m"
	ec.SnapshotCount = 10000
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("etcd: create data dir %s: %w", cfg.DataDir, err)
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("etcd: start embedded member in %s: %w", ec.Dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd: embedded member failed: %w", err)
	case <-time.After(cfg.ReadyTimeout):
		e.Close()
		return nil, fmt.Errorf("etcd: embedded member not ready after %s", cfg.ReadyTimeout)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	endpoint := "http://" + e.Clients[0].Addr().String()
	if client.Scheme == "unix" {
		endpoint = "unix://" + e.Clients[0].Addr().String()
	}
	c, err := newClient([]string{endpoint}, cfg.ReadyTimeout)
	if err != nil {
		e.Close()
		return nil, err
	}
	return &Etcd{Client: c, embedded: e, url: endpoint}, nil
}

// maxSocketPath is the longest unix socket path every platform accepts
// (sockaddr_un's sun_path is 108 bytes on Linux, 104 on the BSDs and
// macOS, both counting the terminating NUL).
const maxSocketPath = 103

// clientURL is where the embedded member serves its clients:
// <dataDir>/etcd.sock, or a free loopback port if that path is too long.
func clientURL(dataDir string) url.URL {
	sock := filepath.Join(dataDir, "etcd.sock")
	if abs, err := filepath.Abs(sock); err == nil && len(abs) <= maxSocketPath {
		return url.URL{Scheme: "unix", Path: abs}
	}
	return url.URL{Scheme: "http", Host: "127.0.0.1:0"}
}

// newClient returns a gRPC client of the etcd at endpoints. It does not
// wait for a connection: calls wait for one (gRPC's wait-for-ready).
func newClient(endpoints []string, dialTimeout time.Duration) (*clientv3.Client, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: dialTimeout,
		Logger:      zap.NewNop(),
		// Keep-alives find a member gone without a word (kill -9, a
		// partition), so the client moves to another; kube-apiserver pings
		// its etcd the same way.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: connect to %v: %w", endpoints, err)
	}
	return c, nil
}

func dial(ctx context.Context, cfg Config) (*Etcd, error) {
	c, err := newClient(cfg.Servers, cfg.ReadyTimeout)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()
	if _, err := c.Status(sctx, cfg.Servers[0]); err != nil {
		c.Close()
		return nil, fmt.Errorf("etcd: %s is not serving: %w", cfg.Servers[0], err)
	}
	return &Etcd{Client: c}, nil
}

// ClientURL is the embedded member's client URL, unix:///<data-dir>/etcd.sock
// or http://127.0.0.1:<port> (for other processes sharing it, as with
// --etcd-servers), or "" for an external cluster.
func (e *Etcd) ClientURL() string { return e.url }

// Close closes the client and stops the embedded member, waiting for it to
// flush and release its data dir. It is safe to call more than once.
func (e *Etcd) Close() {
	e.closeOnce.Do(func() {
		e.Client.Close()
		if e.embedded != nil {
			e.embedded.Close()
		}
	})
}

// MemberConfig configures one member of a multi-member etcd cluster (see
// StartMember), as etcd's own flags do.
type MemberConfig struct {
	// Name is the member's name in InitialCluster. Required.
	Name string
	// DataDir is the member's data directory. Required.
	DataDir string
	// ClientURL is where the member serves clients (http://127.0.0.1:2379).
	// Required.
	ClientURL string
	// PeerURL is where the member talks to its peers. Required.
	PeerURL string
	// InitialCluster lists every member as name=peerURL, comma-separated,
	// as etcd's --initial-cluster. Required.
	InitialCluster string
	// LogLevel is as Config's; empty means error.
	LogLevel string
}

// Member is a running member of a multi-member cluster.
type Member struct {
	e         *embed.Etcd
	closeOnce sync.Once
}

// StartMember starts a member of a new (or, when DataDir holds one, an
// existing) cluster with etcd's default timing (100 ms heartbeats, 1 s
// elections). It returns once the member listens; the cluster serves once
// a majority has started. Close stops it. minikd's hidden etcd-member
// command runs one, for HA set-ups on one machine (scripts/ha.sh).
func StartMember(cfg MemberConfig) (*Member, error) {
	if cfg.Name == "" || cfg.DataDir == "" || cfg.ClientURL == "" || cfg.PeerURL == "" || cfg.InitialCluster == "" {
		return nil, errors.New("etcd: a member needs a name, a data dir, client and peer URLs and the initial cluster")
	}
	client, err := url.Parse(cfg.ClientURL)
	if err != nil {
		return nil, fmt.Errorf("etcd: client URL %q: %w", cfg.ClientURL, err)
	}
	peer, err := url.Parse(cfg.PeerURL)
	if err != nil {
		return nil, fmt.Errorf("etcd: peer URL %q: %w", cfg.PeerURL, err)
	}
	ec := embed.NewConfig()
	ec.Name = cfg.Name
	ec.Dir = cfg.DataDir
	ec.Logger = "zap"
	ec.LogLevel = cfg.LogLevel
	if ec.LogLevel == "" {
		ec.LogLevel = "error"
	}
	ec.LogOutputs = []string{"stderr"}
	ec.ListenClientUrls = []url.URL{*client}
	ec.AdvertiseClientUrls = []url.URL{*client}
	ec.ListenPeerUrls = []url.URL{*peer}
	ec.AdvertisePeerUrls = []url.URL{*peer}
	ec.InitialCluster = cfg.InitialCluster
	ec.InitialClusterToken = "minik"
	ec.ListenMetricsUrls = nil
	ec.AutoCompactionMode = embed.CompactorModePeriodic
	ec.AutoCompactionRetention = "5m"
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("etcd: create data dir %s: %w", cfg.DataDir, err)
	}
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("etcd: start member %s in %s: %w", cfg.Name, cfg.DataDir, err)
	}
	return &Member{e: e}, nil
}

// Ready is closed once the member serves (a majority of the cluster is up).
func (m *Member) Ready() <-chan struct{} { return m.e.Server.ReadyNotify() }

// Err reports the member's fatal errors.
func (m *Member) Err() <-chan error { return m.e.Err() }

// Close stops the member. It is safe to call more than once.
func (m *Member) Close() { m.closeOnce.Do(m.e.Close) }
