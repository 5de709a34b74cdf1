package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ExposeOptions are the inputs of expose: a Service for a pod, service,
// replication controller, deployment or replica set, its selector, ports
// and protocols read from the object unless given.
type ExposeOptions struct {
	Create          CreateOptions
	Selection       ObjectSelection
	Name            string
	Port            string
	TargetPort      string
	Protocol        string
	Type            string
	Selector        string
	Labels          string
	ExternalIP      string
	LoadBalancerIP  string
	SessionAffinity string
	ClusterIP       string
}

// NewCmdExpose returns the expose command.
func NewCmdExpose(f *Factory, streams IOStreams) *cobra.Command {
	return newCmdExpose(f, streams, runExpose)
}

func newCmdExpose(f *Factory, streams IOStreams, run func(context.Context, *Factory, *ExposeOptions) error) *cobra.Command {
	o := &ExposeOptions{Create: CreateOptions{Streams: streams}}
	cmd := &cobra.Command{
		Use:                   "expose (-f FILENAME | TYPE NAME) [--port=port] [--protocol=TCP|UDP|SCTP] [--target-port=number-or-name] [--name=name] [--external-ip=external-ip-of-service] [--type=type]",
		DisableFlagsInUseLine: true,
		Short:                 "Take a replication controller, service, deployment or pod and expose it as a new Kubernetes service",
		Long: `Expose a resource as a new Kubernetes service.

 Looks up a deployment, service, replica set, replication controller or pod by name and uses the selector for that resource as the selector for a new service on the specified port. A deployment or replica set will be exposed as a service only if its selector is convertible to a selector that service supports, i.e. when the selector contains only the matchLabels component. Note that if no port is specified via --port and the exposed resource has multiple ports, all will be re-used by the new service. Also if no labels are specified, the new service will re-use the labels from the resource it exposes.

 Possible resources include (case insensitive):

 pod (po), service (svc), replicationcontroller (rc), deployment (deploy), replicaset (rs)`,
		Example: `  # Create a service for the demo's deployment, serving on port 80 and connecting to the containers on port 8080
  minikctl -n demo expose deployment web --port=80 --target-port=8080`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Create.complete(); err != nil {
				return err
			}
			o.Create.PrintFlags.Operation = "exposed"
			var err error
			o.Selection.Namespace, o.Selection.EnforceNamespace, err = f.Namespace()
			if err != nil {
				return err
			}
			o.Selection.Args = args
			o.Selection.BaseName = cmd.Root().Name()
			if len(args) == 0 && o.Selection.Filenames.Empty() {
				return errors.New("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
			}
			return run(cmd.Context(), f, o)
		},
	}
	o.Create.addFlags(cmd)
	o.Selection.Filenames.AddFlags(cmd, "identifying the resource to expose a service")
	cmd.Flags().StringVar(&o.Protocol, "protocol", "", "The network protocol for the service to be created. Default is 'TCP'.")
	cmd.Flags().StringVar(&o.Port, "port", "", "The port that the service should serve on. Copied from the resource being exposed, if unspecified")
	cmd.Flags().StringVar(&o.Type, "type", "", "Type for this service: ClusterIP, NodePort, LoadBalancer, or ExternalName. Default is 'ClusterIP'.")
	cmd.Flags().StringVar(&o.LoadBalancerIP, "load-balancer-ip", "", "IP to assign to the LoadBalancer. If empty, an ephemeral IP will be created and used (cloud-provider specific).")
	cmd.Flags().StringVar(&o.Selector, "selector", "", "A label selector to use for this service. Only equality-based selector requirements are supported. If empty (the default) infer the selector from the resource being exposed.")
	cmd.Flags().StringVarP(&o.Labels, "labels", "l", "", "Labels to apply to the service created by this call.")
	cmd.Flags().StringVar(&o.TargetPort, "target-port", "", "Name or number for the port on the container that the service should direct traffic to. Optional.")
	cmd.Flags().StringVar(&o.ExternalIP, "external-ip", "", "Additional external IP address (not managed by Kubernetes) to accept for the service. If this IP is routed to a node, the service can be accessed by this IP in addition to its generated service IP.")
	cmd.Flags().StringVar(&o.Name, "name", "", "The name for the newly created object.")
	cmd.Flags().StringVar(&o.SessionAffinity, "session-affinity", "", "If non-empty, set the session affinity for the service to this; legal values: 'None', 'ClientIP'")
	cmd.Flags().StringVar(&o.ClusterIP, "cluster-ip", "", "ClusterIP to be assigned to the service. Leave empty to auto-allocate, or set to 'None' to create a headless service.")
	return cmd
}

