package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// NewCmdAuth returns the auth command with can-i and whoami.
func NewCmdAuth(f *Factory, streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:                   "auth",
		DisableFlagsInUseLine: true,
		Short:                 "Inspect authorization",
		Long:                  "Inspect authorization.",
		RunE:                  subcommandRun(streams.ErrOut),
	}
	cmd.AddCommand(NewCmdCanI(f, streams), NewCmdWhoAmI(f, streams))
	return cmd
}

// CanIOptions are the flags and arguments of auth can-i: either one access
// question (a verb on a resource or a non-resource URL) or, with List, the
// table of everything the user may do in a namespace.
type CanIOptions struct {
	AllNamespaces bool
	Quiet         bool
	NoHeaders     bool
	List          bool
	Subresource   string

	// Filled by complete.
	Namespace      string
	Verb           string
	Resource       schema.GroupVersionResource
	ResourceName   string
	NonResourceURL string

	Streams IOStreams
}

// canIVerbs are the verbs kubectl knows, for its "not a known verb" warning.
var (
	canIResourceVerbs    = sets.New("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "use", "bind", "impersonate", "*", "approve", "sign", "escalate", "attest")
	canINonResourceVerbs = sets.New("get", "put", "post", "head", "options", "delete", "patch", "*")
	// canIUndiscoverable are resources the server authorizes that discovery
	// does not list (the targets of impersonate): no warning for them.
	canIUndiscoverable = sets.New("users", "groups")
)

// NewCmdCanI returns the auth can-i command.
func NewCmdCanI(f *Factory, streams IOStreams) *cobra.Command {
	o := &CanIOptions{Streams: streams}
	cmd := &cobra.Command{
		Use:                   "can-i VERB [TYPE | TYPE/NAME | NONRESOURCEURL]",
		DisableFlagsInUseLine: true,
		Short:                 "Check whether an action is allowed",
		Long: `Check whether an action is allowed.

 VERB is a logical Kubernetes API verb like 'get', 'list', 'watch', 'delete', etc. TYPE is a Kubernetes resource. Shortcuts and groups will be resolved. NONRESOURCEURL is a partial URL that starts with "/". NAME is the name of a particular Kubernetes resource. This command pairs nicely with impersonation. See --as global flag.`,
		Example: `  # Check to see if I can create pods in any namespace
  minikctl auth can-i create pods --all-namespaces

  # Check to see if I can list deployments in my current namespace
  minikctl auth can-i list deployments.apps

  # Check to see if service account "foo" of namespace "dev" can list pods in the namespace "prod"
  # You must be allowed to use impersonation for the global option "--as"
  minikctl auth can-i list pods --as=system:serviceaccount:dev:foo -n prod

  # Check to see if I can do everything in my current namespace ("*" means all)
  minikctl auth can-i '*' '*'

  # Check to see if I can get the job named "bar" in namespace "foo"
  minikctl auth can-i list jobs.batch/bar -n foo

  # Check to see if I can read pod logs
  minikctl auth can-i get pods --subresource=log

  # Check to see if I can access the URL /logs/
  minikctl auth can-i get /logs/

  # List all allowed actions in namespace "foo"
  minikctl auth can-i --list --namespace=foo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(f, cmd, args); err != nil {
				return err
			}
			dc, err := f.Discovery()
			if err != nil {
				return err
			}
			if err := o.validate(dc); err != nil {
				return err
			}
			cs, err := f.KubernetesClientSet()
			if err != nil {
				return err
			}
			if o.List {
				return runAccessList(cmd.Context(), o, cs.AuthorizationV1())
			}
			allowed, err := runAccessCheck(cmd.Context(), o, cs.AuthorizationV1())
			if err == nil && !allowed {
				return ErrExit
			}
			return err
		},
	}
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "If true, check the specified action in all namespaces.")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "If true, suppress output and just return the exit code.")
	cmd.Flags().StringVar(&o.Subresource, "subresource", "", "SubResource such as pod/log or deployment/scale")
	cmd.Flags().BoolVar(&o.List, "list", false, "If true, prints all allowed actions.")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "If true, prints allowed actions without headers")
	return cmd
}

// complete reads the arguments, resolving the resource through discovery
// (warning, as kubectl, about one the server does not have), and the
// namespace.
func (o *CanIOptions) complete(f *Factory, cmd *cobra.Command, args []string) error {
	if o.List {
		if len(args) != 0 {
			return errors.New("list option must be specified with no arguments")
		}
	} else {
		if o.Quiet {
			o.Streams.Out = io.Discard
		}
		if len(args) != 2 {
			return fmt.Errorf("you must specify two arguments: verb resource or verb resource/resourceName.\nSee '%s -h' for help and examples.", cmd.CommandPath())
		}
		o.Verb = args[0]
		if strings.HasPrefix(args[1], "/") {
			o.NonResourceURL = args[1]
		} else {
			resource, name, _ := strings.Cut(args[1], "/")
			mapper, err := f.ToRESTMapper()
			if err != nil {
				return err
			}
			o.Resource = o.resourceFor(mapper, resource)
			o.ResourceName = name
		}
	}
	o.Namespace = metav1.NamespaceAll
	if !o.AllNamespaces {
		ns, _, err := f.Namespace()
		if err != nil {
			return err
		}
		o.Namespace = ns
	}
	return nil
}

// resourceFor resolves a TYPE argument ("deploy", "jobs.batch",
// "deployments.v1.apps"); one discovery does not know is asked about as
// given, after a warning.
func (o *CanIOptions) resourceFor(mapper meta.RESTMapper, arg string) schema.GroupVersionResource {
	if arg == "*" {
		return schema.GroupVersionResource{Resource: arg}
	}
	full, gr := schema.ParseResourceArg(strings.ToLower(arg))
	var gvr schema.GroupVersionResource
	if full != nil {
		gvr, _ = mapper.ResourceFor(*full)
	}
	if !gvr.Empty() {
		return gvr
	}
	gvr, err := mapper.ResourceFor(gr.WithVersion(""))
	if err == nil {
		return gvr
	}
	if !canIUndiscoverable.Has(gr.String()) {
		if gr.Group == "" {
			o.warn("the server doesn't have a resource type '%s'\n", gr.Resource)
		} else {
			o.warn("the server doesn't have a resource type '%s' in group '%s'\n", gr.Resource, gr.Group)
		}
	}
	return schema.GroupVersionResource{Resource: arg}
}

// validate rejects flags that do not go together and warns, as kubectl,
// about unknown verbs and about a namespace given to a cluster-scoped
// resource.
func (o *CanIOptions) validate(dc discovery.DiscoveryInterface) error {
	if o.List {
		if o.Quiet || o.AllNamespaces || o.Subresource != "" {
			return errors.New("list option can't be specified with neither quiet, all-namespaces nor subresource options")
		}
		return nil
	}
	if o.NonResourceURL != "" {
		if o.Subresource != "" {
			return errors.New("--subresource can not be used with NonResourceURL")
		}
		if !canINonResourceVerbs.Has(o.Verb) {
			o.warn("verb '%s' is not a known verb\n", o.Verb)
		}
	} else if !o.Resource.Empty() && !o.AllNamespaces {
		if namespaced, err := isNamespacedResource(dc, o.Resource); err == nil && !namespaced {
			if o.Resource.Group == "" {
				o.warn("resource '%s' is not namespace scoped\n", o.Resource.Resource)
			} else {
				o.warn("resource '%s' is not namespace scoped in group '%s'\n", o.Resource.Resource, o.Resource.Group)
			}
		}
		if !canIResourceVerbs.Has(o.Verb) {
			o.warn("verb '%s' is not a known verb\n", o.Verb)
		}
	}
	if o.NoHeaders {
		return errors.New("--no-headers cannot be set without --list specified")
	}
	return nil
}

// warn prints a warning as kubectl's warning printer does: the message
// (which, in can-i, ends in a newline of its own) and a newline.
func (o *CanIOptions) warn(format string, args ...any) {
	fmt.Fprintf(o.Streams.ErrOut, "Warning: "+format+"\n", args...)
}

// isNamespacedResource asks discovery whether gvr is namespaced; an
// unresolved resource (no version) is an error.
func isNamespacedResource(dc discovery.DiscoveryInterface, gvr schema.GroupVersionResource) (bool, error) {
	if gvr.Resource == "*" {
		return true, nil
	}
	list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return true, err
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return r.Namespaced, nil
		}
	}
	return false, fmt.Errorf("the server doesn't have a resource type '%s' in group '%s'", gvr.Resource, gvr.Group)
}

// runAccessCheck asks one question with a SelfSubjectAccessReview and
// prints "yes", or "no" with the server's reason.
func runAccessCheck(ctx context.Context, o *CanIOptions, client authorizationv1client.AuthorizationV1Interface) (bool, error) {
	spec := authorizationv1.SelfSubjectAccessReviewSpec{}
	if o.NonResourceURL != "" {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Verb: o.Verb, Path: o.NonResourceURL}
	} else {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
			Namespace: o.Namespace, Verb: o.Verb, Group: o.Resource.Group, Resource: o.Resource.Resource,
			Subresource: o.Subresource, Name: o.ResourceName,
		}
	}
	resp, err := client.SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	if resp.Status.Allowed {
		fmt.Fprintln(o.Streams.Out, "yes")
		return true, nil
	}
	fmt.Fprint(o.Streams.Out, "no")
	if resp.Status.Reason != "" {
		fmt.Fprintf(o.Streams.Out, " - %v", resp.Status.Reason)
	}
	if resp.Status.EvaluationError != "" {
		fmt.Fprintf(o.Streams.Out, " - %v", resp.Status.EvaluationError)
	}
	fmt.Fprintln(o.Streams.Out)
	return false, nil
}

// runAccessList prints the rules of a SelfSubjectRulesReview as kubectl's
// table: one line per resource (or URL) and resource name, with its verbs.
func runAccessList(ctx context.Context, o *CanIOptions, client authorizationv1client.AuthorizationV1Interface) error {
	review, err := client.SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: o.Namespace},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if review.Status.Incomplete {
		o.warn("the list may be incomplete: %v", review.Status.EvaluationError)
	}
	w := NewTabWriter(o.Streams.Out)
	defer w.Flush()
	if !o.NoHeaders {
		fmt.Fprintf(w, "%s\n", strings.Join([]string{"Resources", "Non-Resource URLs", "Resource Names", "Verbs"}, "\t"))
	}
	for _, r := range accessRules(review.Status) {
		fmt.Fprintf(w, "%s\t%v\t%v\t%v\n", resourceGroup(r.Resources, r.APIGroups), r.NonResourceURLs, r.ResourceNames, r.Verbs)
	}
	return nil
}

// accessRules turns a rules review into the lines of can-i --list, as
// kubectl does: every rule broken down to one group, resource, resource
// name (or URL) and verb; the resource lines merged back per group,
// resource and name, their verbs in the order first seen; all sorted by
// the rules' string form.
func accessRules(status authorizationv1.SubjectRulesReviewStatus) []rbacv1.PolicyRule {
	type key struct {
		group, resource string
		named           bool
		name            string
	}
	var rules []rbacv1.PolicyRule
	merged := map[key]int{} // index in rules
	add := func(k key, r rbacv1.PolicyRule) {
		i, ok := merged[k]
		if !ok {
			merged[k] = len(rules)
			rules = append(rules, r)
			return
		}
		if !sets.New(rules[i].Verbs...).Has(r.Verbs[0]) {
			rules[i].Verbs = append(rules[i].Verbs, r.Verbs[0])
		}
	}
	for _, rr := range status.ResourceRules {
		for _, group := range rr.APIGroups {
			for _, resource := range rr.Resources {
				for _, verb := range rr.Verbs {
					rule := rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}}
					if len(rr.ResourceNames) == 0 {
						add(key{group: group, resource: resource}, rule)
						continue
					}
					for _, name := range rr.ResourceNames {
						rule := rule
						rule.ResourceNames = []string{name}
						add(key{group: group, resource: resource, named: true, name: name}, rule)
					}
				}
			}
		}
	}
	// Non-resource lines are never merged: one per URL and verb.
	for _, nr := range status.NonResourceRules {
		for _, url := range nr.NonResourceURLs {
			for _, verb := range nr.Verbs {
				rules = append(rules, rbacv1.PolicyRule{NonResourceURLs: []string{url}, Verbs: []string{verb}})
			}
		}
	}
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].String() < rules[j].String() })
	return rules
}

// resourceGroup names a resource with its group ("deployments.apps",
// "pods/log", "*.*"), as kubectl's rule tables do.
func resourceGroup(resources, groups []string) string {
	if len(resources) == 0 {
		return ""
	}
	resource, sub, hasSub := strings.Cut(resources[0], "/")
	if len(groups) > 0 && groups[0] != "" {
		resource += "." + groups[0]
	}
	if hasSub {
		resource += "/" + sub
	}
	return resource
}

// WhoAmIOptions are the inputs of auth whoami.
type WhoAmIOptions struct {
	PrintFlags PrintFlags
	Streams    IOStreams
}

// NewCmdWhoAmI returns the auth whoami command.
func NewCmdWhoAmI(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdWhoAmI(f, streams, runWhoAmI)
}

func newCmdWhoAmI(f *Factory, streams IOStreams, run func(context.Context, *Factory, *WhoAmIOptions) error) *cobra.Command {
	o := &WhoAmIOptions{Streams: streams}
	cmd := &cobra.Command{
		Use:                   "whoami",
		DisableFlagsInUseLine: true,
		Short:                 "Experimental: Check self subject attributes",
		Long: `Experimental: Check who you are and your attributes (groups, extra).

        This command is helpful to get yourself aware of the current user attributes,
        especially when dynamic authentication, e.g., token webhook, auth proxy, or OIDC provider,
        is enabled in the Kubernetes cluster.`,
		Example: `  # Get your subject attributes
  minikctl auth whoami

  # Get your subject attributes in JSON format
  minikctl auth whoami -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.PrintFlags.OutputFormat != "" || o.PrintFlags.Template != "" {
				if _, err := o.PrintFlags.ToPrinter(); err != nil {
					return err
				}
			}
			return run(cmd.Context(), f, o)
		},
	}
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

// whoAmI errors are kubectl's.
var (
	errSelfSubjectReviewNotEnabled = errors.New("the selfsubjectreviews API is not enabled in the cluster")
	errSelfSubjectReviewForbidden  = errors.New("the selfsubjectreviews API is not enabled in the cluster or you do not have permission to call it")
)

func runWhoAmI(ctx context.Context, f *Factory, o *WhoAmIOptions) error {
	cs, err := f.KubernetesClientSet()
	if err != nil {
		return err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return errSelfSubjectReviewForbidden
	case apierrors.IsNotFound(err):
		return errSelfSubjectReviewNotEnabled
	case err != nil:
		return fmt.Errorf("create selfsubjectreview: %w", err)
	}
	if o.PrintFlags.OutputFormat != "" || o.PrintFlags.Template != "" {
		review.SetGroupVersionKind(authenticationv1.SchemeGroupVersion.WithKind("SelfSubjectReview"))
		printer, err := o.PrintFlags.ToPrinter()
		if err != nil {
			return err
		}
		return printer.PrintObj(review, o.Streams.Out)
	}
	ui := review.Status.UserInfo
	w := NewTabWriter(o.Streams.Out)
	fmt.Fprintf(w, "ATTRIBUTE\tVALUE\n")
	if ui.Username != "" {
		fmt.Fprintf(w, "Username\t%s\n", ui.Username)
	}
	if ui.UID != "" {
		fmt.Fprintf(w, "UID\t%s\n", ui.UID)
	}
	if len(ui.Groups) > 0 {
		fmt.Fprintf(w, "Groups\t%v\n", ui.Groups)
	}
	keys := make([]string, 0, len(ui.Extra))
	for k := range ui.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "Extra: %s\t%v\n", k, ui.Extra[k])
	}
	return w.Flush()
}
