package csiattach

import (
	"crypto/sha256"
	"fmt"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
)

func TestNames(t *testing.T) {
	want := fmt.Sprintf("csi-%x", sha256.Sum256([]byte("vol-1"+"hostpath.csi.k8s.io"+"node-a")))
	if got := AttachmentName("vol-1", "hostpath.csi.k8s.io", "node-a"); got != want || len(got) != 4+64 {
		t.Errorf("AttachmentName = %q; want %q", got, want)
	}
	if got := UniqueVolumeName("hostpath.csi.k8s.io", "vol-1"); got != "kubernetes.io/csi/hostpath.csi.k8s.io^vol-1" {
		t.Errorf("UniqueVolumeName = %q", got)
	}
	for driver, want := range map[string]string{
		"hostpath.csi.k8s.io": "external-attacher/hostpath-csi-k8s-io",
		"ebs.csi.aws.com/":    "external-attacher/ebs-csi-aws-com-X",
		"plain":               "external-attacher/plain",
	} {
		if got := FinalizerName(driver); got != want {
			t.Errorf("FinalizerName(%q) = %q; want %q", driver, got, want)
		}
	}
	no, yes := false, true
	for name, c := range map[string]struct {
		d    *storagev1.CSIDriver
		want bool
	}{
		"no CSIDriver object":  {nil, true},
		"attachRequired unset": {&storagev1.CSIDriver{}, true},
		"attachRequired true":  {&storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{AttachRequired: &yes}}, true},
		"attachRequired false": {&storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{AttachRequired: &no}}, false},
	} {
		if got := AttachRequired(c.d); got != c.want {
			t.Errorf("%s: AttachRequired = %v; want %v", name, got, c.want)
		}
	}
}
