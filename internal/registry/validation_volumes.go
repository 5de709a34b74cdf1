package registry

import (
	"path"
	"path/filepath"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const fileModeMsg = "must be a number between 0 and 0777 (octal), both inclusive"

// validateVolumes checks a pod's volumes and returns the valid ones by name,
// for the containers' mounts to refer to.
func validateVolumes(volumes []corev1.Volume, podName string, p *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	vols := map[string]corev1.VolumeSource{}
	for i, v := range volumes {
		ip := p.Index(i)
		namePath := ip.Child("name")
		el := validateVolumeSource(&v.VolumeSource, ip, v.Name, podName)
		if v.Name == "" {
			el = append(el, field.Required(namePath, ""))
		} else {
			el = append(el, validateDNS1123Label(v.Name, namePath)...)
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(namePath, v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
			vols[v.Name] = v.VolumeSource
		} else {
			errs = append(errs, el...)
		}
	}
	return vols, errs
}

// volumeSourceOrder lists VolumeSource's fields (by JSON name) in the order
// kube-apiserver examines them, with the name its "may not specify more than
// 1 volume type" message gives each (two of which differ from the JSON name).
var volumeSourceOrder = []struct{ json, inError string }{
	{"emptyDir", "emptyDir"}, {"hostPath", "hostPath"}, {"gitRepo", "gitRepo"},
	{"gcePersistentDisk", "gcePersistentDisk"}, {"awsElasticBlockStore", "awsElasticBlockStore"},
	{"secret", "secret"}, {"nfs", "nfs"}, {"iscsi", "iscsi"}, {"glusterfs", "glusterfs"},
	{"flocker", "flocker"}, {"persistentVolumeClaim", "persistentVolumeClaim"}, {"rbd", "rbd"},
	{"cinder", "cinder"}, {"cephfs", "cephFS"}, {"quobyte", "quobyte"}, {"downwardAPI", "downwarAPI"},
	{"fc", "fc"}, {"flexVolume", "flexVolume"}, {"configMap", "configMap"}, {"azureFile", "azureFile"},
	{"vsphereVolume", "vsphereVolume"}, {"photonPersistentDisk", "photonPersistentDisk"},
	{"portworxVolume", "portworxVolume"}, {"azureDisk", "azureDisk"}, {"storageos", "storageos"},
	{"projected", "projected"}, {"scaleIO", "scaleIO"}, {"csi", "csi"}, {"ephemeral", "ephemeral"},
	{"image", "image"},
}

// volumeSourceIndex maps VolumeSource's JSON field names to field indexes.
var volumeSourceIndex = func() map[string]int {
	t := reflect.TypeFor[corev1.VolumeSource]()
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = i
	}
	return out
}()

func validateVolumeSource(src *corev1.VolumeSource, p *field.Path, volName, podName string) field.ErrorList {
	var errs field.ErrorList
	n := 0
	v := reflect.ValueOf(src).Elem()
	for _, f := range volumeSourceOrder {
		i, ok := volumeSourceIndex[f.json]
		if !ok || v.Field(i).Kind() != reflect.Pointer || v.Field(i).IsNil() {
			continue
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(f.inError), "may not specify more than 1 volume type"))
			continue
		}
		n++
		errs = append(errs, validateOneVolumeSource(src, f.json, p.Child(f.json), volName, podName)...)
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

// validateOneVolumeSource checks the source kinds a workload on minik uses;
// the cloud and legacy storage sources are only counted.
func validateOneVolumeSource(src *corev1.VolumeSource, kind string, p *field.Path, volName, podName string) field.ErrorList {
	var errs field.ErrorList
	switch kind {
	case "emptyDir":
		if l := src.EmptyDir.SizeLimit; l != nil && l.Cmp(resource.Quantity{}) < 0 {
			errs = append(errs, field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
		}
	case "hostPath":
		if src.HostPath.Path == "" {
			return field.ErrorList{field.Required(p.Child("path"), "")}
		}
		errs = append(errs, validatePathNoBacksteps(src.HostPath.Path, p.Child("path"))...)
		if t := src.HostPath.Type; t != nil && !supportedHostPathTypes.Has(*t) {
			errs = append(errs, field.NotSupported(p.Child("type"), t, sets.List(supportedHostPathTypes)))
		}
	case "secret":
		if src.Secret.SecretName == "" {
			errs = append(errs, field.Required(p.Child("secretName"), ""))
		}
		errs = append(errs, validateFileMode(src.Secret.DefaultMode, p.Child("defaultMode"))...)
		for i, kp := range src.Secret.Items {
			errs = append(errs, validateKeyToPath(&kp, p.Child("items").Index(i))...)
		}
	case "configMap":
		if src.ConfigMap.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		errs = append(errs, validateFileMode(src.ConfigMap.DefaultMode, p.Child("defaultMode"))...)
		for i, kp := range src.ConfigMap.Items {
			errs = append(errs, validateKeyToPath(&kp, p.Child("items").Index(i))...)
		}
	case "persistentVolumeClaim":
		if src.PersistentVolumeClaim.ClaimName == "" {
			errs = append(errs, field.Required(p.Child("claimName"), ""))
		}
	case "nfs":
		if src.NFS.Server == "" {
			errs = append(errs, field.Required(p.Child("server"), ""))
		}
		if src.NFS.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		if !path.IsAbs(src.NFS.Path) {
			errs = append(errs, field.Invalid(p.Child("path"), src.NFS.Path, "must be an absolute path"))
		}
	case "downwardAPI":
		errs = append(errs, validateFileMode(src.DownwardAPI.DefaultMode, p.Child("defaultMode"))...)
		for _, f := range src.DownwardAPI.Items {
			errs = append(errs, validateDownwardAPIVolumeFile(&f, p)...)
		}
	case "projected":
		errs = append(errs, validateFileMode(src.Projected.DefaultMode, p.Child("defaultMode"))...)
		errs = append(errs, validateProjectionSources(src.Projected, p)...)
	case "ephemeral":
		if src.Ephemeral.VolumeClaimTemplate == nil {
			errs = append(errs, field.Required(p.Child("volumeClaimTemplate"), ""))
		}
		if podName != "" && volName != "" {
			pvc := podName + "-" + volName
			for _, msg := range nameIsDNSSubdomain(pvc, false) {
				errs = append(errs, field.Invalid(p.Child("name"), volName, "PVC name \""+pvc+"\": "+msg))
			}
		}
	}
	return errs
}

var supportedHostPathTypes = sets.New(
	corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket,
	corev1.HostPathCharDev, corev1.HostPathBlockDev)

func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(p, *mode, fileModeMsg)}
	}
	return nil
}

