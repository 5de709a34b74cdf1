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
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
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
	// Client talks to etcd; for the embedded member it is an in-process
	// client that goes through no socket.
	Client *clientv3.Client

	embedded  *embed.Etcd
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
	// The API server uses the in-process client; the listeners exist only
	// because etcd requires them, on free loopback ports.
	loop, _ := url.Parse("http://127.0.0.1:0")
	ec.ListenClientUrls = []url.URL{*loop}
	ec.AdvertiseClientUrls = []url.URL{*loop}
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
	return &Etcd{Client: v3client.New(e.Server), embedded: e}, nil
}

func dial(ctx context.Context, cfg Config) (*Etcd, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Servers,
		DialTimeout: cfg.ReadyTimeout,
		Context:     ctx,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: connect to %v: %w", cfg.Servers, err)
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()
	if _, err := c.Status(sctx, cfg.Servers[0]); err != nil {
		c.Close()
		return nil, fmt.Errorf("etcd: %s is not serving: %w", cfg.Servers[0], err)
	}
	return &Etcd{Client: c}, nil
}

// ClientURL is the embedded member's client URL on loopback (for other
// processes sharing it, as with --etcd-servers), or "" for an external
// cluster.
func (e *Etcd) ClientURL() string {
	if e.embedded == nil || len(e.embedded.Clients) == 0 {
		return ""
	}
	return "http://" + e.embedded.Clients[0].Addr().String()
}

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
