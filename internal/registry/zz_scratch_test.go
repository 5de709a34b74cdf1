package registry

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

func decodeYAML(t *testing.T, s string) runtime.Object {
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil { t.Fatal(err) }
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(j, nil, nil)
	if err != nil { t.Fatal(err) }
	return obj
}

func TestScratch(t *testing.T) {
	for _, m := range []string{`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: webx}}
    spec:
      containers:
      - name: Web
        ports: [{containerPort: 70000}]
`, `
apiVersion: v1
kind: Service
metadata: {name: 1web, namespace: default}
spec:
  ports: [{port: 80},{port: 80}]
`, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec:
  rules:
  - http:
      paths:
      - path: /
        backend: {service: {name: web, port: {number: 80}}}
`} {
		obj := decodeYAML(t, m)
		gvk := obj.GetObjectKind().GroupVersionKind()
		s := strategyFor(gvk.GroupKind())
		if s.Default != nil { s.Default(obj) }
		if s.PrepareForCreate != nil { s.PrepareForCreate(context.Background(), obj) }
		errs := s.Validate(context.Background(), obj)
		fmt.Println(apierrors.NewInvalid(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, "x", errs).Error())
		out, _ := yaml.Marshal(obj)
		fmt.Println(string(out))
	}
}