func validateKeyToPath(kp *corev1.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if kp.Key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	}
	if kp.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(kp.Path, p.Child("path"))...)
	errs = append(errs, validateFileMode(kp.Mode, p.Child("mode"))...)
	return errs
}

var volumeDownwardAPIFieldPaths = sets.New(
	"metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid")

func validateDownwardAPIVolumeFile(f *corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(f.Path, p.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		errs = append(errs, validateObjectFieldSelector(f.FieldRef, volumeDownwardAPIFieldPaths, p.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		errs = append(errs, validateResourceFieldSelector(f.ResourceFieldRef, true, p.Child("resourceFieldRef"))...)
	default:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	errs = append(errs, validateFileMode(f.Mode, p.Child("mode"))...)
	return errs
}

func validateProjectionSources(proj *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	addPath := func(cur string, value any) {
		if cur == "" {
			return
		}
		if paths.Has(cur) {
			errs = append(errs, field.Invalid(p, value, "conflicting duplicate paths"))
		}
		paths.Insert(cur)
	}
	for i, s := range proj.Sources {
		n := 0
		sp := p.Child("sources").Index(i)
		if s.Secret != nil {
			n++
			if s.Secret.Name == "" {
				errs = append(errs, field.Required(sp.Child("secret", "name"), ""))
			}
			for j, kp := range s.Secret.Items {
				errs = append(errs, validateKeyToPath(&kp, sp.Child("secret", "items").Index(j))...)
				addPath(kp.Path, s.Secret.Name)
			}
		}
		if s.ConfigMap != nil {
			n++
			if s.ConfigMap.Name == "" {
				errs = append(errs, field.Required(sp.Child("configMap", "name"), ""))
			}
			for j, kp := range s.ConfigMap.Items {
				errs = append(errs, validateKeyToPath(&kp, sp.Child("configMap", "items").Index(j))...)
				addPath(kp.Path, s.ConfigMap.Name)
			}
		}
		if s.DownwardAPI != nil {
			n++
			for _, f := range s.DownwardAPI.Items {
				errs = append(errs, validateDownwardAPIVolumeFile(&f, sp.Child("downwardAPI"))...)
				addPath(f.Path, f.Path)
			}
		}
		if t := s.ServiceAccountToken; t != nil {
			n++
			tp := sp.Child("serviceAccountToken")
			if exp := t.ExpirationSeconds; exp != nil {
				if *exp < 10*60 {
					errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration less than 10 minutes"))
				}
				if *exp > 1<<32 {
					errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration larger than 2^32 seconds"))
				}
			}
			if t.Path == "" {
				errs = append(errs, field.Required(p.Child("path"), ""))
			} else {
				errs = append(errs, validateLocalNonReservedPath(t.Path, p.Child("path"))...)
			}
		}
		if s.ClusterTrustBundle != nil {
			n++
		}
		if s.PodCertificate != nil {
			n++
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type"))
		}
	}
	return errs
}

// validateLocalDescendingPath requires a relative path without "..".
func validateLocalDescendingPath(target string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(target) {
		errs = append(errs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(errs, validatePathNoBacksteps(target, p)...)
}

func validatePathNoBacksteps(target string, p *field.Path) field.ErrorList {
	for _, part := range strings.Split(filepath.ToSlash(target), "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

func validateLocalNonReservedPath(target string, p *field.Path) field.ErrorList {
	errs := validateLocalDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, field.Invalid(p, target, "must not start with '..'"))
	}
	return errs
}
