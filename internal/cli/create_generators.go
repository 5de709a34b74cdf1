package cli

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kubectl/pkg/util/hash"
	utilnet "k8s.io/utils/net"
)

// generated is an object a create generator built.
type generated interface {
	runtime.Object
	metav1.Object
}

// newGeneratorCommand returns a create subcommand that builds one object
// from NAME and its flags (build), then creates it (or prints it on a
// client dry run) as kubectl's generators do: in the -n namespace, which
// the object carries only when -n was given, and with errorPrefix before a
// server error ("failed to create quota: ..."), as kubectl's messages.
func newGeneratorCommand(f *Factory, streams IOStreams, cmd *cobra.Command, errorPrefix string, build func(name string) (generated, error)) (*cobra.Command, *CreateOptions) {
	o := &CreateOptions{Streams: streams}
	cmd.DisableFlagsInUseLine = true
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		name, err := generatorName(cmd, args)
		if err != nil {
			return err
		}
		if err := o.complete(); err != nil {
			return err
		}
		obj, err := build(name)
		if err != nil {
			return err
		}
		o.ErrorPrefix = errorPrefix
		return o.createGenerated(cmd.Context(), f, obj)
	}
	o.addFlags(cmd)
	return cmd, o
}

// generatorName is kubectl's NameFromCommandArgs: exactly one NAME before
// any "--".
func generatorName(cmd *cobra.Command, args []string) (string, error) {
	n := cmd.ArgsLenAtDash()
	if n == -1 {
		n = len(args)
	}
	if n != 1 {
		return "", usageErrorf(cmd, "exactly one NAME is required, got %d", n)
	}
	return args[0], nil
}

// newCmdCreateService returns create service with its four types.
func newCmdCreateService(f *Factory, streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "service",
		Aliases: []string{"svc"},
		Short:   "Create a service using a specified subcommand",
		Long:    "Create a service using a specified subcommand.",
		RunE:    subcommandRun(streams.ErrOut),
	}
	cmd.AddCommand(
		newCmdCreateServiceOfType(f, streams, corev1.ServiceTypeClusterIP, "clusterip NAME [--tcp=<port>:<targetPort>] [--dry-run=server|client|none]", "Create a ClusterIP service",
			"  # Create a new ClusterIP service named my-cs\n  minikctl create service clusterip my-cs --tcp=5678:8080\n\n  # Create a new ClusterIP service named my-cs (in headless mode)\n  minikctl create service clusterip my-cs --clusterip=\"None\""),
		newCmdCreateServiceOfType(f, streams, corev1.ServiceTypeNodePort, "nodeport NAME [--tcp=port:targetPort] [--dry-run=server|client|none]", "Create a NodePort service",
			"  # Create a new NodePort service named my-ns\n  minikctl create service nodeport my-ns --tcp=5678:8080"),
		newCmdCreateServiceOfType(f, streams, corev1.ServiceTypeLoadBalancer, "loadbalancer NAME [--tcp=port:targetPort] [--dry-run=server|client|none]", "Create a LoadBalancer service",
			"  # Create a new LoadBalancer service named my-lbs\n  minikctl create service loadbalancer my-lbs --tcp=5678:8080"),
		newCmdCreateServiceOfType(f, streams, corev1.ServiceTypeExternalName, "externalname NAME --external-name external.name [--dry-run=server|client|none]", "Create an ExternalName service",
			"  # Create a new ExternalName service named my-ns\n  minikctl create service externalname my-ns --external-name bar.com"),
	)
	return cmd
}

func newCmdCreateServiceOfType(f *Factory, streams IOStreams, typ corev1.ServiceType, use, short, example string) *cobra.Command {
	var tcp []string
	var clusterIP, externalName string
	var nodePort int
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{Use: use, Short: short, Long: short + " with the specified name.", Example: example},
		fmt.Sprintf("failed to create %s service:", typ), func(name string) (generated, error) {
			if clusterIP == corev1.ClusterIPNone && typ != corev1.ServiceTypeClusterIP {
				return nil, errors.New("ClusterIP=None can only be used with ClusterIP service type")
			}
			if clusterIP != corev1.ClusterIPNone && len(tcp) == 0 && typ != corev1.ServiceTypeExternalName {
				return nil, errors.New("at least one tcp port specifier must be provided")
			}
			if typ == corev1.ServiceTypeExternalName {
				if errs := validation.IsDNS1123Subdomain(externalName); len(errs) != 0 {
					return nil, fmt.Errorf("invalid service external name %s", externalName)
				}
			}
			ports := []corev1.ServicePort{}
			for _, spec := range tcp {
				port, target, err := parseServicePorts(spec)
				if err != nil {
					return nil, err
				}
				ports = append(ports, corev1.ServicePort{Name: strings.ReplaceAll(spec, ":", "-"), Port: port, TargetPort: target, Protocol: corev1.ProtocolTCP, NodePort: int32(nodePort)})
			}
			svc := &corev1.Service{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
				Spec:       corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}, Ports: ports, ExternalName: externalName, ClusterIP: clusterIP},
			}
			return svc, nil
		})
	cmd.Flags().StringSliceVar(&tcp, "tcp", nil, "Port pairs can be specified as '<port>:<targetPort>'.")
	switch typ {
	case corev1.ServiceTypeClusterIP:
		cmd.Flags().StringVar(&clusterIP, "clusterip", "", "Assign your own ClusterIP or set to 'None' for a 'headless' service (no loadbalancing).")
	case corev1.ServiceTypeNodePort:
		cmd.Flags().IntVar(&nodePort, "node-port", 0, "Port used to expose the service on each node in a cluster.")
	case corev1.ServiceTypeExternalName:
		cmd.Flags().StringVar(&externalName, "external-name", "", "External name of service")
		_ = cmd.MarkFlagRequired("external-name")
	}
	return cmd
}

