package tables

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// APIService is kube-aggregator's APIService table: the Service is
// "Local" for a group version the API server serves itself, otherwise
// namespace/name; Available is the Available condition's status, with
// its reason in parentheses unless True ("Unknown" without one).
var APIService = kindTable(
	[]metav1.TableColumnDefinition{
		nameColumn(),
		col("Service", "string", "The reference to the service that hosts this API endpoint."),
		col("Available", "string", "Whether this service is available."),
		ageColumn(),
	},
	func(as *apiregistrationv1.APIService, now time.Time) []interface{} {
		service := "Local"
		if s := as.Spec.Service; s != nil {
			service = s.Namespace + "/" + s.Name
		}
		status := string(apiregistrationv1.ConditionUnknown)
		for _, c := range as.Status.Conditions {
			if c.Type != apiregistrationv1.Available {
				continue
			}
			switch {
			case c.Status == apiregistrationv1.ConditionTrue, c.Reason == "":
				status = string(c.Status)
			default:
				status = fmt.Sprintf("%s (%s)", c.Status, c.Reason)
			}
			break
		}
		return []interface{}{as.Name, service, status, age(as.CreationTimestamp, now)}
	},
)
