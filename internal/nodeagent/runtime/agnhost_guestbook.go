package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
)

// agnhost guestbook: the kubectl conformance spec's application. A
// frontend (--backend-port) proxies /guestbook?cmd=set to the
// agnhost-primary Service and cmd=get to agnhost-replica; a replica
// (--replicaof) registers with the primary, which pushes every set to
// its replicas.

func defineGuestbook(fl *pflag.FlagSet) func(a *agnhostRun) (int, error) {
	httpPort := fl.String("http-port", "80", "HTTP Listen Port")
	backendPort := fl.String("backend-port", "6379", "Backend's HTTP Listen Port")
	replicaOf := fl.String("replicaof", "", "The host's name to register to")
	return func(a *agnhostRun) (int, error) {
		g := &guestbook{a: a, backendPort: *backendPort, store: map[string]any{}}
		port, err := strconv.Atoi(*httpPort)
		if err != nil {
			return a.fatal(fmt.Errorf("listen tcp: address %s: invalid port", *httpPort))
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/register", g.register)
		mux.HandleFunc("/get", g.get)
		mux.HandleFunc("/set", g.set)
		mux.HandleFunc("/guestbook", g.proxy)
		closeHTTP, err := a.listenHTTP(port, nil, mux)
		if err != nil {
			return a.fatal(err)
		}
		defer closeHTTP()
		if *replicaOf != "" {
			go g.registerTo(*replicaOf)
		}
		return a.wait(func() (int, bool, error) { return 0, false, nil })
	}
}

// guestbook is one guestbook process: its store and, on the primary, its
// replicas.
type guestbook struct {
	a           *agnhostRun
	backendPort string

	mu       sync.Mutex
	store    map[string]any
	replicas []string
}

// dial GETs http://hostPort/request, as the guestbook's client does.
func (g *guestbook) dial(ctx context.Context, request, hostPort string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/%s", hostPort, request), nil)
	if err != nil {
		return "", err
	}
	resp, err := g.a.p.httpClient().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInput))
	return string(body), err
}

// registerTo registers with the primary, retrying for 15s; its failure
// ends the process.
func (g *guestbook) registerTo(primary string) {
	a := g.a
	hostPort := net.JoinHostPort(primary, g.backendPort)
	start := a.p.clock.Now()
	for a.since(start) < 15*time.Second {
		if a.c.ctx.Err() != nil {
			return
		}
		a.logf("Registering to primary: %s/register?host=%s", hostPort, a.p.spec.IP)
		resp, err := g.dial(a.c.ctx, "register?host="+a.p.spec.IP, hostPort)
		if err == nil {
			var out struct {
				Data map[string]any `json:"data"`
			}
			if err := json.Unmarshal([]byte(resp), &out); err != nil || out.Data == nil {
				a.logf("Error while unmarshaling primary's response: %v", err)
				a.exit(1)
				return
			}
			g.mu.Lock()
			g.store = out.Data
			g.mu.Unlock()
			a.logf("Registered to node: %s", primary)
			return
		}
		a.logf("encountered error while registering to primary: %v. Retrying in 1s.", err)
		if a.sleep(time.Second) != nil {
			return
		}
	}
	a.logf("Timed out while registering to primary.")
	a.exit(1)
}

func (g *guestbook) register(w http.ResponseWriter, r *http.Request) {
	ip := r.URL.Query().Get("host")
	g.a.logf("GET /register?host=%s", ip)
	g.mu.Lock()
	data, err := json.Marshal(map[string]any{"data": g.store})
	g.replicas = append(g.replicas, ip)
	g.mu.Unlock()
	if err != nil {
		http.Error(w, fmt.Sprintf("response could not be serialized. %v", err), http.StatusExpectationFailed)
		return
	}
	fmt.Fprint(w, string(data))
	g.a.logf("Node '%s' registered.", ip)
}

func (g *guestbook) get(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	g.a.logf("GET /get?key=%s", key)
	g.mu.Lock()
	var out map[string]any
	if key == "" {
		out = map[string]any{"data": g.store}
	} else {
		v, ok := g.store[key]
		if !ok {
			v = ""
		}
		out = map[string]any{"data": v}
	}
	data, err := json.Marshal(out)
	g.mu.Unlock()
	if err != nil {
		http.Error(w, fmt.Sprintf("response could not be serialized. %v", err), http.StatusExpectationFailed)
		return
	}
	fmt.Fprint(w, string(data))
}

func (g *guestbook) set(w http.ResponseWriter, r *http.Request) {
	key, value := r.URL.Query().Get("key"), r.URL.Query().Get("value")
	g.a.logf("GET /set?key=%s&value=%s", key, value)
	if key == "" {
		http.Error(w, "cannot set with empty key.", http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.store[key] = value
	replicas := append([]string(nil), g.replicas...)
	g.mu.Unlock()
	for _, replica := range replicas {
		if _, err := g.dial(r.Context(), fmt.Sprintf("set?key=%s&value=%s", key, value), net.JoinHostPort(replica, g.backendPort)); err != nil {
			http.Error(w, fmt.Sprintf("encountered error while propagating to replica '%s': %v", replica, err), http.StatusExpectationFailed)
			return
		}
	}
	fmt.Fprint(w, `{"message":"Updated"}`)
}

func (g *guestbook) proxy(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cmd, key, value := strings.ToLower(q.Get("cmd")), q.Get("key"), q.Get("value")
	g.a.logf("GET /guestbook?cmd=%s&key=%s&value=%s", cmd, key, value)
	if cmd != "get" && cmd != "set" {
		http.Error(w, fmt.Sprintf("unsupported cmd: '%s'", cmd), http.StatusBadRequest)
		return
	}
	if cmd == "set" && key == "" {
		http.Error(w, "cannot set with empty key.", http.StatusBadRequest)
		return
	}
	host := "agnhost-primary"
	if cmd == "get" {
		host = "agnhost-replica"
	}
	resp, err := g.dial(r.Context(), fmt.Sprintf("%s?key=%s&value=%s", cmd, key, value), net.JoinHostPort(host, g.backendPort))
	if err != nil {
		var nf *notFoundErr
		if errors.As(err, &nf) {
			http.Error(w, fmt.Sprintf("host and/or port param are invalid. lookup %s: no such host", host), http.StatusBadRequest)
			return
		}
		http.Error(w, fmt.Sprintf("encountered error: %v", err), http.StatusExpectationFailed)
		return
	}
	fmt.Fprint(w, resp)
}
