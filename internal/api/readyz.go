package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
)

// ReadyCheck is one of /readyz's checks, as kube-apiserver's
// healthz.HealthChecker: /readyz lists it as "[+]<name> ok" or
// "[-]<name> failed: reason withheld", and /readyz/<name> runs it alone.
type ReadyCheck struct {
	// Name is the check's name in /readyz's output (etcd, etcd-watch).
	Name string
	// Check returns nil when ready, or why not. It must answer quickly:
	// every probe calls it.
	Check func(ctx context.Context) error
}

// readyPostStartHook names the check that the server finished starting
// (SetReady), as kube's poststarthook checks.
const readyPostStartHook = "poststarthook/minik-ready"

// liveChecks are the checks of /livez and /healthz, in output order, as
// kube-apiserver's: ping, log (the process can log: always), and etcd when
// a ReadyCheck of that name is configured. Readiness alone (the watches,
// start-up) does not make the process unhealthy.
func (s *Server) liveChecks() []ReadyCheck {
	ok := func(context.Context) error { return nil }
	checks := []ReadyCheck{{Name: "ping", Check: ok}, {Name: "log", Check: ok}}
	for _, c := range s.cfg.ReadyChecks {
		if c.Name == "etcd" {
			checks = append(checks, c)
		}
	}
	return checks
}

// serveLive answers /livez and /healthz (see writeHealth).
func (s *Server) serveLive(w http.ResponseWriter, r *http.Request) {
	s.writeHealth(w, r, strings.TrimPrefix(r.URL.Path, "/"), s.liveChecks())
}

// serveLiveCheck answers /livez/<name> and /healthz/<name>.
func (s *Server) serveLiveCheck(w http.ResponseWriter, r *http.Request) {
	_, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	s.writeCheck(w, r, name, s.liveChecks())
}

// readyChecks are every check of /readyz, in output order.
func (s *Server) readyChecks() []ReadyCheck {
	checks := []ReadyCheck{{Name: "ping", Check: func(context.Context) error { return nil }}}
	checks = append(checks, s.cfg.ReadyChecks...)
	return append(checks, ReadyCheck{Name: readyPostStartHook, Check: func(context.Context) error {
		if !s.ready.Load() {
			return fmt.Errorf("not finished")
		}
		return nil
	}})
}

// writeReadyz answers /readyz (see writeHealth).
func (s *Server) writeReadyz(w http.ResponseWriter, r *http.Request) {
	s.writeHealth(w, r, "readyz", s.readyChecks())
}

// writeHealth answers a health endpoint (readyz, livez, healthz) as kube's
// healthz handler does: "ok" when every check passes (their list with
// ?verbose, then "<name> check passed"), else 500 with every check's line
// and "<name> check failed"; the failures' reasons are withheld from this
// public endpoint and logged instead. ?exclude=<check> skips a check.
func (s *Server) writeHealth(w http.ResponseWriter, r *http.Request, name string, checks []ReadyCheck) {
	excluded := map[string]bool{}
	for _, name := range r.URL.Query()["exclude"] {
		excluded[strings.TrimSpace(name)] = true
	}
	var out bytes.Buffer
	var failed []string
	for _, c := range checks {
		if excluded[c.Name] {
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name)
			continue
		}
		if err := c.Check(r.Context()); err != nil {
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name)
			failed = append(failed, c.Name)
			s.log.Debug(name+" check failed", "check", c.Name, "err", err)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.Name)
	}
	if len(failed) > 0 {
		http.Error(w, out.String()+name+" check failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		fmt.Fprint(w, "ok")
		return
	}
	out.WriteString(name + " check passed\n")
	_, _ = out.WriteTo(w)
}

// writeReadyzCheck answers /readyz/<name>: "ok", or 500 with the reason, as
// kube's per-check endpoints.
func (s *Server) writeReadyzCheck(w http.ResponseWriter, r *http.Request) {
	s.writeCheck(w, r, strings.TrimPrefix(r.URL.Path, "/readyz/"), s.readyChecks())
}

// writeCheck runs the check called name alone.
func (s *Server) writeCheck(w http.ResponseWriter, r *http.Request, name string, checks []ReadyCheck) {
	for _, c := range checks {
		if c.Name != name {
			continue
		}
		if err := c.Check(r.Context()); err != nil {
			http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "ok")
		return
	}
	http.NotFound(w, r)
}