// parseServicePorts reads "port[:targetPort]" as kubectl does.
func parseServicePorts(spec string) (int32, intstr.IntOrString, error) {
	parts := strings.Split(spec, ":")
	p, err := utilnet.ParsePort(parts[0], true)
	if err != nil {
		return 0, intstr.FromInt32(0), err
	}
	port := int32(p)
	if len(parts) == 1 {
		return port, intstr.FromInt32(port), nil
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		if errs := validation.IsValidPortName(parts[1]); len(errs) != 0 {
			return 0, intstr.FromInt32(0), errors.New(strings.Join(errs, ","))
		}
		return port, intstr.FromString(parts[1]), nil
	}
	if errs := validation.IsValidPortNum(n); len(errs) != 0 {
		return 0, intstr.FromInt32(0), errors.New(strings.Join(errs, ","))
	}
	return port, intstr.FromInt32(int32(n)), nil
}

// newCmdCreateSecretTLS returns create secret tls.
func newCmdCreateSecretTLS(f *Factory, streams IOStreams) *cobra.Command {
	var certFile, keyFile string
	var appendHash bool
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:   "tls NAME --cert=path/to/cert/file --key=path/to/key/file [--dry-run=server|client|none]",
		Short: "Create a TLS secret",
		Long:  "Create a TLS secret from the given public/private key pair.\n\n The public/private key pair must exist beforehand. The public key certificate must be .PEM encoded and match the given private key.",
		Example: `  # Create a new TLS secret named tls-secret with the given key pair
  minikctl create secret tls tls-secret --cert=path/to/tls.crt --key=path/to/tls.key`,
	}, "failed to create secret", func(name string) (generated, error) {
		if keyFile == "" || certFile == "" {
			return nil, errors.New("key and cert must be specified")
		}
		cert, err := readGeneratorFile(certFile)
		if err != nil {
			return nil, err
		}
		key, err := readGeneratorFile(keyFile)
		if err != nil {
			return nil, err
		}
		if _, err := tls.X509KeyPair(cert, key); err != nil {
			return nil, err
		}
		s := newSecret(name, corev1.SecretTypeTLS)
		s.Data[corev1.TLSCertKey] = cert
		s.Data[corev1.TLSPrivateKeyKey] = key
		return s, appendSecretHash(s, appendHash)
	})
	cmd.Flags().StringVar(&certFile, "cert", "", "Path to PEM encoded public key certificate.")
	cmd.Flags().StringVar(&keyFile, "key", "", "Path to private key associated with given certificate.")
	cmd.Flags().BoolVar(&appendHash, "append-hash", false, "Append a hash of the secret to its name.")
	return cmd
}

// appendSecretHash appends kubectl's content hash to the secret's name
// when asked (--append-hash).
func appendSecretHash(s *corev1.Secret, appendHash bool) error {
	if !appendHash {
		return nil
	}
	h, err := hash.SecretHash(s)
	if err != nil {
		return err
	}
	s.Name = fmt.Sprintf("%s-%s", s.Name, h)
	return nil
}

func readGeneratorFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("Cannot read file %v, %v", path, err)
	}
	return b, nil
}

func newSecret(name string, typ corev1.SecretType) *corev1.Secret {
	return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: name}, Type: typ, Data: map[string][]byte{}}
}

// dockerConfigJSON is the .dockerconfigjson document kubectl writes.
type dockerConfigJSON struct {
	Auths map[string]dockerConfigEntry `json:"auths"`
}

