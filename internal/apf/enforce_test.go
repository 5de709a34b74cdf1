package apf_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"minik/internal/testserver"
)

// TestPriorityLevelEnforced gives a test user a priority level of its own
// (one nominal share, Reject, no borrowing), fills its seats with creates
// whose bodies stop half way, and sees the next request of the user
// answered 429 as kube answers it, while the exempt admin and another
// user's level are served; deleting the FlowSchema gives the user back to
// global-default without a restart.
func TestPriorityLevelEnforced(t *testing.T) {
	srv := testserver.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	const user, level, schema = "apf-tester", "apf-test-level", "apf-test-schema"

	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "apf-tester-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pl, err := admin.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: level},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1), LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := admin.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: schema},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         100,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					Namespaces: []string{"*"}, ClusterScope: true}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	tester := impersonating(t, srv.RESTConfig, user)
	base := srv.RESTConfig.Host + "/api/v1/namespaces/default/configmaps"
	post := func(query string, body io.Reader) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, base+query, body)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		return tester.Do(req)
	}
	probe := func(i int) (*http.Response, string) {
		t.Helper()
		resp, err := post("?dryRun=All", strings.NewReader(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe-%d"}}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	t.Run("a new flowschema and priority level take effect without restart", func(t *testing.T) {
		i := 0
		waitFor(t, "the tester's requests in "+level, func(ctx context.Context) (bool, error) {
			i++
			resp, body := probe(i)
			// The authorizer's cache holds the new binding a moment later.
			if resp.StatusCode == http.StatusForbidden {
				return false, nil
			}
			if resp.StatusCode != http.StatusCreated {
				return false, fmt.Errorf("probe = %d %s", resp.StatusCode, body)
			}
			return resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) == string(fs.UID) &&
				resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID) == string(pl.UID), nil
		})
	})

	t.Run("a watch of the user holds a seat only until it is initialized", func(t *testing.T) {
		resp, err := tester.Get(base + "?watch=true")
		if err != nil {
			t.Fatal(err)
		}
		// It stays open until the test ends.
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK || resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID) != string(pl.UID) {
			t.Fatalf("watch = %d, headers %v", resp.StatusCode, resp.Header)
		}
		waitFor(t, "no request of "+level+" executing", func(context.Context) (bool, error) {
			return gauge(t, admin, "apiserver_flowcontrol_current_executing_requests", map[string]string{"priority_level": level}) == 0, nil
		})
	})

	seats := gauge(t, admin, "apiserver_flowcontrol_nominal_limit_seats", map[string]string{"priority_level": level})
	if seats < 1 {
		t.Fatalf("nominal limit of %s = %v seats", level, seats)
	}
	t.Logf("%s has %v seats", level, seats)

	// Creates that hold a seat each: their bodies stop half way.
	type held struct {
		w    *io.PipeWriter
		code chan int
	}
	var holds []held
	for i := range int(seats) {
		pr, pw := io.Pipe()
		h := held{w: pw, code: make(chan int, 1)}
		go func() {
			resp, err := post("", pr)
			if err != nil {
				h.code <- 0
				return
			}
			resp.Body.Close()
			h.code <- resp.StatusCode
		}()
		if _, err := fmt.Fprintf(pw, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held-%d"`, i); err != nil {
			t.Fatal(err)
		}
		holds = append(holds, h)
		waitFor(t, fmt.Sprintf("%d held creates executing", i+1), func(context.Context) (bool, error) {
			return gauge(t, admin, "apiserver_flowcontrol_current_executing_requests", map[string]string{"priority_level": level}) == float64(i+1), nil
		})
	}
	release := func() {
		for _, h := range holds {
			if _, err := io.WriteString(h.w, `}}`); err != nil {
				t.Fatalf("a held create's body: %v", err)
			}
			h.w.Close()
		}
		for _, h := range holds {
			if code := <-h.code; code != http.StatusCreated {
				t.Errorf("held create = %d", code)
			}
		}
		holds = nil
	}
	t.Cleanup(func() {
		if holds != nil {
			release()
		}
	})

	t.Run("with its seats taken the user's next request gets 429 with Retry-After", func(t *testing.T) {
		resp, body := probe(-1)
		if resp.StatusCode != http.StatusTooManyRequests || body != "Too many requests, please try again later.\n" {
			t.Fatalf("probe = %d %q", resp.StatusCode, body)
		}
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
		}
		if resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) != string(fs.UID) ||
			resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID) != string(pl.UID) {
			t.Errorf("429 headers %v", resp.Header)
		}
		t.Run("which client-go reads as TooManyRequests with the delay", func(t *testing.T) {
			cfg := rest.CopyConfig(srv.RESTConfig)
			cfg.Impersonate.UserName = user
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/configmaps").MaxRetries(0).Do(ctx).Error()
			if !apierrors.IsTooManyRequests(err) {
				t.Fatalf("list = %v, want TooManyRequests", err)
			}
			if s, ok := apierrors.SuggestsClientDelay(err); !ok || s < 1 {
				t.Errorf("retryAfterSeconds = %d, %v", s, ok)
			}
		})
		t.Run("and is counted as rejected", func(t *testing.T) {
			n := gauge(t, admin, "apiserver_flowcontrol_rejected_requests_total",
				map[string]string{"priority_level": level, "flow_schema": schema, "reason": "concurrency-limit"})
			if n < 2 {
				t.Errorf("apiserver_flowcontrol_rejected_requests_total = %v, want 2 at least", n)
			}
		})
	})
	t.Run("while the exempt admin is served", func(t *testing.T) {
		if _, err := admin.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("and another user's level is unaffected", func(t *testing.T) {
		alice := impersonating(t, srv.RESTConfig, "alice")
		resp, err := alice.Get(srv.RESTConfig.Host + "/version")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/version as alice = %d", resp.StatusCode)
		}
	})

	t.Run("the held creates finish once their bodies do, and the user is served again", func(t *testing.T) {
		release()
		i := 1000
		waitFor(t, "a probe served", func(context.Context) (bool, error) {
			i++
			resp, body := probe(i)
			if resp.StatusCode == http.StatusTooManyRequests {
				// The creates' final seats (their watchers' notification)
				// are held a moment after they answered.
				return false, nil
			}
			if resp.StatusCode != http.StatusCreated {
				return false, fmt.Errorf("probe = %d %s", resp.StatusCode, body)
			}
			return true, nil
		})
	})

	t.Run("deleting the flowschema gives the user back to global-default", func(t *testing.T) {
		if err := admin.FlowcontrolV1().FlowSchemas().Delete(ctx, schema, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		gd, err := admin.FlowcontrolV1().FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		i := 2000
		waitFor(t, "the tester's requests in global-default", func(context.Context) (bool, error) {
			i++
			resp, _ := probe(i)
			return resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) == string(gd.UID), nil
		})
	})
}

// impersonating returns an HTTP client of the admin impersonating user
// (an authenticated user of no group).
func impersonating(t *testing.T, admin *rest.Config, user string) *http.Client {
	t.Helper()
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate.UserName = user
	cfg.Impersonate.Groups = []string{"system:authenticated"}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

// gauge reads the server's /metrics and returns the sum of the samples of
// family name whose labels include labels.
func gauge(t *testing.T, cs kubernetes.Interface, name string, labels map[string]string) float64 {
	t.Helper()
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	mf, ok := families[name]
	if !ok {
		return 0
	}
	sum := 0.0
	for _, m := range mf.GetMetric() {
		if hasLabels(m, labels) {
			switch {
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}
