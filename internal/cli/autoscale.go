package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/scale"
)

// AutoscaleOptions are the inputs of autoscale: the objects to autoscale
// and the HorizontalPodAutoscaler's bounds and targets.
type AutoscaleOptions struct {
	Create     CreateOptions
	Selection  ObjectSelection
	Name       string
	Min, Max   int32
	CPUPercent int32
	CPU        string
	Memory     string
}

// NewCmdAutoscale returns the autoscale command, kubectl v1.37's: an
// autoscaling/v2 HorizontalPodAutoscaler for each Deployment, ReplicaSet,
// StatefulSet or ReplicationController named, falling back to
// autoscaling/v1 when the server refuses v2 and v1 can say the same.
func NewCmdAutoscale(f *Factory, streams IOStreams) *cobra.Command {
	o := &AutoscaleOptions{Create: CreateOptions{Streams: streams, Validate: "warn"}}
	cmd := &cobra.Command{
		Use:                   "autoscale (-f FILENAME | TYPE NAME | TYPE/NAME) [--min=MINPODS] --max=MAXPODS [--cpu=CPU] [--memory=MEMORY]",
		DisableFlagsInUseLine: true,
		Short:                 "Auto-scale a deployment, replica set, stateful set, or replication controller",
		Long: `Creates an autoscaler that automatically chooses and sets the number of pods that run in a Kubernetes cluster.
 The command will attempt to use the autoscaling/v2 API first, in case of an error, it will fall back to autoscaling/v1 API.

 Looks up a deployment, replica set, stateful set, or replication controller by name and creates an autoscaler that uses the given resource as a reference.
 An autoscaler can automatically increase or decrease number of pods deployed within the system as needed.`,
		Example: `  # Auto scale a deployment "foo", with the number of pods between 2 and 10, no target CPU utilization specified so a default autoscaling policy will be used
  minikctl autoscale deployment foo --min=2 --max=10

  # Auto scale a deployment "web", with the number of pods between 2 and 5, target CPU utilization at 80%
  minikctl autoscale deployment web --min=2 --max=5 --cpu=80%

  # Auto scale a deployment "bar", with the number of pods between 3 and 6, target average CPU of 500m and memory of 200Mi
  minikctl autoscale deployment bar --min=3 --max=6 --cpu=500m --memory=200Mi`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Create.complete(); err != nil {
				return err
			}
			o.Create.PrintFlags.Operation = "autoscaled"
			if o.Create.DryRun == DryRunClient {
				o.Create.PrintFlags.Operation = "created"
			}
			if err := o.validate(); err != nil {
				return err
			}
			var err error
			o.Selection.Namespace, o.Selection.EnforceNamespace, err = f.Namespace()
			if err != nil {
				return err
			}
			o.Selection.Args = args
			o.Selection.BaseName = cmd.Root().Name()
			return runAutoscale(cmd.Context(), f, o)
		},
	}
	o.Create.PrintFlags.AddFlags(cmd)
	addDryRunFlag(cmd, &o.Create.DryRunFlag)
	cmd.Flags().StringVar(&o.Create.FieldManager, "field-manager", "kubectl-autoscale", "Name of the manager used to track field ownership.")
	o.Selection.Filenames.AddFlags(cmd, "identifying the resource to autoscale.")
	cmd.Flags().Int32Var(&o.Min, "min", -1, "The lower limit for the number of pods that can be set by the autoscaler. If it's not specified or negative, the server will apply a default value.")
	cmd.Flags().Int32Var(&o.Max, "max", -1, "The upper limit for the number of pods that can be set by the autoscaler. Required.")
	_ = cmd.MarkFlagRequired("max")
	cmd.Flags().Int32Var(&o.CPUPercent, "cpu-percent", -1, "The target average CPU utilization (represented as a percent of requested CPU) over all the pods. If it's not specified or negative, a default autoscaling policy will be used.")
	cmd.Flags().StringVar(&o.CPU, "cpu", "", `Target CPU utilization over all the pods. When specified as a percentage (e.g."70%" for 70% of requested CPU) it will target average utilization. When specified as quantity (e.g."500m" for 500 milliCPU) it will target average value. Value without units is treated as a quantity with miliCPU being the unit (e.g."500" is "500m").`)
	cmd.Flags().StringVar(&o.Memory, "memory", "", `Target memory utilization over all the pods. When specified  as a percentage (e.g."60%" for 60% of requested memory) it will target average utilization. When specified as quantity (e.g."200Mi" for 200 MiB, "1Gi" for 1 GiB) it will target average value. Value without units is treated as a quantity with mebibytes being the unit (e.g."200" is "200Mi").`)
	cmd.Flags().StringVar(&o.Name, "name", "", "The name for the newly created object. If not specified, the name of the input resource will be used.")
	_ = cmd.Flags().MarkDeprecated("cpu-percent", "Use --cpu with percentage or resource quantity format (e.g., '70%' for utilization or '500m' for milliCPU).")
	return cmd
}