type dockerConfigEntry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Email    string `json:"email,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

// newCmdCreateSecretDockerRegistry returns create secret docker-registry.
func newCmdCreateSecretDockerRegistry(f *Factory, streams IOStreams) *cobra.Command {
	var username, password, email, server string
	var files []string
	var appendHash bool
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:   "docker-registry NAME --docker-username=user --docker-password=password --docker-email=email [--docker-server=string] [--from-file=[key=]source] [--dry-run=server|client|none]",
		Short: "Create a secret for use with a Docker registry",
		Long:  "Create a new secret for use with Docker registries.",
		Example: `  # If you do not already have a .dockercfg file, create a dockercfg secret directly
  minikctl create secret docker-registry my-secret --docker-server=DOCKER_REGISTRY_SERVER --docker-username=DOCKER_USER --docker-password=DOCKER_PASSWORD --docker-email=DOCKER_EMAIL`,
	}, "failed to create secret", func(name string) (generated, error) {
		for i := range files {
			if !strings.Contains(files[i], "=") {
				files[i] = corev1.DockerConfigJsonKey + "=" + files[i]
			}
		}
		if len(files) == 0 && (username == "" || password == "" || server == "") {
			return nil, errors.New("either --from-file or the combination of --docker-username, --docker-password and --docker-server is required")
		}
		s := newSecret(name, corev1.SecretTypeDockerConfigJson)
		if len(files) > 0 {
			kvs, err := keyValueSources(nil, files, nil, "Secret")
			if err != nil {
				return nil, err
			}
			for _, kv := range kvs {
				s.Data[kv[0]] = []byte(kv[1])
			}
		} else {
			auth := base64.StdEncoding.EncodeToString([]byte(username + ":" + password))
			data, err := json.Marshal(dockerConfigJSON{Auths: map[string]dockerConfigEntry{server: {Username: username, Password: password, Email: email, Auth: auth}}})
			if err != nil {
				return nil, err
			}
			s.Data[corev1.DockerConfigJsonKey] = data
		}
		return s, appendSecretHash(s, appendHash)
	})
	cmd.Flags().StringVar(&username, "docker-username", "", "Username for Docker registry authentication")
	cmd.Flags().StringVar(&password, "docker-password", "", "Password for Docker registry authentication")
	cmd.Flags().StringVar(&email, "docker-email", "", "Email for Docker registry")
	cmd.Flags().StringVar(&server, "docker-server", "https://index.docker.io/v1/", "Server location for Docker registry")
	cmd.Flags().BoolVar(&appendHash, "append-hash", false, "Append a hash of the secret to its name.")
	cmd.Flags().StringSliceVar(&files, "from-file", nil, "Key files can be specified using their file path, in which case a default name of "+corev1.DockerConfigJsonKey+" will be given to them, or optionally with a name and file path, in which case the given name will be used. Specifying a directory will iterate each named file in the directory that is a valid secret key. For this command, the key should always be "+corev1.DockerConfigJsonKey+".")
	return cmd
}

// Verbs kubectl's create role and clusterrole know.
var (
	validResourceVerbs    = []string{"*", "get", "delete", "list", "create", "update", "patch", "watch", "proxy", "deletecollection", "use", "bind", "escalate", "impersonate"}
	validNonResourceVerbs = []string{"*", "get", "post", "put", "delete", "patch", "head", "options"}
	// specialVerbs are verbs that apply to some resources only.
	specialVerbs = map[string][]schema.GroupResource{
		"use":         {{Group: "policy", Resource: "podsecuritypolicies"}, {Group: "extensions", Resource: "podsecuritypolicies"}},
		"bind":        {{Group: "rbac.authorization.k8s.io", Resource: "roles"}, {Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}},
		"escalate":    {{Group: "rbac.authorization.k8s.io", Resource: "roles"}, {Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}},
		"impersonate": {{Group: "", Resource: "users"}, {Group: "", Resource: "serviceaccounts"}, {Group: "", Resource: "groups"}, {Group: "authentication.k8s.io", Resource: "userextras"}, {Group: "authentication.k8s.io", Resource: "uids"}},
	}
)

// ruleOptions are the flags of create role and clusterrole.
type ruleOptions struct {
	Verbs           []string
	Resources       []string
	ResourceNames   []string
	NonResourceURLs []string
}

// ruleResource is one --resource: resource[.group][/subresource].
type ruleResource struct{ Resource, Group, SubResource string }

// complete deduplicates the verbs and names and parses the resources, as
// kubectl's Complete.
func (r *ruleOptions) complete() []ruleResource {
	var verbs []string
	for _, v := range r.Verbs {
		if v == "*" {
			verbs = []string{"*"}
			break
		}
		if !containsString(verbs, v) {
			verbs = append(verbs, v)
		}
	}
	r.Verbs = verbs
	r.ResourceNames = dedupe(r.ResourceNames)
	r.NonResourceURLs = dedupe(r.NonResourceURLs)
	var resources []ruleResource
	for _, spec := range r.Resources {
		res := ruleResource{}
		sections := strings.SplitN(spec, "/", 2)
		if len(sections) == 2 {
			res.SubResource = sections[1]
		}
		parts := strings.SplitN(sections[0], ".", 2)
		if len(parts) == 2 {
			res.Group = parts[1]
		}
		res.Resource = parts[0]
		if res.Resource == "*" && len(parts) == 1 && len(sections) == 1 {
			resources = []ruleResource{res}
			break
		}
		resources = append(resources, res)
	}
	return resources
}

func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !containsString(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// validateResources resolves the resources with the server's discovery and
// checks the special verbs, as kubectl's validateResource.
func validateRuleResources(mapper meta.RESTMapper, verbs []string, resources []ruleResource) error {
	for _, r := range resources {
		if r.Resource == "" {
			return errors.New("resource must be specified if apiGroup/subresource specified")
		}
		if r.Resource == "*" {
			return nil
		}
		gvr := schema.GroupVersionResource{Resource: r.Resource, Group: r.Group}
		found, err := mapper.ResourceFor(gvr)
		if err == nil {
			gvr = found
		}
		for _, v := range verbs {
			if grs, ok := specialVerbs[v]; ok {
				match := false
				for _, gr := range grs {
					if gvr.Resource == gr.Resource && gvr.Group == gr.Group {
						match, err = true, nil
						break
					}
				}
				if !match {
					return fmt.Errorf("can not perform '%s' on '%s' in group '%s'", v, gvr.Resource, gvr.Group)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// policyRules builds one rule per API group (sorted), then one for the
// non-resource URLs, as kubectl's generateResourcePolicyRules.
func policyRules(mapper meta.RESTMapper, verbs []string, resources []ruleResource, names, urls []string) []rbacv1.PolicyRule {
	byGroup := map[string][]string{}
	for _, r := range resources {
		gvr := schema.GroupVersionResource{Resource: r.Resource, Group: r.Group}
		if found, err := mapper.ResourceFor(gvr); err == nil {
			gvr = found
		}
		if r.SubResource != "" {
			gvr.Resource += "/" + r.SubResource
		}
		if !containsString(byGroup[gvr.Group], gvr.Resource) {
			byGroup[gvr.Group] = append(byGroup[gvr.Group], gvr.Resource)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	rules := []rbacv1.PolicyRule{}
	for _, g := range groups {
		rules = append(rules, rbacv1.PolicyRule{Verbs: verbs, Resources: byGroup[g], APIGroups: []string{g}, ResourceNames: names})
	}
	if len(urls) > 0 {
		rules = append(rules, rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls})
	}
	return rules
}

func (r *ruleOptions) addFlags(cmd *cobra.Command, clusterRole bool) {
	cmd.Flags().StringSliceVar(&r.Verbs, "verb", nil, "Verb that applies to the resources contained in the rule")
	cmd.Flags().StringSliceVar(&r.Resources, "resource", nil, "Resource that the rule applies to")
	cmd.Flags().StringArrayVar(&r.ResourceNames, "resource-name", nil, "Resource in the white list that the rule applies to, repeat this flag for multiple items")
	if clusterRole {
		cmd.Flags().StringSliceVar(&r.NonResourceURLs, "non-resource-url", nil, "A partial url that user should have access to.")
	}
}

func warnVerbs(streams IOStreams, verbs []string) {
	for _, v := range verbs {
		if !containsString(validResourceVerbs, v) {
			fmt.Fprintf(streams.ErrOut, "Warning: '%s' is not a standard resource verb\n", v)
		}
	}
}

// newCmdCreateRole returns create role.
func newCmdCreateRole(f *Factory, streams IOStreams) *cobra.Command {
	r := &ruleOptions{}
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:   "role NAME --verb=verb --resource=resource.group/subresource [--resource-name=resourcename] [--dry-run=server|client|none]",
		Short: "Create a role with single rule",
		Long:  "Create a role with single rule.",
		Example: `  # Create a role named "pod-reader" that allows user to perform "get", "watch" and "list" on pods
  minikctl create role pod-reader --verb=get --verb=list --verb=watch --resource=pods

  # Create a role named "foo" with API Group specified
  minikctl create role foo --verb=get,list,watch --resource=rs.apps`,
	}, "", func(name string) (generated, error) {
		resources := r.complete()
		if len(r.Verbs) == 0 {
			return nil, errors.New("at least one verb must be specified")
		}
		warnVerbs(streams, r.Verbs)
		if len(resources) == 0 {
			return nil, errors.New("at least one resource must be specified")
		}
		mapper, err := f.ToRESTMapper()
		if err != nil {
			return nil, err
		}
		if err := validateRuleResources(mapper, r.Verbs, resources); err != nil {
			return nil, err
		}
		return &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules:      policyRules(mapper, r.Verbs, resources, r.ResourceNames, nil),
		}, nil
	})
	r.addFlags(cmd, false)
	return cmd
}

// newCmdCreateClusterRole returns create clusterrole.
func newCmdCreateClusterRole(f *Factory, streams IOStreams) *cobra.Command {
	r := &ruleOptions{}
	aggregation := map[string]string{}
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:   "clusterrole NAME --verb=verb --resource=resource.group [--resource-name=resourcename] [--dry-run=server|client|none]",
		Short: "Create a cluster role",
		Long:  "Create a cluster role.",
		Example: `  # Create a cluster role named "pod-reader" that allows user to perform "get", "watch" and "list" on pods
  minikctl create clusterrole pod-reader --verb=get,list,watch --resource=pods

  # Create a cluster role named "foo" with NonResourceURL specified
  minikctl create clusterrole "foo" --verb=get --non-resource-url=/logs/*

  # Create a cluster role name "monitoring" with AggregationRule specified
  minikctl create clusterrole monitoring --aggregation-rule="rbac.example.com/aggregate-to-monitoring=true"`,
	}, "", func(name string) (generated, error) {
		resources := r.complete()
		role := &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		if len(aggregation) > 0 {
			if len(r.NonResourceURLs) > 0 || len(r.Verbs) > 0 || len(resources) > 0 || len(r.ResourceNames) > 0 {
				return nil, errors.New("aggregation rule must be specified without nonResourceURLs, verbs, resources or resourceNames")
			}
			role.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: aggregation}}}
			return role, nil
		}
		if len(r.Verbs) == 0 {
			return nil, errors.New("at least one verb must be specified")
		}
		if len(resources) == 0 && len(r.NonResourceURLs) == 0 {
			return nil, errors.New("one of resource or nonResourceURL must be specified")
		}
		mapper, err := f.ToRESTMapper()
		if err != nil {
			return nil, err
		}
		if len(resources) > 0 {
			warnVerbs(streams, r.Verbs)
			if err := validateRuleResources(mapper, r.Verbs, resources); err != nil {
				return nil, err
			}
		}
		for _, v := range r.Verbs {
			if len(r.NonResourceURLs) > 0 && !containsString(validNonResourceVerbs, v) {
				return nil, fmt.Errorf("invalid verb: '%s' for nonResourceURL", v)
			}
		}
		for _, u := range r.NonResourceURLs {
			if u == "*" {
				continue
			}
			if u == "" || !strings.HasPrefix(u, "/") {
				return nil, errors.New("nonResourceURL should start with /")
			}
			if strings.ContainsRune(u[:len(u)-1], '*') {
				return nil, errors.New("nonResourceURL only supports wildcard matches when '*' is at the end")
			}
		}
		role.Rules = policyRules(mapper, r.Verbs, resources, r.ResourceNames, r.NonResourceURLs)
		return role, nil
	})
	r.addFlags(cmd, true)
	cmd.Flags().Var(newMapStringString(aggregation), "aggregation-rule", "An aggregation label selector for combining ClusterRoles.")
	return cmd
}

// mapStringString is a flag of comma-separated key=value pairs
// (component-base's MapStringString).
type mapStringString struct {
	m           map[string]string
	initialized bool
}

func newMapStringString(m map[string]string) *mapStringString { return &mapStringString{m: m} }

func (s *mapStringString) String() string {
	var pairs []string
	for k, v := range s.m {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

func (s *mapStringString) Set(value string) error {
	if !s.initialized {
		for k := range s.m {
			delete(s.m, k)
		}
		s.initialized = true
	}
	for _, pair := range strings.Split(value, ",") {
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("malformed pair, expect string=string")
		}
		s.m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

func (s *mapStringString) Type() string { return "mapStringString" }

// bindingSubjects are the subject flags of create rolebinding and
// clusterrolebinding.
type bindingSubjects struct {
	Users, Groups, ServiceAccounts []string
}

func (b *bindingSubjects) addFlags(cmd *cobra.Command, what string) {
	cmd.Flags().StringArrayVar(&b.Users, "user", nil, "Usernames to bind to the "+what+". The flag can be repeated to add multiple users.")
	cmd.Flags().StringArrayVar(&b.Groups, "group", nil, "Groups to bind to the "+what+". The flag can be repeated to add multiple groups.")
	cmd.Flags().StringArrayVar(&b.ServiceAccounts, "serviceaccount", nil, "Service accounts to bind to the "+what+", in the format <namespace>:<name>. The flag can be repeated to add multiple service accounts.")
}

func (b *bindingSubjects) subjects() ([]rbacv1.Subject, error) {
	var out []rbacv1.Subject
	for _, u := range b.Users {
		out = append(out, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	for _, g := range b.Groups {
		out = append(out, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	for _, sa := range b.ServiceAccounts {
		ns, name, ok := strings.Cut(sa, ":")
		if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
			return nil, errors.New("serviceaccount must be <namespace>:<name>")
		}
		out = append(out, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name})
	}
	return out, nil
}

// newCmdCreateRoleBinding returns create rolebinding.
func newCmdCreateRoleBinding(f *Factory, streams IOStreams) *cobra.Command {
	var clusterRole, role string
	b := &bindingSubjects{}
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:   "rolebinding NAME --clusterrole=NAME|--role=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		Short: "Create a role binding for a particular role or cluster role",
		Long:  "Create a role binding for a particular role or cluster role.",
		Example: `  # Create a role binding for user1, user2, and group1 using the admin cluster role
  minikctl create rolebinding admin --clusterrole=admin --user=user1 --user=user2 --group=group1

  # Create a role binding for service account monitoring:sa-dev using the admin role
  minikctl create rolebinding admin-binding --role=admin --serviceaccount=monitoring:sa-dev`,
	}, "failed to create rolebinding:", func(name string) (generated, error) {
		if (clusterRole == "") == (role == "") {
			return nil, errors.New("exactly one of clusterrole or role must be specified")
		}
		rb := &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		if role != "" {
			rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role}
		} else {
			rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}
		}
		var err error
		rb.Subjects, err = b.subjects()
		return rb, err
	})
	cmd.Flags().StringVar(&clusterRole, "clusterrole", "", "ClusterRole this RoleBinding should reference")
	cmd.Flags().StringVar(&role, "role", "", "Role this RoleBinding should reference")
	b.addFlags(cmd, "role")
	return cmd
}

// newCmdCreateClusterRoleBinding returns create clusterrolebinding.
func newCmdCreateClusterRoleBinding(f *Factory, streams IOStreams) *cobra.Command {
	var clusterRole string
	b := &bindingSubjects{}
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:   "clusterrolebinding NAME --clusterrole=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		Short: "Create a cluster role binding for a particular cluster role",
		Long:  "Create a cluster role binding for a particular cluster role.",
		Example: `  # Create a cluster role binding for user1, user2, and group1 using the cluster-admin cluster role
  minikctl create clusterrolebinding cluster-admin --clusterrole=cluster-admin --user=user1 --user=user2 --group=group1`,
	}, "failed to create clusterrolebinding:", func(name string) (generated, error) {
		crb := &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		}
		var err error
		crb.Subjects, err = b.subjects()
		return crb, err
	})
	cmd.Flags().StringVar(&clusterRole, "clusterrole", "", "ClusterRole this ClusterRoleBinding should reference")
	_ = cmd.MarkFlagRequired("clusterrole")
	b.addFlags(cmd, "clusterrole")
	return cmd
}

// newCmdCreateServiceAccount returns create serviceaccount.
func newCmdCreateServiceAccount(f *Factory, streams IOStreams) *cobra.Command {
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:     "serviceaccount NAME [--dry-run=server|client|none]",
		Aliases: []string{"sa"},
		Short:   "Create a service account with the specified name",
		Long:    "Create a service account with the specified name.",
		Example: "  # Create a new service account named my-service-account\n  minikctl create serviceaccount my-service-account",
	}, "failed to create serviceaccount:", func(name string) (generated, error) {
		return &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
	})
	return cmd
}

// newCmdCreatePriorityClass returns create priorityclass.
func newCmdCreatePriorityClass(f *Factory, streams IOStreams) *cobra.Command {
	var value int32
	var globalDefault bool
	var description string
	policy := string(corev1.PreemptLowerPriority)
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:     "priorityclass NAME --value=VALUE --global-default=BOOL [--dry-run=server|client|none]",
		Aliases: []string{"pc"},
		Short:   "Create a priority class with the specified name",
		Long:    "Create a priority class with the specified name, value, globalDefault and description.",
		Example: `  # Create a priority class named high-priority
  minikctl create priorityclass high-priority --value=1000 --description="high priority"`,
	}, "failed to create priorityclass:", func(name string) (generated, error) {
		p := corev1.PreemptionPolicy(policy)
		return &schedulingv1.PriorityClass{
			TypeMeta:         metav1.TypeMeta{APIVersion: schedulingv1.SchemeGroupVersion.String(), Kind: "PriorityClass"},
			ObjectMeta:       metav1.ObjectMeta{Name: name},
			Value:            value,
			GlobalDefault:    globalDefault,
			Description:      description,
			PreemptionPolicy: &p,
		}, nil
	})
	cmd.Flags().Int32Var(&value, "value", 0, "the value of this priority class.")
	cmd.Flags().BoolVar(&globalDefault, "global-default", false, "global-default specifies whether this PriorityClass should be considered as the default priority.")
	cmd.Flags().StringVar(&description, "description", "", "description is an arbitrary string that usually provides guidelines on when this priority class should be used.")
	cmd.Flags().StringVar(&policy, "preemption-policy", policy, "preemption-policy is the policy for preempting pods with lower priority.")
	return cmd
}

// newCmdCreateQuota returns create quota.
func newCmdCreateQuota(f *Factory, streams IOStreams) *cobra.Command {
	var hard, scopes string
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:     "quota NAME [--hard=key1=value1,key2=value2] [--scopes=Scope1,Scope2] [--dry-run=server|client|none]",
		Aliases: []string{"resourcequota"},
		Short:   "Create a quota with the specified name",
		Long:    "Create a resource quota with the specified name, hard limits, and optional scopes.",
		Example: `  # Create a new resource quota named my-quota
  minikctl create quota my-quota --hard=cpu=1,memory=1G,pods=2,services=3,replicationcontrollers=2,resourcequotas=1,secrets=5,persistentvolumeclaims=10`,
	}, "failed to create quota:", func(name string) (generated, error) {
		q := &corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		if hard != "" {
			q.Spec.Hard = corev1.ResourceList{}
			for _, stmt := range strings.Split(hard, ",") {
				parts := strings.Split(stmt, "=")
				if len(parts) != 2 {
					return nil, fmt.Errorf("Invalid argument syntax %v, expected <resource>=<value>", stmt)
				}
				qty, err := resource.ParseQuantity(parts[1])
				if err != nil {
					return nil, err
				}
				q.Spec.Hard[corev1.ResourceName(parts[0])] = qty
			}
		}
		if scopes != "" {
			for _, s := range strings.Split(scopes, ",") {
				if s == "" {
					return nil, errors.New(`invalid resource quota scope ""`)
				}
				q.Spec.Scopes = append(q.Spec.Scopes, corev1.ResourceQuotaScope(s))
			}
		}
		return q, nil
	})
	cmd.Flags().StringVar(&hard, "hard", "", "A comma-delimited set of resource=quantity pairs that define a hard limit.")
	cmd.Flags().StringVar(&scopes, "scopes", "", "A comma-delimited set of quota scopes that must all match each object tracked by the quota.")
	return cmd
}

var budgetRE = regexp.MustCompile(`^[0-9]+%?$`)

// newCmdCreatePodDisruptionBudget returns create poddisruptionbudget.
func newCmdCreatePodDisruptionBudget(f *Factory, streams IOStreams) *cobra.Command {
	var minAvailable, maxUnavailable, selector string
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:     "poddisruptionbudget NAME --selector=SELECTOR --min-available=N [--dry-run=server|client|none]",
		Aliases: []string{"pdb"},
		Short:   "Create a pod disruption budget with the specified name",
		Long:    "Create a pod disruption budget with the specified name, selector, and desired minimum available pods.",
		Example: `  # Create a pod disruption budget named my-pdb that will select all pods with the app=rails label
  # and require at least one of them being available at any point in time
  minikctl create poddisruptionbudget my-pdb --selector=app=rails --min-available=1`,
	}, "failed to create poddisruptionbudgets:", func(name string) (generated, error) {
		switch {
		case selector == "":
			return nil, errors.New("a selector must be specified")
		case maxUnavailable == "" && minAvailable == "":
			return nil, errors.New("one of min-available or max-unavailable must be specified")
		case maxUnavailable != "" && minAvailable != "":
			return nil, errors.New("min-available and max-unavailable cannot be both specified")
		case minAvailable != "" && !budgetRE.MatchString(minAvailable):
			return nil, errors.New("invalid format specified for min-available")
		case maxUnavailable != "" && !budgetRE.MatchString(maxUnavailable):
			return nil, errors.New("invalid format specified for max-unavailable")
		}
		sel, err := metav1.ParseToLabelSelector(selector)
		if err != nil {
			return nil, err
		}
		pdb := &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: policyv1.SchemeGroupVersion.String(), Kind: "PodDisruptionBudget"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
		pdb.Spec.Selector = sel
		if minAvailable != "" {
			v := intstr.Parse(minAvailable)
			pdb.Spec.MinAvailable = &v
		} else {
			v := intstr.Parse(maxUnavailable)
			pdb.Spec.MaxUnavailable = &v
		}
		return pdb, nil
	})
	cmd.Flags().StringVar(&minAvailable, "min-available", "", "The minimum number or percentage of available pods this budget requires.")
	cmd.Flags().StringVar(&maxUnavailable, "max-unavailable", "", "The maximum number or percentage of unavailable pods this budget requires.")
	cmd.Flags().StringVar(&selector, "selector", "", "A label selector to use for this budget. Only equality-based selector requirements are supported.")
	return cmd
}

var ingressRuleRE = regexp.MustCompile(`^(?P<host>[\w\*\-\.]*)(?P<path>/.*)=(?P<svcname>[\w\-]+):(?P<svcport>[\w\-]+)(,(?P<istls>tls)=?(?P<secretname>[\w\-]+)?)?`)

// newCmdCreateIngress returns create ingress.
func newCmdCreateIngress(f *Factory, streams IOStreams) *cobra.Command {
	var class, defaultBackend string
	var rules, annotations []string
	cmd, _ := newGeneratorCommand(f, streams, &cobra.Command{
		Use:     "ingress NAME --rule=host/path=service:port[,tls[=secret]] ",
		Aliases: []string{"ing"},
		Short:   "Create an ingress with the specified name",
		Long:    "Create an ingress with the specified name.",
		Example: `  # Create a single ingress called 'simple' that directs requests to foo.com/bar to svc
  # svc1:8080 with a TLS secret "my-cert"
  minikctl create ingress simple --rule="foo.com/bar=svc1:8080,tls=my-cert"

  # Create an ingress with a default backend
  minikctl create ingress ingdefault --class=default --default-backend=defaultsvc:http --rule="foo.com/*=svc:8080,tls=secret1"`,
	}, "failed to create ingress:", func(name string) (generated, error) {
		if defaultBackend == "" && len(rules) == 0 {
			return nil, errors.New("not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)")
		}
		for _, r := range rules {
			if !ingressRuleRE.MatchString(r) {
				return nil, fmt.Errorf("rule %s is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]", r)
			}
		}
		ann := map[string]string{}
		for _, a := range annotations {
			k, v, ok := strings.Cut(a, "=")
			if !ok {
				return nil, fmt.Errorf("annotation %s is invalid and should be in format key=[value]", a)
			}
			ann[k] = v
		}
		if defaultBackend != "" && len(strings.Split(defaultBackend, ":")) != 2 {
			return nil, errors.New("default-backend should be in format servicename:serviceport")
		}
		ing := &networkingv1.Ingress{TypeMeta: metav1.TypeMeta{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "Ingress"}, ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}}
		if class != "" {
			ing.Spec.IngressClassName = &class
		}
		if defaultBackend != "" {
			b := ingressBackend(defaultBackend)
			ing.Spec.DefaultBackend = &b
		}
		ing.Spec.TLS = ingressTLS(rules)
		ing.Spec.Rules = ingressRules(rules)
		return ing, nil
	})
	cmd.Flags().StringVar(&class, "class", "", "Ingress Class to be used")
	cmd.Flags().StringArrayVar(&rules, "rule", nil, "Rule in format host/path=service:port[,tls=secretname]. Paths containing the leading character '*' are considered pathType=Prefix. tls argument is optional.")
	cmd.Flags().StringVar(&defaultBackend, "default-backend", "", "Default service for backend, in format of svcname:port")
	cmd.Flags().StringArrayVar(&annotations, "annotation", nil, "Annotation to insert in the ingress object, in the format annotation=value")
	return cmd
}

// ingressTLS groups the hosts of the rules with ",tls[=secret]" by secret,
// as kubectl's buildTLSRules.
func ingressTLS(rules []string) []networkingv1.IngressTLS {
	seen := map[string]bool{}
	out := []networkingv1.IngressTLS{}
	for _, rule := range rules {
		parts := strings.Split(rule, ",")
		if len(parts) != 2 {
			continue
		}
		host := strings.SplitN(rule, "/", 2)[0]
		secret := ""
		if s := strings.Split(parts[1], "="); len(s) > 1 {
			secret = s[1]
		}
		if seen[host] {
			continue
		}
		seen[host] = true
		idx := -1
		for i, t := range out {
			if t.SecretName == secret {
				idx = i
				break
			}
		}
		if idx > -1 {
			out[idx].Hosts = append(out[idx].Hosts, host)
			continue
		}
		t := networkingv1.IngressTLS{SecretName: secret}
		if host != "" {
			t.Hosts = []string{host}
		}
		if t.SecretName != "" || len(t.Hosts) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// ingressRules groups the paths of the rules by host, as kubectl's
// buildIngressRules; a path ending in '*' is a Prefix, others Exact.
func ingressRules(rules []string) []networkingv1.IngressRule {
	out := []networkingv1.IngressRule{}
	for _, rule := range rules {
		hostPath := strings.SplitN(strings.Split(rule, ",")[0], "/", 2)
		host := hostPath[0]
		pathSvc := strings.Split(hostPath[1], "=")
		path, pathType := "/"+pathSvc[0], networkingv1.PathTypeExact
		if strings.HasSuffix(path, "*") {
			path, pathType = strings.TrimSuffix(path, "*"), networkingv1.PathTypePrefix
		}
		p := networkingv1.HTTPIngressPath{Path: path, PathType: &pathType, Backend: ingressBackend(pathSvc[1])}
		idx := -1
		for i, r := range out {
			if r.Host == host {
				idx = i
				break
			}
		}
		if idx > -1 {
			out[idx].HTTP.Paths = append(out[idx].HTTP.Paths, p)
			continue
		}
		out = append(out, networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{p}}}})
	}
	return out
}

func ingressBackend(svc string) networkingv1.IngressBackend {
	name, port, _ := strings.Cut(svc, ":")
	b := networkingv1.IngressServiceBackend{Name: name}
	if p := intstr.Parse(port); p.Type == intstr.Int {
		b.Port.Number = p.IntVal
	} else {
		b.Port.Name = p.StrVal
	}
	return networkingv1.IngressBackend{Service: &b}
}

// boundObjectKinds are the kinds a token can be bound to, with their API
// versions.
var boundObjectKinds = map[string]string{"Node": "v1", "Pod": "v1", "Secret": "v1"}

// newCmdCreateToken returns create token: a TokenRequest for a service
// account, printing the token (or the response with -o).
func newCmdCreateToken(f *Factory, streams IOStreams) *cobra.Command {
	var audiences []string
	var duration time.Duration
	var boundKind, boundName, boundUID string
	pf := &PrintFlags{}
	kinds := make([]string, 0, len(boundObjectKinds))
	for k := range boundObjectKinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	cmd := &cobra.Command{
		Use:                   "token SERVICE_ACCOUNT_NAME",
		DisableFlagsInUseLine: true,
		Short:                 "Request a service account token",
		Long:                  "Request a service account token.",
		Example: `  # Request a token to authenticate to the kube-apiserver as the service account "myapp" in the current namespace
  minikctl create token myapp

  # Request a token with a custom expiration
  minikctl create token myapp --duration 10m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := generatorName(cmd, args)
			if err != nil {
				return err
			}
			ns, _, err := f.Namespace()
			if err != nil {
				return err
			}
			switch {
			case ns == "":
				return errors.New("--namespace is required")
			case duration < 0:
				return errors.New("--duration must be greater than or equal to 0")
			case duration%time.Second != 0:
				return errors.New("--duration cannot be expressed in units less than seconds")
			}
			for _, a := range audiences {
				if a == "" {
					return errors.New("--audience must not be an empty string")
				}
			}
			if boundKind == "" {
				if boundName != "" {
					return errors.New("--bound-object-name can only be set if --bound-object-kind is provided")
				}
				if boundUID != "" {
					return errors.New("--bound-object-uid can only be set if --bound-object-kind is provided")
				}
			} else {
				if _, ok := boundObjectKinds[boundKind]; !ok {
					return fmt.Errorf("supported --bound-object-kind values are %s", strings.Join(kinds, ", "))
				}
				if boundName == "" {
					return errors.New("--bound-object-name is required if --bound-object-kind is provided")
				}
			}
			req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: audiences}}
			if duration > 0 {
				secs := int64(duration / time.Second)
				req.Spec.ExpirationSeconds = &secs
			}
			if boundKind != "" {
				req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: boundKind, APIVersion: boundObjectKinds[boundKind], Name: boundName, UID: types.UID(boundUID)}
			}
			cs, err := f.KubernetesClientSet()
			if err != nil {
				return err
			}
			resp, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(cmd.Context(), name, req, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("failed to create token: %v", err)
			}
			if resp.Status.Token == "" {
				return errors.New("failed to create token: no token in server response")
			}
			if pf.OutputFormat != "" || pf.Template != "" {
				resp.SetGroupVersionKind(authenticationv1.SchemeGroupVersion.WithKind("TokenRequest"))
				printer, err := pf.ToPrinter()
				if err != nil {
					return err
				}
				return printer.PrintObj(resp, streams.Out)
			}
			if file, ok := streams.Out.(*os.File); ok && term.IsTerminal(int(file.Fd())) {
				fmt.Fprintf(streams.Out, "%s\n", resp.Status.Token)
			} else {
				fmt.Fprintf(streams.Out, "%s", resp.Status.Token)
			}
			return nil
		},
	}
	pf.AddFlags(cmd)
	cmd.Flags().StringArrayVar(&audiences, "audience", nil, "Audience of the requested token. If unset, defaults to requesting a token for use with the Kubernetes API server. May be repeated to request a token valid for multiple audiences.")
	cmd.Flags().DurationVar(&duration, "duration", 0, "Requested lifetime of the issued token. If not set or if set to 0, the lifetime will be determined by the server automatically. The server may return a token with a longer or shorter lifetime.")
	cmd.Flags().StringVar(&boundKind, "bound-object-kind", "", "Kind of an object to bind the token to. Supported kinds are "+strings.Join(kinds, ", ")+". If set, --bound-object-name must be provided.")
	cmd.Flags().StringVar(&boundName, "bound-object-name", "", "Name of an object to bind the token to. The token will expire when the object is deleted. Requires --bound-object-kind.")
	cmd.Flags().StringVar(&boundUID, "bound-object-uid", "", "UID of an object to bind the token to. Requires --bound-object-kind and --bound-object-name. If unset, the UID of the existing object is used.")
	return cmd
}
