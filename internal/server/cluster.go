package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"minik/internal/pki"
)

// Many clusters on one host. Every minikd started with default flags
// takes a slot: a number, recorded in its data dir and claimed host-wide in
// a slots dir, that gives it a network no other minikd uses:
//
//   - its host address 127.0.<slot>.1, where the API (port 6443), the node
//     ports and the Ingress/Gateway proxy (ports 18080 and 18443) listen;
//   - its Service range 127.96.0.0/20 + slot×4096 (slot 0 has 127.96.0.0/20,
//     whose first address, the kubernetes Service's, is 127.96.0.1).
//
// A new data dir takes the first slot that no data dir claims and on whose
// API and kubernetes Service addresses nothing answers. Nodes need no slot:
// a node's address block is skipped when another minikd on the host holds
// it. A port of the host address that something else
// holds (another program on 0.0.0.0:6443) gives way to a free port.
//
// A slot stays the data dir's while the data dir exists: a stopped cluster
// keeps its Service IPs in etcd, so no other cluster may take its range.
const maxSlots = 256

// Preferred ports on a slot's host address.
const (
	apiPort          = 6443
	ingressHTTPPort  = 18080
	ingressHTTPSPort = 18443
)

// NoAddress, given for an Ingress address under AutoNetwork, runs no such
// listener ("none", as the flags take it).
const NoAddress = "none"

// clusterFile is <data-dir>/cluster.json: the cluster's name and slot.
type clusterFile struct {
	Name string `json:"name"`
	Slot int    `json:"slot"`
}

// slotNetwork is what a slot gives a cluster.
type slotNetwork struct {
	// Host is the slot's loopback address.
	Host string
	// ServiceCIDR is the slot's Service cluster IP range.
	ServiceCIDR string
}

// networkOf returns the network of slot n.
func networkOf(n int) slotNetwork {
	base := netip.MustParseAddr("127.96.0.0").As4()
	off := n * 4096
	base[1] += byte(off >> 16)
	base[2] += byte(off >> 8)
	return slotNetwork{
		Host:        netip.AddrFrom4([4]byte{127, 0, byte(n), 1}).String(),
		ServiceCIDR: netip.PrefixFrom(netip.AddrFrom4(base), 20).String(),
	}
}

// defaultClusterName names slot n's cluster: "minik", then "minik-<n>".
func defaultClusterName(n int) string {
	if n == 0 {
		return "minik"
	}
	return "minik-" + strconv.Itoa(n)
}

// DefaultSlotsDir is where minikd claims slots host-wide: $MINIK_SLOTS_DIR,
// else <user config dir>/minik/slots, else <tmp>/minik-<uid>/slots.
func DefaultSlotsDir() string {
	if d := os.Getenv("MINIK_SLOTS_DIR"); d != "" {
		return d
	}
	if d, err := os.UserConfigDir(); err == nil && strings.TrimSpace(d) != "" {
		return filepath.Join(d, "minik", "slots")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("minik-%d", os.Getuid()), "slots")
}

