package registry

import "k8s.io/apimachinery/pkg/runtime/schema"

// strategyFor returns the strategy of a kind.
func strategyFor(gk schema.GroupKind) Strategy {
	switch gk {
	case schema.GroupKind{Kind: "ConfigMap"}, schema.GroupKind{Kind: "Secret"},
		schema.GroupKind{Kind: "ServiceAccount"}, schema.GroupKind{Kind: "Event"},
		schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}:
		return Strategy{NoGeneration: true, KeepStatusOnCreate: true}
	}
	return Strategy{}
}
