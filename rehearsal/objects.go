package rehearsal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// ReadObjects reads the objects of YAML or JSON manifests: files, or directories whose
// .yaml, .yml and .json files are read, their subdirectories too. A file may hold several
// documents, separated by "---" lines, and a List holds its items.
func ReadObjects(paths ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, root := range paths {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || (path != root && !manifest(path)) {
				return nil
			}
			objs, err := readFile(path)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			out = append(out, objs...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func manifest(path string) bool {
	switch filepath.Ext(path) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func readFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("an object without apiVersion and kind: %v", m)
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, err
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		out = append(out, u)
	}
}

// readCRDs reads the CustomResourceDefinitions of paths; any other object is an error.
func readCRDs(paths []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	objs, err := ReadObjects(paths...)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, u := range objs {
		if u.GroupVersionKind() != apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
			return nil, fmt.Errorf("%s %s is not an apiextensions.k8s.io/v1 CustomResourceDefinition", u.GetKind(), u.GetName())
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: %w", u.GetName(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// storageVersion returns the version the CRD stores.
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// ReadCluster reads, from the cluster cfg reaches, the objects of every kind that the
// CustomResourceDefinitions of crds (files or directories) define, in every namespace,
// as the rehearsal takes them: without what the API server sets (uid, resourceVersion,
// creation time, managedFields, generation), without status and owner references, each
// in its CRD's storage version as crds say it. It only reads: get and list.
func ReadCluster(ctx context.Context, cfg *rest.Config, crds ...string) ([]*unstructured.Unstructured, error) {
	defs, err := readCRDs(crds)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, crd := range defs {
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: storageVersion(crd), Resource: crd.Spec.Names.Plural}
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
		}
		for i := range list.Items {
			out = append(out, strip(&list.Items[i]))
		}
	}
	return out, nil
}

// strip removes from obj what the API server sets and what names other objects of the
// cluster read.
func strip(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	delete(obj.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	// A hash of the operator's own, such as ownership's intent annotation, stays: it is
	// part of what the old build left and the new one reads.
	if a := obj.GetAnnotations(); a != nil {
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		obj.SetAnnotations(a)
	}
	return obj
}

// describeObject names an object for an error: "Memcached default/web".
func describeObject(u *unstructured.Unstructured) string {
	name := u.GetName()
	if u.GetNamespace() != "" {
		name = u.GetNamespace() + "/" + name
	}
	return strings.TrimSpace(u.GetKind() + " " + name)
}