// validate is kubectl's Validate.
func (o *AutoscaleOptions) validate() error {
	if o.Max < 1 {
		return fmt.Errorf("--max=MAXPODS is required and must be at least 1, max: %d", o.Max)
	}
	if o.Max < o.Min {
		return fmt.Errorf("--max=MAXPODS must be larger or equal to --min=MINPODS, max: %d, min: %d", o.Max, o.Min)
	}
	if o.CPUPercent > 0 && o.CPU != "" {
		return errors.New("--cpu-percent and --cpu are mutually exclusive")
	}
	for _, in := range []struct {
		value string
		res   corev1.ResourceName
	}{{o.CPU, corev1.ResourceCPU}, {o.Memory, corev1.ResourceMemory}} {
		if in.value != "" {
			if _, _, _, err := parseResourceTarget(in.value, in.res); err != nil {
				return err
			}
		}
	}
	return nil
}

func runAutoscale(ctx context.Context, f *Factory, o *AutoscaleOptions) error {
	infos, _, errs := f.selectObjects(ctx, &o.Selection)
	if len(errs) > 0 {
		return aggregate(errs)
	}
	disc, err := f.Discovery()
	if err != nil {
		return err
	}
	kinds := scale.NewDiscoveryScaleKindResolver(disc)
	count := 0
	for _, info := range infos {
		m := info.Mapping
		if _, err := kinds.ScaleForResource(m.GroupVersionKind.GroupVersion().WithResource(m.Resource.Resource)); err != nil {
			return fmt.Errorf("cannot autoscale a %s: %w", m.GroupVersionKind.Kind, err)
		}
		v2, err := o.hpaV2(info.Name, m)
		if err != nil {
			return fmt.Errorf("failed to create HorizontalPodAutoscaler using autoscaling/v2 API: %w", err)
		}
		if err := o.Create.createGenerated(ctx, f, v2); err != nil {
			// kubectl falls back to autoscaling/v1 when v1 can say as much.
			if ok, verr := o.v1Compatible(); !ok {
				return fmt.Errorf("failed to create autoscaling/v2 HPA and the configuration is incompatible with autoscaling/v1: %w", verr)
			}
			if err := o.Create.createGenerated(ctx, f, o.hpaV1(info.Name, m)); err != nil {
				return err
			}
		}
		count++
	}
	if count == 0 {
		return errors.New("no objects passed to autoscale")
	}
	return nil
}

// v1Compatible is kubectl's canCreateHPAV1.
func (o *AutoscaleOptions) v1Compatible() (bool, error) {
	_, _, typ, err := parseResourceTarget(o.CPU, corev1.ResourceCPU)
	if err != nil {
		return false, err
	}
	return (o.CPUPercent >= 0 && o.Memory == "") || (o.Memory == "" && typ == autoscalingv2.UtilizationMetricType), nil
}

