package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"minik/internal/pki"
)

// UserKubeconfigOptions are the options of `minikd kubeconfig`.
type UserKubeconfigOptions struct {
	// DataDir is the data dir of the minikd whose CA signs. Required.
	DataDir string
	// User is the user name (the certificate's CN). Required.
	User string
	// Groups are the user's groups (the certificate's O).
	Groups []string
	// TTL is how long the certificate is valid. Required, positive.
	TTL time.Duration
	// Server is the API server's URL; empty means the one of the data
	// dir's admin kubeconfig.
	Server string
}

// UserKubeconfig signs a client certificate for a user with the data
// dir's CA and returns a kubeconfig using it (the cluster named as in the
// admin kubeconfig, "minik" by default; user and context named after the
// user, namespace "default"). The credential is
// not stored anywhere: the kubeconfig is all there is of it.
func UserKubeconfig(o UserKubeconfigOptions) ([]byte, error) {
	switch {
	case o.User == "":
		return nil, errors.New("--user is required")
	case o.TTL <= 0:
		return nil, fmt.Errorf("--ttl %v: must be positive", o.TTL)
	case o.DataDir == "":
		return nil, errors.New("--data-dir is required")
	}
	pkiDir := filepath.Join(o.DataDir, "pki")
	if _, err := os.Stat(filepath.Join(pkiDir, "ca.crt")); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--data-dir %s: no CA in %s (start minikd on this data dir first)", o.DataDir, pkiDir)
	}
	ca, err := pki.LoadOrCreateCA(pkiDir)
	if err != nil {
		return nil, err
	}
	server, cluster := o.Server, defaultClusterName(0)
	if cf, known, err := readClusterFile(o.DataDir); err == nil && known {
		cluster = cf.Name
	}
	if server == "" {
		admin, err := clientcmd.LoadFromFile(filepath.Join(o.DataDir, "kubeconfig"))
		if err != nil {
			return nil, fmt.Errorf("--data-dir %s: read the admin kubeconfig for the server's address (or give --server): %w", o.DataDir, err)
		}
		if c, ok := admin.Contexts[admin.CurrentContext]; ok && admin.Clusters[c.Cluster] != nil {
			server, cluster = admin.Clusters[c.Cluster].Server, c.Cluster
		}
		if server == "" {
			return nil, fmt.Errorf("--data-dir %s: the admin kubeconfig names no server (give --server)", o.DataDir)
		}
	}
	kp, err := ca.SignClient(o.User, o.Groups, o.TTL)
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	ctxName := o.User + "@" + cluster
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca.CertPEM}
	cfg.AuthInfos[o.User] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts[ctxName] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: o.User, Namespace: "default"}
	cfg.CurrentContext = ctxName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return data, nil
}
