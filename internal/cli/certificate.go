package cli

import (
	"github.com/spf13/cobra"
	kcertificates "k8s.io/kubectl/pkg/cmd/certificates"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewCmdCertificate returns the certificate command and its approve and
// deny subcommands: kubectl's options (the Approved or Denied condition
// added through certificatesigningrequests/approval, retried on
// conflicts; a CSR already denied cannot be approved nor the reverse;
// --force writes the condition again) over minikctl's factory. Without
// a subcommand it prints its help and fails, as kubectl.
func NewCmdCertificate(f *Factory, streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:                   "certificate SUBCOMMAND",
		DisableFlagsInUseLine: true,
		Short:                 "Modify certificate resources",
		Long:                  "Modify certificate resources.",
		RunE:                  subcommandRun(streams.ErrOut),
	}
	cmd.AddCommand(newCmdCertificateVerb(f, streams, certificateApprove))
	cmd.AddCommand(newCmdCertificateVerb(f, streams, certificateDeny))
	return cmd
}

// certificateVerb is one of the certificate subcommands.
type certificateVerb struct {
	use, operation, short, long, example, force string
	run                                         func(o *kcertificates.CertificateOptions, force bool) error
}

var (
	certificateApprove = certificateVerb{
		use: "approve (-f FILENAME | NAME)", operation: "approved", short: "Approve a certificate signing request",
		long: `Approve a certificate signing request.

 minikctl certificate approve allows a cluster admin to approve a certificate signing request (CSR). This action tells a certificate signing controller to issue a certificate to the requester with the attributes requested in the CSR.

 SECURITY NOTICE: Depending on the requested attributes, the issued certificate can potentially grant a requester access to cluster resources or to authenticate as a requested identity. Before approving a CSR, ensure you understand what the signed certificate can do.`,
		example: `  # Approve CSR 'csr-sqgzp'
  minikctl certificate approve csr-sqgzp`,
		force: "Update the CSR even if it is already approved.",
		run:   (*kcertificates.CertificateOptions).RunCertificateApprove,
	}
	certificateDeny = certificateVerb{
		use: "deny (-f FILENAME | NAME)", operation: "denied", short: "Deny a certificate signing request",
		long: `Deny a certificate signing request.

 minikctl certificate deny allows a cluster admin to deny a certificate signing request (CSR). This action tells a certificate signing controller to not to issue a certificate to the requester.`,
		example: `  # Deny CSR 'csr-sqgzp'
  minikctl certificate deny csr-sqgzp`,
		force: "Update the CSR even if it is already denied.",
		run:   (*kcertificates.CertificateOptions).RunCertificateDeny,
	}
)

func newCmdCertificateVerb(f *Factory, streams IOStreams, v certificateVerb) *cobra.Command {
	o := kcertificates.NewCertificateOptions(kubectlStreams(streams), v.operation)
	var force bool
	cmd := &cobra.Command{
		Use:                   v.use,
		DisableFlagsInUseLine: true,
		Short:                 v.short,
		Long:                  v.long,
		Example:               v.example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(restClientGetter{f}, cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return v.run(o, force)
		},
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().BoolVar(&force, "force", false, v.force)
	cmdutil.AddFilenameOptionFlags(cmd, &o.FilenameOptions, "identifying the resource to update")
	return cmd
}
