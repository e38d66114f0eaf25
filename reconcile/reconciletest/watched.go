package reconciletest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// watchedNamespaces are the namespaces an operator's cache watches in a test: every one,
// or those listed.
type watchedNamespaces struct {
	all   bool
	names []string

	once sync.Once // the first write outside them is reported, not the retries
}

// watched returns the namespaces ns and more, or every namespace if more holds
// AllNamespaces.
func watched(ns string, more ...string) *watchedNamespaces {
	if slices.Contains(more, AllNamespaces) {
		return &watchedNamespaces{all: true}
	}
	names := []string{ns}
	for _, n := range more {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return &watchedNamespaces{names: names}
}

// has reports whether the cache watches the namespace ns; "" (a cluster-scoped object, a
// request across namespaces) always.
func (w *watchedNamespaces) has(ns string) bool {
	return w.all || ns == "" || slices.Contains(w.names, ns)
}

// cacheNamespaces returns the cache's DefaultNamespaces that watch these namespaces.
func (w *watchedNamespaces) cacheNamespaces() map[string]cache.Config {
	if w.all {
		return nil // every namespace
	}
	m := make(map[string]cache.Config, len(w.names))
	for _, n := range w.names {
		m[n] = cache.Config{}
	}
	return m
}

// guard returns a hook that tells fail, once, of the operator's first write in a namespace
// its cache does not watch: it would never see the object it wrote change, nor read it from
// its cache. field names the setting that adds a namespace.
func (w *watchedNamespaces) guard(field string, fail func(message string)) func(*Request) (*http.Response, error) {
	return func(r *Request) (*http.Response, error) {
		if r.Namespace != "" && isWrite(r.Verb, r.Resource) && r.Resource != "events" && !w.has(r.Namespace) {
			w.once.Do(func() {
				fail(fmt.Sprintf("reconciletest: the operator wrote %s in the namespace %q, which its cache does not watch (it watches %s): "+
					"it would never see what it wrote there. Add the namespace to %s before the operator starts, or reconciletest.AllNamespaces in it for every one",
					r.Verb+" "+r.resource(), r.Namespace, strings.Join(w.names, ", "), field))
			})
		}
		return r.Send()
	}
}

// outsideCache reports whether err is a read of a manager's cache in a namespace it does
// not watch, as controller-runtime's multi-namespace cache refuses it.
func outsideCache(err error) bool {
	return err != nil && strings.Contains(err.Error(), "unknown namespace for the cache")
}
