// Package nodeagent runs minik's simulated nodes: each one a kubelet of
// its own, a client of the API server as user system:node:<name> (group
// system:nodes), with a simulated container runtime (package runtime).
//
// A node registers its Node (capacity, labels, conditions, addresses,
// nodeInfo, daemon endpoint, pod CIDR), renews its Lease in
// kube-node-lease every 10 seconds and posts its status when it changes
// (or every 5 minutes), as the kubelet does. It gets the pods bound to it
// from one watch the pool's nodes share (Config.WatchPerNode gives each
// node its own, field selector spec.nodeName=<node>, as kubelets have:
// the API server then decodes every pod event once per node) and, for
// each pod, runs a worker that
// does what the kubelet does: volumes (FailedMount when a ConfigMap or
// Secret is missing), the sandbox and its IP, image pulls with their
// events and back-off, the environment (CreateContainerConfigError), init
// containers in order, containers with their restart policy and
// CrashLoopBackOff, probes, and the pod's status, written to pods/status.
// A pod being deleted is stopped within its grace period, then deleted
// with grace 0.
//
// The API server's node authorizer lets a node read only the ConfigMaps,
// Secrets, claims and volumes its pods reference, and learns of a pod's
// binding through a watch of its own: a read it denies is retried for
// about 2.5s before the mount or the environment fails. The labels of a
// Node template a kubelet may not set (node-role.kubernetes.io/...) are
// applied after registration with Config.AdminConfig, as an
// administrator would.
//
// Addresses are loopback, so that what pods serve is reachable from the
// host: node k (the k-th address block) has InternalIP 127.<1+k/256>.
// <k%256>.1 and pod CIDR 127.<1+k/256>.<k%256>.0/24; its pods get .2 to
// .254, and its endpoint (logs) listens on InternalIP:10250. Blocks stay
// below 127.96.0.0, where Service cluster IPs begin. Binding a loopback
// address other than 127.0.0.1 needs Linux; binding ports below 1024
// (nginx's 80) needs root or net.ipv4.ip_unprivileged_port_start=0 —
// otherwise nginx fails to start as it would ("bind() to 0.0.0.0:80
// failed (13: Permission denied)").
//
// Container logs are files in the CRI format under
// <DataDir>/<node>/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log,
// served on the node's endpoint at /containerLogs/<namespace>/<pod>/
// <container>, where the API server proxies pods/log. The endpoint also
// serves, as the kubelet's, /exec/, /attach/ and /portForward/ (the
// kubelet's own protocol code, k8s.io/cri-streaming, over the simulated
// container; see streams.go), /run/, /pods and /healthz. It has no
// authentication of its own: it listens on the node's loopback address
// only, as for logs.
//
// Ephemeral containers (kubectl debug) start once in the running pod,
// their status in status.ephemeralContainerStatuses; sharing the target's
// process namespace is not simulated.
//
// Simulated time (pulls, sandbox, back-offs, probe periods, sleeps in
// scripts, grace periods) is divided by Timing.Speed; heartbeats are real
// time.
//
// Streams, measured on 2 CPUs (BenchmarkExec, BenchmarkPortForward): an
// exec of `true` through the API server takes about 5.7 ms (WebSocket) or
// 5.6 ms (SPDY); port-forward carries about 99 MB/s (SPDY) or 93 MB/s
// (WebSocket tunnelling) from client to pod.
//
// Cost, measured on 2 CPUs (BenchmarkIdleNodes, BenchmarkPodsRunning):
// 1,000 idle nodes register in about 3s and cost about 450 KiB of heap
// and 9 goroutines each (agent and API server together), and 0.2 API
// requests per second each (a Lease renewal and a Node read every 10s).
// Each node has its own client certificate, hence its own connection.
//
// Deliberate differences from a kubelet: no real service account tokens
// (a placeholder file), the kube-root-ca.crt ConfigMap of service account
// volumes may be missing (and that volume is not refreshed), Service
// environment variables are not injected,
// activeDeadlineSeconds and resource limits (OOMKilled) are not
// simulated, file permissions are reported but not enforced, and gRPC
// probes only dial.
//
// Lifecycle hooks run as the kubelet runs them (hooks.go): postStart
// once the container started (a failure kills it, FailedPostStartHook),
// preStop within the grace period before SIGTERM (FailedPreStopHook);
// exec, httpGet and sleep handlers. Containers run as their security
// context's user (runAsUser, runAsGroup, the pod's fsGroup and
// supplementalGroups), and volumes carry the kubelet's file modes.
// DownwardAPI volumes follow the pod's labels and annotations at its next
// sync; configMap, secret and projected volumes are rewritten from their
// sources every Timing.VolumeRefresh (60s simulated, the kubelet's sync
// frequency): a GET per source per period for each pod that has one.
// With Config.DRADevices, each node runs the simulated DRA driver
// gpu.minik.io (package dra), which publishes the node's ResourceSlice
// with the node's credentials; before a pod's sandbox the node prepares
// its ResourceClaims (each must be allocated and reserved for the pod,
// else FailedPrepareDynamicResources, retried after Timing.SyncRetry),
// and containers that reference a claim get the devices' environment
// (GPU_DEVICE_<i>=gpu-<i>); the claims are unprepared once the pod's
// containers have stopped (claims.go). The driver's slice controller (a
// watch and a workqueue per node) costs, measured on a loaded 2-CPU
// machine (BenchmarkIdleNodes/nodes=100,dra=2 against dra=0), about 14
// goroutines and 90 KiB of heap per node and no steady API requests.
// The node admits a pod as the kubelet's sysctl admission does: a sysctl
// outside the kubelet's safe set gets it rejected (phase Failed, reason
// SysctlForbidden; admit.go); safe ones are what sysctl reads in it.
package nodeagent
