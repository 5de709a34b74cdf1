package api

import (
	"net/http"

	"minik/internal/promstats"
	"minik/internal/storage"
)

// metricsHandler is the Prometheus /metrics of the process (see package
// promstats), which the chain authorizes as the non-resource URL get
// /metrics, as kube does. It also points apiserver_storage_objects at this server's store, counting
// each built-in resource under its key prefix, and tells the etcd metrics
// the group of each storage name.
func (s *Server) metricsHandler() http.Handler {
	prefixes := map[string]string{}
	groups := map[string]string{}
	for _, h := range s.builtin.handlers {
		gr := h.res.GroupResource()
		if h.storageName != h.res.Name {
			// A view of another resource's storage (events.k8s.io events):
			// counted once, under the resource that owns the keys.
			continue
		}
		prefixes[gr.String()] = storage.Key(h.storageName, "", "")
		if _, seen := groups[h.storageName]; !seen || gr.Group == "" {
			groups[h.storageName] = gr.Group
		}
	}
	promstats.SetResourceGroups(groups)
	promstats.SetStorage(s.store, prefixes)
	return promstats.Handler()
}