// lockDataDir takes <data-dir>/minikd.lock for the life of the process (the
// returned file; closing it releases the lock). A second minikd on the same
// data dir gets an error naming the first one's pid.
func lockDataDir(dataDir string) (*os.File, error) {
	path := filepath.Join(dataDir, "minikd.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data dir %s: %w", dataDir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("--data-dir %s is in use by another minikd (pid %s): stop it, or give another --data-dir", dataDir, strings.TrimSpace(string(pid)))
		}
		return nil, fmt.Errorf("lock data dir %s: %w", dataDir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// claimSlot returns the data dir's cluster (its name and slot), claiming
// a free slot in slotsDir for a new data dir. The data dir keeps its slot
// across restarts. A data dir from before slots (etcd data, no
// cluster.json) is new to it: it takes the first free slot.
func claimSlot(dataDir, slotsDir, name string) (clusterFile, error) {
	if err := os.MkdirAll(slotsDir, 0o700); err != nil {
		return clusterFile{}, fmt.Errorf("slots dir %s: %w", slotsDir, err)
	}
	// One claim at a time on the host: a stale claim is removed and
	// replaced under this lock.
	lock, err := os.OpenFile(filepath.Join(slotsDir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return clusterFile{}, fmt.Errorf("slots dir %s: %w", slotsDir, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return clusterFile{}, fmt.Errorf("lock slots dir %s: %w", slotsDir, err)
	}
	cf, known, err := readClusterFile(dataDir)
	if err != nil {
		return clusterFile{}, err
	}
	if known {
		owner := slotOwner(slotsDir, cf.Slot)
		if owner != "" && owner != dataDir && claims(owner, cf.Slot) {
			return clusterFile{}, fmt.Errorf("--data-dir %s: its slot %d (Service range %s) is claimed by the cluster in %s", dataDir, cf.Slot, networkOf(cf.Slot).ServiceCIDR, owner)
		}
		if name != "" && name != cf.Name {
			cf.Name = name
			if err := writeClusterFile(dataDir, cf); err != nil {
				return clusterFile{}, err
			}
		}
		return cf, writeSlot(slotsDir, cf.Slot, dataDir)
	}
	for n := 0; n < maxSlots; n++ {
		owner := slotOwner(slotsDir, n)
		if owner != "" && owner != dataDir && claims(owner, n) || slotAnswers(n) {
			continue
		}
		cf := clusterFile{Name: name, Slot: n}
		if cf.Name == "" {
			cf.Name = defaultClusterName(n)
		}
		if err := writeClusterFile(dataDir, cf); err != nil {
			return clusterFile{}, err
		}
		return cf, writeSlot(slotsDir, n, dataDir)
	}
	return clusterFile{}, fmt.Errorf("all %d cluster slots in %s are claimed by existing data dirs: remove the data dir of a cluster you no longer need", maxSlots, slotsDir)
}

// slotAnswers is answers; the slot tests replace it to be independent of
// what the host runs.
var slotAnswers = answers

// answers reports whether something already serves on slot n's API
// address or its first Service address (the kubernetes Service's): a
// minikd that claims slots elsewhere, or one from before slots.
func answers(n int) bool {
	nw := networkOf(n)
	first := netip.MustParsePrefix(nw.ServiceCIDR).Addr().Next()
	for _, addr := range []string{net.JoinHostPort(nw.Host, strconv.Itoa(apiPort)), net.JoinHostPort(first.String(), "443")} {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// slotOwner is the data dir claiming slot n, or "".
func slotOwner(slotsDir string, n int) string {
	b, err := os.ReadFile(filepath.Join(slotsDir, strconv.Itoa(n)))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// claims reports whether dataDir still holds slot n: a data dir that is
// gone, or that now records another slot, frees it.
func claims(dataDir string, n int) bool {
	cf, known, err := readClusterFile(dataDir)
	if err != nil {
		return true // unreadable: leave it alone
	}
	return known && cf.Slot == n
}

func writeSlot(slotsDir string, n int, dataDir string) error {
	if err := pki.WriteFileAtomic(filepath.Join(slotsDir, strconv.Itoa(n)), []byte(dataDir+"\n"), 0o600); err != nil {
		return fmt.Errorf("claim slot %d in %s: %w", n, slotsDir, err)
	}
	return nil
}

func readClusterFile(dataDir string) (clusterFile, bool, error) {
	var cf clusterFile
	b, err := os.ReadFile(filepath.Join(dataDir, "cluster.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return cf, false, nil
	}
	if err != nil {
		return cf, false, fmt.Errorf("read %s: %w", filepath.Join(dataDir, "cluster.json"), err)
	}
	if err := json.Unmarshal(b, &cf); err != nil || cf.Slot < 0 || cf.Slot >= maxSlots {
		return cf, false, fmt.Errorf("%s: not a minik cluster file (remove it to choose a new slot)", filepath.Join(dataDir, "cluster.json"))
	}
	return cf, true, nil
}

func writeClusterFile(dataDir string, cf clusterFile) error {
	b, _ := json.MarshalIndent(cf, "", "  ")
	if err := pki.WriteFileAtomic(filepath.Join(dataDir, "cluster.json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write cluster file in %s: %w", dataDir, err)
	}
	return nil
}

// preferPort is host:port while that can be listened on, else host with a
// free port (port 0, chosen now so that it can be printed and written).
func preferPort(host string, port int) (string, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		return addr, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("listen on %s: %w", host, err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// parseServiceRange parses the Service range once it is known (under
// AutoNetwork, place fills it in).
func (s *Server) parseServiceRange() error {
	if s.cfg.ServiceClusterIPRange == "" {
		return nil
	}
	p, err := netip.ParsePrefix(s.cfg.ServiceClusterIPRange)
	if err != nil {
		return fmt.Errorf("--service-cluster-ip-range %q: %w", s.cfg.ServiceClusterIPRange, err)
	}
	s.serviceIPs = p
	return nil
}

// place gives the cluster its slot's network, under AutoNetwork: what the
// configuration leaves empty comes from the slot.
func (s *Server) place() error {
	if !s.cfg.AutoNetwork {
		return nil
	}
	slotsDir := s.cfg.SlotsDir
	if slotsDir == "" {
		slotsDir = DefaultSlotsDir()
	}
	cf, err := claimSlot(s.cfg.DataDir, slotsDir, s.cfg.ClusterName)
	if err != nil {
		return err
	}
	nw := networkOf(cf.Slot)
	s.slot = cf.Slot
	s.cfg.ClusterName = cf.Name
	if s.cfg.ServiceClusterIPRange == "" {
		s.cfg.ServiceClusterIPRange = nw.ServiceCIDR
	}
	if err := s.parseServiceRange(); err != nil {
		return err
	}
	if s.cfg.NodePortAddress == "" {
		s.cfg.NodePortAddress = nw.Host
	}
	if s.cfg.Listen == "" {
		s.listenAuto = nw.Host
	}
	for _, l := range []struct {
		addr *string
		port int
	}{{&s.cfg.IngressHTTP, ingressHTTPPort}, {&s.cfg.IngressHTTPS, ingressHTTPSPort}} {
		switch *l.addr {
		case NoAddress:
			*l.addr = ""
		case "":
			if *l.addr, err = preferPort(nw.Host, l.port); err != nil {
				return fmt.Errorf("ingress proxy: %w", err)
			}
		}
	}
	return nil
}

// listen opens the API server's listener: Config.Listen, or under
// AutoNetwork the slot's host address on 6443 while that is free, else on
// a free port.
func (s *Server) listen() (net.Listener, error) {
	if s.listenAuto == "" {
		ln, err := net.Listen("tcp", s.cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
		}
		return ln, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(s.listenAuto, strconv.Itoa(apiPort)))
	if err == nil {
		return ln, nil
	}
	ln, err = net.Listen("tcp", net.JoinHostPort(s.listenAuto, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.listenAuto, err)
	}
	return ln, nil
}

// printPlace tells, after the serving line, where the cluster's network is.
func (s *Server) printPlace() {
	var ingress []string
	if s.cfg.IngressHTTP != "" {
		ingress = append(ingress, "http://"+s.cfg.IngressHTTP)
	}
	if s.cfg.IngressHTTPS != "" {
		ingress = append(ingress, "https://"+s.cfg.IngressHTTPS)
	}
	line := fmt.Sprintf("cluster %q (slot %d): Services in %s, node ports on %s", s.cfg.ClusterName, s.slot, s.cfg.ServiceClusterIPRange, s.cfg.NodePortAddress)
	if len(ingress) > 0 {
		line += ", Ingress on " + strings.Join(ingress, " and ")
	}
	fmt.Fprintln(s.cfg.Out, line)
}

// mergeKubeconfig adds the cluster's admin kubeconfig to the user's
// (KUBECONFIG, else ~/.kube/config) and makes it the current context, as
// kind does. The returned function removes it again and gives back the
// context that was current, unless the user has switched since.
func mergeKubeconfig(admin *clientcmdapi.Config) (func() error, error) {
	po := clientcmd.NewDefaultPathOptions()
	cfg, err := po.GetStartingConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig-merge: read %s: %w", po.GetDefaultFilename(), err)
	}
	name := admin.CurrentContext
	ctx := admin.Contexts[name]
	previous := cfg.CurrentContext
	cfg.Clusters[ctx.Cluster] = admin.Clusters[ctx.Cluster]
	cfg.AuthInfos[ctx.AuthInfo] = admin.AuthInfos[ctx.AuthInfo]
	cfg.Contexts[name] = ctx
	cfg.CurrentContext = name
	if err := clientcmd.ModifyConfig(po, *cfg, false); err != nil {
		return nil, fmt.Errorf("--kubeconfig-merge: write %s: %w", po.GetDefaultFilename(), err)
	}
	server := admin.Clusters[ctx.Cluster].Server
	return func() error {
		cfg, err := po.GetStartingConfig()
		if err != nil {
			return fmt.Errorf("--kubeconfig-merge: read %s: %w", po.GetDefaultFilename(), err)
		}
		// Only what is still this cluster's goes.
		if c := cfg.Clusters[ctx.Cluster]; c == nil || c.Server != server {
			return nil
		}
		delete(cfg.Clusters, ctx.Cluster)
		delete(cfg.AuthInfos, ctx.AuthInfo)
		delete(cfg.Contexts, name)
		if cfg.CurrentContext == name {
			cfg.CurrentContext = ""
			if _, ok := cfg.Contexts[previous]; ok {
				cfg.CurrentContext = previous
			}
		}
		if err := clientcmd.ModifyConfig(po, *cfg, false); err != nil {
			return fmt.Errorf("--kubeconfig-merge: write %s: %w", po.GetDefaultFilename(), err)
		}
		return nil
	}, nil
}
