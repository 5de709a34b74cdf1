package server

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"minik/internal/auth"
	"minik/internal/controllers"
	"minik/internal/controllers/all"
	"minik/internal/pki"
)

// component is a long-running piece started once the API serves. Start
// blocks until ctx is done.
type component struct {
	name  string
	start func(ctx context.Context) error
}

// identity returns base's configuration with a client certificate for
// user and groups, kept in the PKI dir under file.
func identity(base *rest.Config, ca *pki.CA, pkiDir, file, user string, groups []string) (*rest.Config, error) {
	kp, err := ca.LoadOrCreateClient(pkiDir, file, user, groups)
	if err != nil {
		return nil, fmt.Errorf("credential for %s: %w", user, err)
	}
	c := rest.CopyConfig(base)
	c.CertData, c.KeyData = kp.CertPEM, kp.KeyPEM
	return c, nil
}

// components returns, in start order, what runs beside the API server:
// the controller manager (then, as they land, the scheduler, the nodes and
// the data plane). Each is a client of the API with its own identity.
func (s *Server) components(ca *pki.CA, pkiDir string, base *rest.Config) ([]component, error) {
	var out []component
	if s.cfg.NoControllers {
		return out, nil
	}
	ctrlCfg, err := identity(base, ca, pkiDir, "controller-manager", auth.UserControllerManager, nil)
	if err != nil {
		return nil, err
	}
	mgr, err := controllers.NewManager(controllers.Config{
		RESTConfig:  ctrlCfg,
		Controllers: s.cfg.Controllers,
		Known:       all.Controllers(),
		Workers:     s.cfg.ControllerWorkers,
		LeaderElect: s.cfg.LeaderElect,
		Logger:      s.log.With("component", "controller-manager"),
	})
	if err != nil {
		return nil, err
	}
	out = append(out, component{name: "controller-manager", start: mgr.Start})
	return out, nil
}
