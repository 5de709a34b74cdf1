// Package all lists every controller minikd can run, by the names
// kube-controller-manager gives them.
package all

import "minik/internal/controllers"

// Controllers returns the known controllers by name.
func Controllers() map[string]controllers.Constructor {
	return map[string]controllers.Constructor{}
}
