package deployment

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

func webTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
	}
}

// The pinned hashes were computed by this implementation on the
// k8s.io/api v0.37.2 types, the types a kube-controller-manager 1.37 hashes
// (the rendering lists every field of the Go structs, so a new API field
// changes every hash, on a real cluster as here). A change of these values
// outside an API upgrade means the hash no longer is kube's.
func TestPodTemplateHashIsPinned(t *testing.T) {
	zero, one := int32(0), int32(1)
	web := webTemplate("nginx:1.27")
	tests := []struct {
		name      string
		template  corev1.PodTemplateSpec
		collision *int32
		want      string
	}{
		{"an empty template", corev1.PodTemplateSpec{}, nil, "54f4c57dcb"},
		{"a one-container template", web, nil, "74f8f75d46"},
		{"the same template after one collision", web, &one, PodTemplateHash(&web, &one)},
		{"a collision count of zero differs from none", web, &zero, PodTemplateHash(&web, &zero)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PodTemplateHash(&tt.template, tt.collision); got != tt.want {
				t.Fatalf("PodTemplateHash = %q, want %q", got, tt.want)
			}
		})
	}
	if PodTemplateHash(&web, &zero) == PodTemplateHash(&web, nil) || PodTemplateHash(&web, &one) == PodTemplateHash(&web, &zero) {
		t.Fatal("the collision count does not change the hash")
	}
}

// TestPodTemplateHashStepByStep recomputes the hash from kube's published
// recipe (controller.ComputeHash over hashutil.DeepHashObject), step by
// step, to show each step is the one kube takes.
func TestPodTemplateHashStepByStep(t *testing.T) {
	web := webTemplate("nginx:1.27")
	text := dump.ForHash(web)
	// The deep-hash rendering is spew's %#v with types and sorted keys.
	if prefix := "(v1.PodTemplateSpec){ObjectMeta:(v1.ObjectMeta){Name:(string) GenerateName:(string) "; !strings.HasPrefix(text, prefix) {
		t.Fatalf("rendering starts %q, want %q", text[:min(len(text), len(prefix))], prefix)
	}
	if !strings.Contains(text, "Labels:(map[string]string)map[app:web]") {
		t.Fatalf("rendering does not list the labels: %s", text)
	}
	for _, collision := range []int32{3, 1 << 20} {
		h := fnv.New32a()
		h.Write([]byte(text))
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], uint32(collision))
		h.Write(b[:])
		want := rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
		if got := PodTemplateHash(&web, &collision); got != want {
			t.Fatalf("collision %d: PodTemplateHash = %q, recomputed %q", collision, got, want)
		}
	}
}

func TestPodTemplateHashLooksLikeKubes(t *testing.T) {
	// The example, web-6d4cf56db6, is the safe encoding of a 32-bit
	// FNV sum; every hash draws from the same ten characters.
	if got := rand.SafeEncodeString("2807912862"); got != "6d4cf56db6" {
		t.Fatalf("SafeEncodeString(2807912862) = %q, want 6d4cf56db6", got)
	}
	for i := range 50 {
		tmpl := webTemplate("nginx:1." + strconv.Itoa(i))
		h := PodTemplateHash(&tmpl, nil)
		if len(h) == 0 || len(h) > 10 || strings.Trim(h, "456789bcdf") != "" {
			t.Fatalf("hash %q is not a safe-encoded 32-bit decimal", h)
		}
	}
}

func TestPodTemplateHashIgnoresPointerIdentity(t *testing.T) {
	a, b := webTemplate("nginx:1.27"), webTemplate("nginx:1.27")
	grace1, grace2 := int64(30), int64(30)
	a.Spec.TerminationGracePeriodSeconds, b.Spec.TerminationGracePeriodSeconds = &grace1, &grace2
	if PodTemplateHash(&a, nil) != PodTemplateHash(&b, nil) {
		t.Fatal("equal templates with distinct pointers hash differently")
	}
	b.Spec.Containers[0].Image = "nginx:1.28"
	if PodTemplateHash(&a, nil) == PodTemplateHash(&b, nil) {
		t.Fatal("different images hash the same")
	}
}
