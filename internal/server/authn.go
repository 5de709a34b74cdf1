package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"minik/internal/admission"
	"minik/internal/api"
	"minik/internal/auth"
	"minik/internal/auth/node"
	"minik/internal/auth/rbac"
	"minik/internal/pki"
	"minik/internal/syncwait"
)

// authFiles are the parsed --token-auth-file and --audit-policy.
type authFiles struct {
	tokens *auth.StaticTokens
	policy *api.AuditPolicy
}

// Authorization modes.
const (
	AuthorizationNodeRBAC    = "Node,RBAC"
	AuthorizationAlwaysAllow = "AlwaysAllow"
)

// loadAuthFiles checks the authentication and audit flags and parses the
// files they name, so that New reports a bad one.
func loadAuthFiles(cfg Config) (authFiles, error) {
	var f authFiles
	var err error
	switch cfg.AuthorizationMode {
	case "", AuthorizationNodeRBAC, AuthorizationAlwaysAllow:
	default:
		return f, fmt.Errorf("--authorization-mode %q: supported modes are %q and %q", cfg.AuthorizationMode, AuthorizationNodeRBAC, AuthorizationAlwaysAllow)
	}
	if cfg.TokenAuthFile != "" {
		if f.tokens, err = auth.LoadTokenFile(cfg.TokenAuthFile); err != nil {
			return f, err
		}
	}
	if cfg.AuditPolicyFile != "" {
		if f.policy, err = api.LoadAuditPolicy(cfg.AuditPolicyFile); err != nil {
			return f, err
		}
	}
	return f, nil
}

// authStack is the API server's first stages and what feeds them:
// authenticators (client certificates, static tokens, service account
// tokens), authorizers (system:masters, the node authorizer, RBAC), the
// admission plugins that guard RBAC and node writes, the audit log, and
// the informers (over a loopback client as system:apiserver, in
// system:masters) that RBAC, the node authorizer's graph of pods and
// token checks read instead of storage.
type authStack struct {
	authenticators []auth.Authenticator
	authorizers    []auth.Authorizer
	validators     []admission.Validator
	issuer         *auth.ServiceAccountTokens
	audit          *api.Auditor
	auditFile      *os.File

	factory     informers.SharedInformerFactory
	rbac        *rbac.Authorizer
	nodeGraph   *node.Graph
	graphSynced cache.InformerSynced
	aggregation *rbac.AggregationController

	stopInformers context.CancelFunc
	wg            sync.WaitGroup
}

// newAuthStack builds the stack for an API server at host; nothing runs
// until start.
func (s *Server) newAuthStack(ca *pki.CA, pkiDir, host string) (*authStack, error) {
	kp, err := ca.LoadOrCreateClient(pkiDir, "apiserver-loopback", auth.UserAPIServer, []string{auth.GroupMasters})
	if err != nil {
		return nil, fmt.Errorf("loopback credential: %w", err)
	}
	loopback, err := kubernetes.NewForConfig(&rest.Config{
		Host:            host,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca.CertPEM, CertData: kp.CertPEM, KeyData: kp.KeyPEM},
		QPS:             -1,
		UserAgent:       "minikd-loopback",
	})
	if err != nil {
		return nil, fmt.Errorf("loopback client: %w", err)
	}
	key, err := auth.LoadOrCreateSigningKey(filepath.Join(pkiDir, "sa.key"))
	if err != nil {
		return nil, err
	}
	st := &authStack{factory: informers.NewSharedInformerFactory(loopback, 0), nodeGraph: node.NewGraph()}
	getter := auth.NewInformerGetter(st.factory, loopback)
	st.issuer, err = auth.NewServiceAccountTokens(auth.ServiceAccountTokensConfig{
		Key: key, Getter: getter,
	})
	if err != nil {
		return nil, err
	}
	tokens := &auth.BearerTokenAuthenticator{}
	if s.files.tokens != nil {
		tokens.Tokens = append(tokens.Tokens, s.files.tokens)
	}
	tokens.Tokens = append(tokens.Tokens, st.issuer)
	st.authenticators = []auth.Authenticator{auth.NewClientCertAuthenticator(ca.Pool()), tokens}

	st.rbac = rbac.New(st.factory)
	if st.graphSynced, err = st.nodeGraph.Populate(st.factory); err != nil {
		return nil, fmt.Errorf("node authorizer graph: %w", err)
	}
	st.authorizers = []auth.Authorizer{auth.MastersAuthorizer{}, node.NewAuthorizer(st.nodeGraph), st.rbac}
	if s.cfg.AuthorizationMode == AuthorizationAlwaysAllow {
		st.authorizers = []auth.Authorizer{auth.AlwaysAllow{}}
	}
	st.validators = []admission.Validator{
		&rbac.EscalationCheck{Authorizer: auth.Union(st.authorizers), Rules: st.rbac},
		node.Restriction{Pods: getter},
	}
	if st.aggregation, err = rbac.NewAggregationController(st.factory, loopback, s.log.With("component", "clusterrole-aggregation")); err != nil {
		return nil, err
	}

	path := filepath.Join(s.cfg.DataDir, "audit.log")
	if st.auditFile, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	st.audit = api.NewAuditor(st.auditFile, s.files.policy, s.log.With("component", "audit"))
	return st, nil
}

// start reconciles the bootstrap RBAC policy through the API (as admin),
// publishes clientCA, the CA client certificates are verified with, and
// rh, how proxied requests name their user to extension API servers, in
// kube-system/extension-apiserver-authentication, starts the informers
// and returns once they have synced — with the policy in them — and the
// aggregation controller runs.
func (st *authStack) start(ctx context.Context, admin *rest.Config, clientCA []byte, rh *auth.RequestHeader) error {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return fmt.Errorf("bootstrap client: %w", err)
	}
	if err := rbac.Reconcile(ctx, cs); err != nil {
		return err
	}
	if err := auth.EnsureAuthenticationConfigMap(ctx, cs, clientCA, rh); err != nil {
		return err
	}
	ictx, cancel := context.WithCancel(context.Background())
	st.stopInformers = cancel
	st.factory.Start(ictx.Done())
	sctx, done := context.WithTimeout(ctx, 30*time.Second)
	defer done()
	if !syncwait.Synced(sctx, st.rbac.HasSynced, st.graphSynced) {
		return fmt.Errorf("rbac and node authorizer informers did not sync")
	}
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		st.aggregation.Run(ictx)
	}()
	return nil
}

// stop stops the informers and the aggregation controller (before the API
// server stops, so that their watches do not hold it). Safe to call twice,
// or without start.
func (st *authStack) stop() {
	if st.stopInformers != nil {
		st.stopInformers()
	}
	st.factory.Shutdown()
	st.wg.Wait()
}

// close flushes and closes the audit log, once no request is served.
func (st *authStack) close() {
	st.audit.Close()
	_ = st.auditFile.Close()
}
