package runtime

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// servers are the listeners of a serving program.
type servers struct {
	mu      sync.Mutex
	closers []io.Closer
}

func (s *servers) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.closers {
		_ = c.Close()
	}
	s.closers = nil
}

// discardLog silences net/http's own error log.
var discardLog = log.New(io.Discard, "", 0)

// listen binds the ports on the pod's IP and serves them in the style's
// manner. A port that cannot be bound fails the program, with the
// program's own wording.
func (p *process) listen(out io.Writer, style string, specs []listenSpec, text string) (*servers, error) {
	srv := &servers{}
	for _, ls := range specs {
		port := ls.port
		ln, err := p.listenTCP(int(port))
		if err != nil {
			srv.close()
			return nil, p.bindError(style, port, err)
		}
		if ls.tls != nil {
			ln = tls.NewListener(ln, ls.tls)
		}
		if style == "tcp" {
			srv.closers = append(srv.closers, ln)
			go serveTCP(ln)
			continue
		}
		hs := &http.Server{Handler: p.handler(out, style, text, port), ReadHeaderTimeout: 10 * time.Second, ErrorLog: discardLog}
		srv.closers = append(srv.closers, hs)
		go func() { _ = hs.Serve(ln) }()
	}
	return srv, nil
}

// bindError words a failed bind as the program would.
func (p *process) bindError(style string, port int32, err error) error {
	errno, msg := 98, "Address already in use"
	switch {
	case errors.Is(err, syscall.EACCES):
		errno, msg = 13, "Permission denied"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		errno, msg = 99, "Cannot assign requested address"
	}
	switch style {
	case "nginx":
		now := p.clock.Now().UTC().Format("2006/01/02 15:04:05")
		return fmt.Errorf("%s [emerg] 1#1: bind() to 0.0.0.0:%d failed (%d: %s)\nnginx: [emerg] bind() to 0.0.0.0:%d failed (%d: %s)", now, port, errno, msg, port, errno, msg)
	case "httpd":
		return fmt.Errorf("(%d)%s: AH00072: make_sock: could not bind to address 0.0.0.0:%d\nno listening sockets available, shutting down\nAH00015: Unable to open logs", errno, msg, port)
	}
	return fmt.Errorf("listen tcp :%d: bind: %s", port, strings.ToLower(msg))
}

// serveTCP accepts connections and answers PING with +PONG, as a Redis
// would; anything else is read and ignored.
func serveTCP(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(conn)
			for {
				line, err := r.ReadString('\n')
				if strings.Contains(strings.ToUpper(line), "PING") {
					_, _ = io.WriteString(conn, "+PONG\r\n")
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// page is what a server answers.
type page struct {
	status int
	ctype  string
	body   string
}

// handler serves HTTP in a style and logs each request as the program
// does.
func (p *process) handler(out io.Writer, style, text string, port int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		pg := p.respond(style, text, port, r)
		w.Header().Set("Content-Type", pg.ctype)
		switch style {
		case "nginx":
			w.Header().Set("Server", "nginx/1.27.5")
		case "httpd":
			w.Header().Set("Server", "Apache/2.4.63 (Unix)")
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(pg.body)))
		w.WriteHeader(pg.status)
		if r.Method != http.MethodHead {
			_, _ = io.WriteString(w, pg.body)
		}
		p.accessLog(out, style, r, pg, time.Since(start))
	})
}

