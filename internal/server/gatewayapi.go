package server

import (
	"context"
	"fmt"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minik/internal/gatewayapi/crds"
)

// installGatewayAPI installs the Gateway API's standard-channel CRDs and
// their safe-upgrades ValidatingAdmissionPolicy as the admin, as k3s
// installs its bundled manifests (see crds.Install: absent objects are
// created, older ones updated, newer ones kept). It is ready once the
// objects are written, without waiting for the definitions to be
// Established (the "crd" controller does that; the data plane waits for
// it). A write the API refuses is logged and minikd runs on with the
// Gateway API as it is installed.
func (s *Server) installGatewayAPI(ctx context.Context, ready func()) error {
	bundle, err := crds.Load()
	if err != nil {
		return err
	}
	cfg := rest.CopyConfig(s.adminConfig)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("gateway api client: %w", err)
	}
	// An idle HTTP/2 connection would hold a graceful shutdown for a second.
	defer hc.CloseIdleConnections()
	xc, err := apiextensionsclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return fmt.Errorf("gateway api client: %w", err)
	}
	kc, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return fmt.Errorf("gateway api client: %w", err)
	}
	outcomes, err := crds.Install(ctx, crds.Clients{APIExtensions: xc, Kubernetes: kc}, bundle)
	if err != nil && ctx.Err() != nil {
		return nil
	}
	if err != nil {
		s.log.Warn("gateway api not installed", "version", crds.BundleVersion, "err", err)
	}
	for _, o := range outcomes {
		if o.Action != crds.Kept || o.Installed != crds.BundleVersion {
			s.log.Info("gateway api", "kind", o.Kind, "name", o.Name, "action", o.Action, "installed", o.Installed, "bundle", crds.BundleVersion)
		}
	}
	return readyUntilDone(ctx, ready)
}
