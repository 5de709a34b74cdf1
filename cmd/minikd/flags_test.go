package main

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"minik/internal/api"
	"minik/internal/leaderelect"
	"minik/internal/server"
)

// parse parses minikd's flags from args into a Config, as newCommand does.
func parse(t *testing.T, args ...string) (server.Config, error) {
	t.Helper()
	cfg := server.Config{Out: os.Stdout, AutoNetwork: true}
	f := pflag.NewFlagSet("minikd", pflag.ContinueOnError)
	bindServerFlags(f, &cfg)
	err := f.Parse(args)
	return cfg, err
}

func TestFlagsParseIntoTheConfig(t *testing.T) {
	defaults, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	want := server.Config{
		DataDir: server.DefaultDataDir(), Out: os.Stdout, AutoNetwork: true,
		Controllers: []string{"*"}, ControllerWorkers: 5, ControllerQPS: 500, ControllerBurst: 1000,
		LeaderElection:       leaderelect.Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
		ServiceNodePortRange: api.DefaultServiceNodePortRange, ServiceProxy: true, IngressMode: "service",
		Nodes: 3, ImagePolicy: "catalog", SimulationSpeed: 1, KubeletPort: 10250, DRADevices: 2,
		AuthorizationMode:   server.AuthorizationNodeRBAC,
		MaxRequestsInFlight: 400, MaxMutatingRequestsInFlight: 200, RequestTimeout: api.DefaultRequestTimeout,
		ClusterDomain: "cluster.local", DNSListen: server.DNSAuto, DNSForward: "/etc/resolv.conf", ResolvConf: "/etc/resolv.conf",
	}
	if !reflect.DeepEqual(defaults, want) {
		t.Fatalf("defaults:\n%+v\nwant\n%+v", defaults, want)
	}

	for _, tc := range []struct {
		name  string
		args  []string
		check func(server.Config) bool
	}{
		{"kube's 0 in-flight limit means none, which the config says with a negative",
			[]string{"--max-requests-inflight", "0", "--max-mutating-requests-inflight=0"},
			func(c server.Config) bool { return c.MaxRequestsInFlight < 0 && c.MaxMutatingRequestsInFlight < 0 }},
		{"an in-flight limit is kept as given",
			[]string{"--max-requests-inflight", "7"},
			func(c server.Config) bool { return c.MaxRequestsInFlight == 7 && c.MaxMutatingRequestsInFlight == 200 }},
		{"--watch-cache=false turns the watch cache off",
			[]string{"--watch-cache=false"},
			func(c server.Config) bool { return c.NoWatchCache }},
		{"--watch-cache alone keeps it on",
			[]string{"--watch-cache"},
			func(c server.Config) bool { return !c.NoWatchCache }},
		{"watch cache sizes are keyed by resource, without the group",
			[]string{"--watch-cache-sizes", "pods#5000,deployments.apps#10", "--watch-cache-sizes", "events#1"},
			func(c server.Config) bool {
				return reflect.DeepEqual(c.WatchCacheSizes, map[string]int{"pods": 5000, "deployments": 10, "events": 1})
			}},
		{"etcd servers are comma-separated",
			[]string{"--etcd-servers", "http://127.0.0.1:2379,http://127.0.0.1:2479"},
			func(c server.Config) bool {
				return reflect.DeepEqual(c.EtcdServers, []string{"http://127.0.0.1:2379", "http://127.0.0.1:2479"})
			}},
		{"the controller client's rate is a float",
			[]string{"--controller-qps", "-1", "--controller-burst", "3"},
			func(c server.Config) bool { return c.ControllerQPS == -1 && c.ControllerBurst == 3 }},
		{"leader election timing lands in the config's timing",
			[]string{"--leader-elect", "--leader-elect-lease-duration", "4s"},
			func(c server.Config) bool { return c.LeaderElect && c.LeaderElection.LeaseDuration == 4*time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(cfg) {
				t.Fatalf("%v parsed into %+v", tc.args, cfg)
			}
		})
	}
}

func TestABadWatchCacheSizeNamesTheFlag(t *testing.T) {
	_, err := parse(t, "--watch-cache-sizes", "pods#0")
	if err == nil || !strings.Contains(err.Error(), "--watch-cache-sizes") || !strings.Contains(err.Error(), "pods#0") {
		t.Fatalf("err = %v, want one naming --watch-cache-sizes and the bad value", err)
	}
}