func (p *process) respond(style, text string, port int32, r *http.Request) page {
	html := "text/html"
	switch style {
	case "nginx", "httpd":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if style == "nginx" {
				return page{http.StatusMethodNotAllowed, html, nginxError(405, "Not Allowed")}
			}
			return page{http.StatusMethodNotAllowed, html, apacheError(405, "Method Not Allowed", "The requested method "+r.Method+" is not allowed for this URL.")}
		}
		root := "/usr/share/nginx/html"
		if style == "httpd" {
			root = "/usr/local/apache2/htdocs"
		}
		file := r.URL.Path
		if strings.HasSuffix(file, "/") {
			file += "index.html"
		}
		if data, err := p.fs.read(root + file); err == nil {
			ctype := html
			if !strings.HasSuffix(file, ".html") && !strings.HasSuffix(file, ".htm") {
				ctype = http.DetectContentType(data)
			}
			return page{http.StatusOK, ctype, string(data)}
		}
		if file == "/index.html" {
			if style == "nginx" {
				return page{http.StatusOK, html, p.nginxWelcome()}
			}
			return page{http.StatusOK, html, fmt.Sprintf("<html><body><h1>It works!</h1>\n<p>Served by pod %s on node %s (pod IP %s), simulated by minik.</p>\n</body></html>\n", p.spec.Pod, p.spec.Node, p.spec.IP)}
		}
		if style == "nginx" {
			return page{http.StatusNotFound, html, nginxError(404, "Not Found")}
		}
		return page{http.StatusNotFound, html, apacheError(404, "Not Found", "The requested URL was not found on this server.")}
	case "echo":
		if r.URL.Path == "/health" {
			return page{http.StatusOK, "application/json", `{"status":"ok"}` + "\n"}
		}
		return page{http.StatusOK, "text/plain; charset=utf-8", text + "\n"}
	case "whoami":
		var b strings.Builder
		fmt.Fprintf(&b, "Hostname: %s\nIP: 127.0.0.1\nIP: %s\nRemoteAddr: %s\n%s %s %s\nHost: %s\n", p.spec.Hostname, p.spec.IP, r.RemoteAddr, r.Method, r.URL.RequestURI(), r.Proto, r.Host)
		for _, k := range sortedHeaderKeys(r.Header) {
			for _, v := range r.Header[k] {
				fmt.Fprintf(&b, "%s: %s\n", k, v)
			}
		}
		return page{http.StatusOK, "text/plain; charset=utf-8", b.String()}
	case "hello":
		version := "1.0.0"
		if strings.HasSuffix(p.spec.Image, ":2.0") {
			version = "2.0.0"
		}
		return page{http.StatusOK, "text/plain; charset=utf-8", fmt.Sprintf("Hello, world!\nVersion: %s\nHostname: %s\n", version, p.spec.Hostname)}
	}
	return page{http.StatusOK, "text/plain; charset=utf-8", fmt.Sprintf("Hello from pod %s, container %s (image %s), on node %s: %s:%d%s\n",
		p.spec.Pod, p.spec.Name, p.spec.Image, p.spec.Node, p.spec.IP, port, r.URL.Path)}
}

func sortedHeaderKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func (p *process) nginxWelcome() string {
	return `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>Served by pod <b>` + p.spec.Pod + `</b> on node ` + p.spec.Node + ` (pod IP ` + p.spec.IP + `), simulated by minik.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
`
}

func nginxError(code int, text string) string {
	return fmt.Sprintf("<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx/1.27.5</center>\r\n</body>\r\n</html>\r\n", code, text, code, text)
}

func apacheError(code int, title, msg string) string {
	return fmt.Sprintf("<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>%d %s</title>\n</head><body>\n<h1>%s</h1>\n<p>%s</p>\n</body></html>\n", code, title, title, msg)
}

// accessLog logs a request in the program's format.
func (p *process) accessLog(out io.Writer, style string, r *http.Request, pg page, d time.Duration) {
	remote, _, _ := net.SplitHostPort(r.RemoteAddr)
	now := p.clock.Now().UTC()
	clf := now.Format("02/Jan/2006:15:04:05 -0700")
	req := fmt.Sprintf("%s %s %s", r.Method, r.URL.RequestURI(), r.Proto)
	ua := r.UserAgent()
	if ua == "" {
		ua = "-"
	}
	ref := r.Referer()
	if ref == "" {
		ref = "-"
	}
	n := len(pg.body)
	if r.Method == http.MethodHead {
		n = 0
	}
	switch style {
	case "nginx":
		fmt.Fprintf(out, "%s - - [%s] %q %d %d %q %q \"-\"\n", remote, clf, req, pg.status, n, ref, ua)
	case "httpd":
		size := strconv.Itoa(n)
		if n == 0 {
			size = "-"
		}
		fmt.Fprintf(out, "%s - - [%s] %q %d %s\n", remote, clf, req, pg.status, size)
	case "echo":
		fmt.Fprintf(out, "%s %s %s %q %d %d %q %v\n", now.Format("2006/01/02 15:04:05"), r.Host, r.RemoteAddr, req, pg.status, n, ua, d)
	case "hello":
		fmt.Fprintf(out, "%s Serving request: %s\n", now.Format("2006/01/02 15:04:05"), r.URL.Path)
	case "whoami":
	default:
		fmt.Fprintf(out, "%s - - [%s] %q %d %d %q %q\n", remote, clf, req, pg.status, n, ref, ua)
	}
}
