package api

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"minik/internal/auth"
	"minik/internal/registry"
)

// apiServerUser is the identity of the API server's own writes.
var apiServerUser = &auth.User{Name: "system:apiserver", Groups: []string{auth.GroupMasters, "system:authenticated"}}

// StartServices starts serving custom resources and the descriptors'
// upkeep (registry.Resource.Maintain: the default/kubernetes Service and
// its EndpointSlice pointing at the API server listening on addr,
// allocation repair). It returns once the required upkeep has run once,
// and keeps all of it running in the background until ctx is done or
// Stop is called; Stop waits for that to end.
func (s *Server) StartServices(ctx context.Context, addr string) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("kubernetes service: address %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return fmt.Errorf("kubernetes service: port of %q: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.IsUnspecified() {
		ip = netip.MustParseAddr("127.0.0.1")
	}
	s.apiEndpoint = netip.AddrPortFrom(ip, uint16(port))
	ctx = auth.WithUser(ctx, apiServerUser)
	if err := s.crds.start(ctx); err != nil {
		return err
	}
	env := serverEnv{s}
	var upkeep []registry.Maintenance
	for _, res := range s.cfg.Resources {
		for _, m := range res.Maintain {
			if m.Required {
				if err := m.Run(ctx, env); err != nil {
					return fmt.Errorf("%s: %w", m.Name, err)
				}
			}
			upkeep = append(upkeep, m)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, m := range upkeep {
		s.background.Add(1)
		go func() {
			defer s.background.Done()
			s.maintain(ctx, env, m)
		}()
	}
	return nil
}

// maintain runs one piece of upkeep every interval until ctx is done; the
// upkeep that was not required to run at start runs at once too.
func (s *Server) maintain(ctx context.Context, env registry.Env, m registry.Maintenance) {
	run := func() {
		if err := m.Run(ctx, env); err != nil && ctx.Err() == nil {
			s.log.Warn(m.Name+" failed", "err", err)
		}
	}
	if !m.Required {
		run()
	}
	t := time.NewTicker(m.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			run()
		}
	}
}
