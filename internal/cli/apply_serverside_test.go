package cli

import "testing"

func TestApplyServerSideOptions(t *testing.T) {
	kc := writeKubeconfig(t)
	for _, tt := range []struct {
		name        string
		args        []string
		wantManager string
		wantForce   bool
	}{
		{"client-side apply keeps its own manager", []string{"apply", "-f", "a.yaml"}, "kubectl-client-side-apply", false},
		{"--server-side defaults the manager to kubectl", []string{"apply", "-f", "a.yaml", "--server-side"}, "kubectl", false},
		{"--field-manager wins over the default", []string{"apply", "-f", "a.yaml", "--server-side", "--field-manager=ci"}, "ci", false},
		{"--force-conflicts is kept", []string{"apply", "-f", "a.yaml", "--server-side", "--force-conflicts", "--dry-run=server"}, "kubectl", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseApply(t, append([]string{"--kubeconfig", kc}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if o.FieldManager != tt.wantManager || o.ForceConflicts != tt.wantForce {
				t.Errorf("manager %q force %v, want %q %v", o.FieldManager, o.ForceConflicts, tt.wantManager, tt.wantForce)
			}
		})
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "-f", "a.yaml", "--force-conflicts"}, "--force-conflicts only works with --server-side"},
		{[]string{"apply", "-f", "a.yaml", "--server-side", "--dry-run=client"}, "--dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)"},
	} {
		if _, err := parseApply(t, append([]string{"--kubeconfig", kc}, tt.args...)...); err == nil || err.Error() != tt.want {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.want)
		}
	}
}
