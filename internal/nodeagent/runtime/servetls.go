package runtime

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// listenSpec is one port a server listens on; tls is its TLS
// configuration, nil for plain HTTP (or TCP).
type listenSpec struct {
	port int32
	tls  *tls.Config
}

// listenSpecs decides which ports serve TLS and with which certificate:
// the program's certificate flags (a mounted Secret's files), nginx's
// listen ... ssl and ssl_certificate directives, the rule's TLS ports,
// or a self-signed certificate.
func (p *process) listenSpecs(s *ServeRule, argv []string, ports []int32) ([]listenSpec, error) {
	if s.Style == "nginx" {
		if specs, found, err := p.nginxListens(); found || err != nil {
			return specs, err
		}
	}
	certFile, keyFile := flagValue(argv, s.CertFlag), flagValue(argv, s.KeyFlag)
	var certCfg *tls.Config
	if certFile != "" {
		cfg, err := p.loadCert(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("failed to load the serving certificate: %w", err)
		}
		certCfg = cfg
	}
	specs := make([]listenSpec, 0, len(ports))
	for _, port := range ports {
		ls := listenSpec{port: port}
		switch {
		case certCfg != nil:
			ls.tls = certCfg
		case s.TLS || slices.Contains(s.TLSPorts, port):
			cfg, err := p.selfSigned()
			if err != nil {
				return nil, err
			}
			ls.tls = cfg
		}
		specs = append(specs, ls)
	}
	return specs, nil
}

// loadCert reads a certificate and key (PEM) from the container's files.
func (p *process) loadCert(certFile, keyFile string) (*tls.Config, error) {
	if keyFile == "" {
		keyFile = certFile
	}
	certPEM, err := p.fs.read(certFile)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", certFile, err)
	}
	keyPEM, err := p.fs.read(keyFile)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", keyFile, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// selfSigned is the process's self-signed serving certificate (as
// metrics-server and the kubelet make one when given none), for the pod's
// IP, host name and localhost; made once.
func (p *process) selfSigned() (*tls.Config, error) {
	p.certOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			p.certErr = err
			return
		}
		now := p.clock.Now()
		serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
		tmpl := &x509.Certificate{
			SerialNumber: serial,
			Subject:      pkix.Name{CommonName: p.spec.Hostname + "@" + strconv.FormatInt(now.Unix(), 10)},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		}
		if p.spec.Hostname != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, p.spec.Hostname)
		}
		if ip := net.ParseIP(p.spec.IP); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			p.certErr = err
			return
		}
		p.cert = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	})
	return p.cert, p.certErr
}

// nginxListens reads the listen directives of nginx's configuration in the
// container (/etc/nginx/nginx.conf and /etc/nginx/conf.d/*.conf, as a
// ConfigMap mounts them): the ports, and for "listen ... ssl" the file's
// ssl_certificate and ssl_certificate_key. found is false when no file
// names a port (the image's default: port 80).
func (p *process) nginxListens() ([]listenSpec, bool, error) {
	files := []string{"/etc/nginx/nginx.conf"}
	if names, err := p.fs.list("/etc/nginx/conf.d"); err == nil {
		for _, n := range names {
			if strings.HasSuffix(n, ".conf") {
				files = append(files, path.Join("/etc/nginx/conf.d", n))
			}
		}
	}
	var specs []listenSpec
	seen := map[int32]bool{}
	for _, f := range files {
		data, err := p.fs.read(f)
		if err != nil {
			continue
		}
		type listen struct {
			port int32
			ssl  bool
		}
		var listens []listen
		cert, key := "", ""
		for _, stmt := range strings.Split(stripNginxComments(string(data)), ";") {
			words := strings.Fields(strings.NewReplacer("{", " { ", "}", " } ").Replace(stmt))
			// The directive follows the last block opened or closed
			// before it ("http { server { listen 80").
			for i := len(words) - 1; i >= 0; i-- {
				if words[i] == "{" || words[i] == "}" {
					words = words[i+1:]
					break
				}
			}
			if len(words) < 2 {
				continue
			}
			switch words[0] {
			case "listen":
				addr := words[1]
				if _, port, err := net.SplitHostPort(addr); err == nil {
					addr = port
				}
				n, err := strconv.Atoi(addr)
				if err != nil || n <= 0 || n > 65535 {
					continue
				}
				listens = append(listens, listen{port: int32(n), ssl: slices.Contains(words[2:], "ssl")})
			case "ssl_certificate":
				cert = words[1]
			case "ssl_certificate_key":
				key = words[1]
			}
		}
		for _, l := range listens {
			if seen[l.port] {
				continue
			}
			seen[l.port] = true
			ls := listenSpec{port: l.port}
			if l.ssl {
				if cert == "" {
					return nil, true, fmt.Errorf(`%s [emerg] 1#1: no "ssl_certificate" is defined for the "listen ... ssl" directive in %s`+"\nnginx: [emerg] no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive in %s",
						p.clock.Now().UTC().Format("2006/01/02 15:04:05"), f, f)
				}
				cfg, err := p.loadCert(cert, key)
				if err != nil {
					return nil, true, fmt.Errorf(`%s [emerg] 1#1: cannot load certificate "%s": %v`+"\nnginx: [emerg] cannot load certificate \"%s\": %v",
						p.clock.Now().UTC().Format("2006/01/02 15:04:05"), cert, err, cert, err)
				}
				ls.tls = cfg
			}
			specs = append(specs, ls)
		}
	}
	return specs, len(specs) > 0, nil
}

func stripNginxComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "#")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