// hpaV2 is kubectl's createHorizontalPodAutoscalerV2.
func (o *AutoscaleOptions) hpaV2(ref string, m *meta.RESTMapping) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	name := o.Name
	if name == "" {
		name = ref
	}
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: m.GroupVersionKind.GroupVersion().String(), Kind: m.GroupVersionKind.Kind, Name: ref},
			MaxReplicas:    o.Max,
		},
	}
	if o.Min > 0 {
		h.Spec.MinReplicas = new(o.Min)
	}
	if o.CPUPercent > 0 {
		h.Spec.Metrics = append(h.Spec.Metrics, resourceMetric(corev1.ResourceCPU, autoscalingv2.MetricTarget{
			Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(o.CPUPercent)}))
	}
	for _, in := range []struct {
		value string
		res   corev1.ResourceName
	}{{o.CPU, corev1.ResourceCPU}, {o.Memory, corev1.ResourceMemory}} {
		if in.value == "" {
			continue
		}
		q, pct, typ, err := parseResourceTarget(in.value, in.res)
		if err != nil {
			return nil, err
		}
		t := autoscalingv2.MetricTarget{Type: typ}
		if typ == autoscalingv2.UtilizationMetricType {
			t.AverageUtilization = new(pct)
		} else {
			t.AverageValue = &q
		}
		h.Spec.Metrics = append(h.Spec.Metrics, resourceMetric(in.res, t))
	}
	return h, nil
}

func resourceMetric(res corev1.ResourceName, t autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: res, Target: t}}
}

// hpaV1 is kubectl's createHorizontalPodAutoscalerV1.
func (o *AutoscaleOptions) hpaV1(ref string, m *meta.RESTMapping) *autoscalingv1.HorizontalPodAutoscaler {
	name := o.Name
	if name == "" {
		name = ref
	}
	h := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: m.GroupVersionKind.GroupVersion().String(), Kind: m.GroupVersionKind.Kind, Name: ref},
			MaxReplicas:    o.Max,
		},
	}
	if o.Min > 0 {
		h.Spec.MinReplicas = new(o.Min)
	}
	if o.CPUPercent >= 0 {
		h.Spec.TargetCPUUtilizationPercentage = new(o.CPUPercent)
	}
	return h
}

// parseResourceTarget is kubectl's parseResourceInput: "70%" is a
// utilization, a quantity an average value, a bare number a quantity in
// millicores (CPU) or mebibytes (memory).
func parseResourceTarget(input string, res corev1.ResourceName) (resource.Quantity, int32, autoscalingv2.MetricTargetType, error) {
	input = strings.TrimSpace(input)
	if input == "" {
		return resource.Quantity{}, 0, "", errors.New("empty input")
	}
	if trimmed, ok := strings.CutSuffix(input, "%"); ok {
		v, err := strconv.ParseInt(trimmed, 10, 32)
		if err != nil || v < 0 {
			return resource.Quantity{}, 0, "", fmt.Errorf("invalid percentage value: %s", trimmed)
		}
		return resource.Quantity{}, int32(v), autoscalingv2.UtilizationMetricType, nil
	}
	if f, err := strconv.ParseFloat(input, 64); err == nil {
		unit := "m"
		switch res {
		case corev1.ResourceCPU:
		case corev1.ResourceMemory:
			unit = "Mi"
		default:
			return resource.Quantity{}, 0, "", fmt.Errorf("unsupported resource type: %v", res)
		}
		q, err := resource.ParseQuantity(fmt.Sprintf("%g%s", f, unit))
		if err != nil {
			return resource.Quantity{}, 0, "", err
		}
		return q, 0, autoscalingv2.AverageValueMetricType, nil
	}
	q, err := resource.ParseQuantity(input)
	if err != nil {
		return resource.Quantity{}, 0, "", fmt.Errorf("invalid resource %s value: %s", res, input)
	}
	return q, 0, autoscalingv2.AverageValueMetricType, nil
}