// exposed is what expose reads from the object it exposes: its selector,
// its ports (in order) with their protocols, or why it cannot be exposed.
type exposed struct {
	selector  map[string]string
	ports     []string
	protocols map[string][]string
}

func exposedOf(obj runtime.Object) (*exposed, error) {
	fromSpec := func(spec corev1.PodSpec) ([]string, map[string][]string) {
		var ports []string
		protocols := map[string][]string{}
		for _, c := range spec.Containers {
			for _, p := range c.Ports {
				key := strconv.Itoa(int(p.ContainerPort))
				if _, ok := protocols[key]; !ok {
					ports = append(ports, key)
				}
				proto := string(p.Protocol)
				if proto == "" {
					proto = string(corev1.ProtocolTCP)
				}
				if !containsString(protocols[key], proto) {
					protocols[key] = append(protocols[key], proto)
				}
			}
		}
		return ports, protocols
	}
	labelSelector := func(sel *metav1.LabelSelector, what string) (map[string]string, error) {
		if sel == nil || len(sel.MatchLabels) == 0 {
			return nil, fmt.Errorf("invalid %s: no selectors, therefore cannot be exposed", what)
		}
		if len(sel.MatchExpressions) > 0 {
			return nil, fmt.Errorf("couldn't convert expressions - \"%+v\" to map-based selector format", sel.MatchExpressions)
		}
		return sel.MatchLabels, nil
	}
	e := &exposed{}
	var err error
	switch t := obj.(type) {
	case *corev1.Pod:
		if len(t.Labels) == 0 {
			err = errors.New("the pod has no labels and cannot be exposed")
		}
		e.selector = t.Labels
		e.ports, e.protocols = fromSpec(t.Spec)
	case *corev1.Service:
		if t.Spec.Selector == nil {
			err = errors.New("the service has no pod selector set")
		}
		e.selector = t.Spec.Selector
		e.protocols = map[string][]string{}
		for _, p := range t.Spec.Ports {
			key := strconv.Itoa(int(p.Port))
			if _, ok := e.protocols[key]; !ok {
				e.ports = append(e.ports, key)
			}
			proto := string(p.Protocol)
			if proto == "" {
				proto = string(corev1.ProtocolTCP)
			}
			e.protocols[key] = append(e.protocols[key], proto)
		}
	case *corev1.ReplicationController:
		e.selector = t.Spec.Selector
		if t.Spec.Template != nil {
			e.ports, e.protocols = fromSpec(t.Spec.Template.Spec)
		}
	case *appsv1.Deployment:
		e.selector, err = labelSelector(t.Spec.Selector, "deployment")
		e.ports, e.protocols = fromSpec(t.Spec.Template.Spec)
	case *appsv1.ReplicaSet:
		e.selector, err = labelSelector(t.Spec.Selector, "replicaset")
		e.ports, e.protocols = fromSpec(t.Spec.Template.Spec)
	default:
		return nil, fmt.Errorf("cannot expose a %s", obj.GetObjectKind().GroupVersionKind().GroupKind())
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't retrieve selectors via --selector flag or introspection: %v", err)
	}
	return e, nil
}

