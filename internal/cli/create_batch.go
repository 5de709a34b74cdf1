package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newCmdCreateJob is kubectl's "create job": a Job of one container named
// after it, restartPolicy Never, or a manual run of a CronJob (--from).
func newCmdCreateJob(f *Factory, streams IOStreams) *cobra.Command {
	o := &CreateOptions{Streams: streams}
	var image, from string
	cmd := &cobra.Command{
		Use:                   "job NAME --image=image [--from=cronjob/name] -- [COMMAND] [args...]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a job with the specified name",
		Long:                  "Create a job with the specified name.",
		Example: `  # Create a job
  minikctl create job my-job --image=busybox

  # Create a job with a command
  minikctl create job my-job --image=busybox -- date

  # Create a job from a cron job named "a-cronjob"
  minikctl create job test-job --from=cronjob/a-cronjob`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var command []string
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				command, args = args[n:], args[:n]
			}
			name, err := nameArg(cmd, args)
			if err != nil {
				return err
			}
			if image == "" && from == "" {
				return errors.New("either --image or --from must be specified")
			}
			if image != "" && from != "" {
				return errors.New("--image and --from are mutually exclusive")
			}
			if from != "" && len(command) > 0 {
				return errors.New("cannot specify --from and command")
			}
			if err := o.complete(); err != nil {
				return err
			}
			var job *batchv1.Job
			if from == "" {
				job = &batchv1.Job{
					ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers:    []corev1.Container{{Name: name, Image: image, Command: command}},
						RestartPolicy: corev1.RestartPolicyNever,
					}}},
				}
			} else {
				kind, cjName, ok := strings.Cut(from, "/")
				switch strings.ToLower(kind) {
				case "cronjob", "cronjobs", "cj", "cronjob.batch", "cronjobs.batch":
				default:
					ok = false
				}
				if !ok || cjName == "" {
					return fmt.Errorf("from must be an existing cronjob: %s", from)
				}
				ns, _, err := f.Namespace()
				if err != nil {
					return err
				}
				cs, err := f.KubernetesClientSet()
				if err != nil {
					return err
				}
				cj, err := cs.BatchV1().CronJobs(ns).Get(cmd.Context(), cjName, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("failed to retrieve object from cronjob/%s: %w", cjName, err)
				}
				job = jobFromCronJob(name, cj)
			}
			job.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
			return o.createGenerated(cmd.Context(), f, job)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&image, "image", "", "Image name to run.")
	cmd.Flags().StringVar(&from, "from", "", "The name of the resource to create a Job from (only cronjob is supported).")
	return cmd
}

// jobFromCronJob is a manual run of cj, as kubectl makes it: the job
// template, marked "cronjob.kubernetes.io/instantiate: manual" and owned
// by the CronJob.
func jobFromCronJob(name string, cj *batchv1.CronJob) *batchv1.Job {
	annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: annotations,
			Labels:      cj.Spec.JobTemplate.Labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: new(true),
			}},
		},
		Spec: cj.Spec.JobTemplate.Spec,
	}
}

// newCmdCreateCronJob is kubectl's "create cronjob".
func newCmdCreateCronJob(f *Factory, streams IOStreams) *cobra.Command {
	o := &CreateOptions{Streams: streams}
	var image, schedule, restart string
	cmd := &cobra.Command{
		Use:                   "cronjob NAME --image=image --schedule='0/5 * * * ?' -- [COMMAND] [args...] [flags]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"cj"},
		Short:                 "Create a cron job with the specified name",
		Long:                  "Create a cron job with the specified name.",
		Example: `  # Create a cron job
  minikctl create cronjob my-job --image=busybox --schedule="*/1 * * * *"

  # Create a cron job with a command
  minikctl create cronjob my-job --image=busybox --schedule="*/1 * * * *" -- date`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var command []string
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				command, args = args[n:], args[:n]
			}
			name, err := nameArg(cmd, args)
			if err != nil {
				return err
			}
			switch corev1.RestartPolicy(restart) {
			case corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
			default:
				return fmt.Errorf("invalid restart policy: %s", restart)
			}
			if err := o.complete(); err != nil {
				return err
			}
			cj := &batchv1.CronJob{
				TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: batchv1.CronJobSpec{
					Schedule: schedule,
					JobTemplate: batchv1.JobTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Name: name},
						Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
							Containers:    []corev1.Container{{Name: name, Image: image, Command: command}},
							RestartPolicy: corev1.RestartPolicy(restart),
						}}},
					},
				},
			}
			return o.createGenerated(cmd.Context(), f, cj)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&image, "image", "", "Image name to run.")
	_ = cmd.MarkFlagRequired("image")
	cmd.Flags().StringVar(&schedule, "schedule", "", "A schedule in the Cron format the job should be run with.")
	_ = cmd.MarkFlagRequired("schedule")
	cmd.Flags().StringVar(&restart, "restart", "OnFailure", "job's restart policy. supported values: OnFailure, Never")
	return cmd
}