// makeLabels renders a map as "k=v,k2=v2" (sorted).
func makeLabels(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func runExpose(ctx context.Context, f *Factory, o *ExposeOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return aggregate(errs)
	}
	for _, info := range infos {
		typed, err := toTyped(info.Object)
		if err != nil {
			return err
		}
		e, err := exposedOf(typed)
		if err != nil {
			return err
		}
		svc, err := o.service(info, typed, e)
		if err != nil {
			return err
		}
		if err := o.Create.createGenerated(ctx, f, svc); err != nil {
			return err
		}
	}
	return nil
}

// service builds the Service, as kubectl's createService.
func (o *ExposeOptions) service(info *Info, obj runtime.Object, e *exposed) (*corev1.Service, error) {
	selectorSpec := o.Selector
	if selectorSpec == "" {
		selectorSpec = makeLabels(e.selector)
	}
	if selectorSpec == "" {
		return nil, errors.New("selector must be specified")
	}
	selector, err := parseLabelSpec(selectorSpec)
	if err != nil {
		return nil, err
	}
	labelSpec := o.Labels
	if labelSpec == "" {
		labelSpec = makeLabels(accessorOf(obj).GetLabels())
	}
	labels, err := parseLabelSpec(labelSpec)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = info.Name
		if len(name) > validation.DNS1035LabelMaxLength {
			name = name[:validation.DNS1035LabelMaxLength]
		}
	}
	ports := e.ports
	if o.Port != "" {
		ports = strings.Split(o.Port, ",")
	} else if len(ports) == 0 && o.ClusterIP != corev1.ClusterIPNone {
		return nil, errors.New("couldn't find port via --port flag or introspection")
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{}},
	}
	for i, p := range ports {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, err
		}
		portName := ""
		if len(ports) > 1 {
			portName = fmt.Sprintf("port-%d", i+1)
		}
		protocol := o.Protocol
		if protocol == "" {
			protocol = string(corev1.ProtocolTCP)
			if protos := e.protocols[p]; len(protos) == 1 {
				protocol = protos[0]
			} else if len(protos) > 1 {
				for _, proto := range protos {
					svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("port-%d-%s", i+1, strings.ToLower(proto)), Port: int32(n), Protocol: corev1.Protocol(proto)})
				}
				continue
			}
		}
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: portName, Port: int32(n), Protocol: corev1.Protocol(protocol)})
	}
	for i := range svc.Spec.Ports {
		if o.TargetPort != "" {
			svc.Spec.Ports[i].TargetPort = intstr.Parse(o.TargetPort)
		} else {
			svc.Spec.Ports[i].TargetPort = intstr.FromInt32(svc.Spec.Ports[i].Port)
		}
	}
	if o.ExternalIP != "" {
		svc.Spec.ExternalIPs = []string{o.ExternalIP}
	}
	if o.Type != "" {
		svc.Spec.Type = corev1.ServiceType(o.Type)
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerIP = o.LoadBalancerIP
	}
	switch corev1.ServiceAffinity(o.SessionAffinity) {
	case "":
	case corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP:
		svc.Spec.SessionAffinity = corev1.ServiceAffinity(o.SessionAffinity)
	default:
		return nil, fmt.Errorf("unknown session affinity: %s", o.SessionAffinity)
	}
	svc.Spec.ClusterIP = o.ClusterIP
	return svc, nil
}

// parseLabelSpec parses "k=v,k2=v2" as kubectl's expose does, with its
// errors.
func parseLabelSpec(spec string) (map[string]string, error) {
	if spec == "" {
		return nil, nil
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(spec, ",") {
		parts := strings.Split(kv, "=")
		if len(parts) != 2 {
			return nil, fmt.Errorf("unexpected label spec: %s", kv)
		}
		if parts[0] == "" {
			return nil, errors.New("unexpected empty label key")
		}
		labels[parts[0]] = parts[1]
	}
	return labels, nil
}
