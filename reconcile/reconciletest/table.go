package reconciletest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	rtreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/reconcilekit/reconcilekit/internal/statusfield"
	"github.com/reconcilekit/reconcilekit/ownership"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// DefaultNow is the time of a case's Clock unless the case sets Now: a whole second,
// as the API server stores times, so that the transition times the shell stamps compare
// equal to the ones a case expects. Read it; do not change it.
var DefaultNow = time.Date(2030, time.January, 1, 12, 0, 0, 0, time.UTC)

// CaseNamespace stands for the case's namespace, whose name is generated, wherever a case
// names it: in any string of the objects it gives and wants ("web.{namespace}.svc", a
// binding's subject), and in the text of the status, events and error it expects
// ("Deployment {namespace}/web exists").
const CaseNamespace = "{namespace}"

// CaseConfigHash stands for ownership.ConfigHash(objs...) with the objects in the case's
// namespace, in any string of the objects a case gives and wants: the hash covers each
// object's namespace, which is generated, so a case cannot write the hash itself. A
// workload that rolls on a change of its ConfigMap is expected as
//
//	want.Spec.Template.Annotations = map[string]string{
//		ownership.ConfigHashAnnotation: reconciletest.CaseConfigHash(settings),
//	}
//
// An object without a namespace, or with CaseNamespace, is put in the case's; a nil one
// counts as absent, as for ConfigHash. Only the objects' content is hashed, so they need
// not exist. In YAML, write the value this returns.
func CaseConfigHash(objs ...client.Object) string {
	entries := make([]map[string]any, len(objs))
	for i, obj := range objs {
		if obj == nil || reflect.ValueOf(obj).IsNil() {
			continue // null: absent
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			panic(fmt.Sprintf("reconciletest: CaseConfigHash of a %T: %v", obj, err)) // a programming error, as for a bad literal
		}
		entries[i] = content
	}
	raw, _ := json.Marshal(entries) // of maps that came from JSON
	return configHashOpen + base64.RawURLEncoding.EncodeToString(raw) + "}"
}

const configHashOpen = "{config-hash:"

var configHashToken = regexp.MustCompile(`\{config-hash:([A-Za-z0-9_-]*)\}`)

// inCase returns a copy of obj with every CaseNamespace and CaseConfigHash in it said for
// the case's namespace ns.
func inCase(obj client.Object, ns string) (client.Object, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(raw, []byte(CaseNamespace)) && !bytes.Contains(raw, []byte(configHashOpen)) {
		return obj, nil
	}
	raw = bytes.ReplaceAll(raw, []byte(CaseNamespace), []byte(ns))
	var hashErr error
	raw = configHashToken.ReplaceAllFunc(raw, func(token []byte) []byte {
		h, err := configHashIn(string(configHashToken.FindSubmatch(token)[1]), ns)
		if err != nil && hashErr == nil {
			hashErr = err
		}
		return []byte(h)
	})
	if hashErr != nil {
		return nil, hashErr
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, err
	}
	return out, nil
}

// configHashIn is the hash a CaseConfigHash stands for in the namespace ns.
func configHashIn(encoded, ns string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return "", fmt.Errorf("a CaseConfigHash that CaseConfigHash did not write: %w", err)
	}
	var entries []map[string]any
	if err := json.Unmarshal(raw, &entries); err != nil {
		return "", fmt.Errorf("a CaseConfigHash that CaseConfigHash did not write: %w", err)
	}
	objs := make([]client.Object, len(entries))
	for i, content := range entries {
		if content == nil {
			objs[i] = nil // absent
			continue
		}
		u := &unstructured.Unstructured{Object: content}
		if u.GetNamespace() == "" || u.GetNamespace() == CaseNamespace {
			u.SetNamespace(ns)
		}
		objs[i] = u
	}
	return ownership.ConfigHash(objs...)
}

// ReconcilerTests is a table of reconciler tests. Each case creates the objects it
// names in a namespace of its own on a real API server, builds the reconciler under
// test, calls its Reconcile once with the case's object, and checks what happened: the
// writes sent, the objects that exist afterwards, the status written, the events
// recorded and the result returned.
//
// There is no manager and no cache, so a case costs a few requests: tens of
// milliseconds rather than the seconds of a test that runs the operator. What it does
// not prove is what needs the operator running: watches, the garbage collector, RBAC,
// how reconciles follow one another. The tests that run the operator keep that.
//
// Set the fields, then Run. A table may be a package variable; Run does not change it.
type ReconcilerTests struct {
	// ControlPlane is the API server the cases share. Nil: Run starts one for the
	// table, an API server alone with the CRDs of CRDDirectories, and stops it at
	// the end. Share one among tables with StartAPIServer, or give Start's in a
	// TestMain. An API server alone is the right one: in a cluster, controllers
	// act on the cases' objects while they are checked.
	ControlPlane *ControlPlane

	// CRDDirectories hold the CustomResourceDefinitions to install when Run starts
	// the control plane.
	CRDDirectories []string

	// AddToScheme adds the API types of the cases' objects to a scheme; client-go's
	// types are always there. Every object a case names must be of a type the
	// scheme knows.
	AddToScheme func(*runtime.Scheme) error

	// Controller is the declaration of the controller under test: each case runs its
	// shell (reconcile.Controller.Reconciler) with the case's client, clock and
	// recorder. Set it or Reconciler.
	Controller reconcile.Declaration

	// Reconciler builds the reconciler under test for one case, from the client,
	// clock and recorder the case gives it, for a reconciler not declared with package
	// reconcile. Set it or Controller.
	Reconciler func(Deps) rtreconcile.Reconciler

	// Restricted makes each case's namespace enforce the restricted Pod Security
	// Standard, as the operators' own tests do: a pod the reconciler creates that
	// could run as root is refused, as a hardened cluster would refuse it.
	Restricted bool

	// Role, if set, is the file of the operator's ClusterRole, generated from its RBAC
	// markers (config/rbac/role.yaml): each case's reconciler then authenticates as User,
	// whom that role alone empowers, as the operator runs, so that a verb the markers lack
	// fails the case with the API server's refusal rather than passing as an
	// administrator. The reconciler reads uncached here: the role needs get of what it
	// reads, which the manager's cache would have served.
	Role string

	// User is the name the reconciler authenticates as under Role, such as
	// "widget-operator".
	User string

	// Operator, if set, is the operator whose role check (Operator.Main, CheckRole)
	// counts the requests each case's reconciler sends, as it counts its managers': a
	// verb only a table's cases reach (deleting a finished Job, say) is then one the
	// operator used.
	Operator *Operator

	// Cases are the cases, run in parallel unless they name cluster-scoped objects.
	Cases []ReconcilerTestCase
}

// Deps is what a case gives the reconciler it builds.
type Deps struct {
	// Client is a client of the case's API server, authenticated as an
	// administrator, with no cache: every read and write reaches the server, and the
	// case sees each at the transport. Use it for both reads and writes, even for
	// a reconciler that takes an uncached reader of its own.
	Client client.Client

	// Clock reads the case's Now until the reconciler moves it.
	Clock *Clock

	// Recorder collects the events the reconciler records, for WantEvents.
	Recorder events.EventRecorder
}

// ReconcilerTestCase is one case of a ReconcilerTests: what exists, the object
// reconciled, and what must happen. The zero value of each Want field but WantObjects
// and WantStatus expects nothing: no writes, no events, an empty result, no error. So a
// case states every write and event the reconcile makes, and one it did not expect
// fails it.
//
// Objects are written without a namespace: every namespaced object without one is put
// in the case's namespace. One that names another namespace is kept there, in Given (the
// namespace is made if need be) and in WantObjects alike; a namespace made of the case's
// ("tenant-{namespace}") says CaseNamespace in it. Where an object names the namespace
// elsewhere (a Service's address in an environment variable, a binding's subject), it
// says CaseNamespace; a config hash over objects of the case is CaseConfigHash. Both
// are replaced in Given, GivenYAML, WantObjects and WantObjectsYAML. An owner reference without a UID names an
// object of the case by API version, kind and name, and gets its UID, so that a child
// can be owned by an object that does not exist yet when the table is written.
// Cluster-scoped objects keep their names; a case that names one, or an object in a
// namespace not made of its own, runs alone (not in parallel), and deletes those Given
// objects when it ends. A namespace the case made, given or for a given object in it,
// goes for good when the case ends, with the objects in it of the kinds the case gives
// or wants, on an API server alone too; so does one the reconciler made during the case
// when its name is made of the case's namespace or the case runs alone (a cluster-scoped
// tenant's "tenant-acme"). One of a fixed name made by a case that runs beside others,
// which another case may share, is left and named in the test's log.
type ReconcilerTestCase struct {
	// Name names the case's subtest and, through it, its namespace.
	Name string

	// Object is the object to reconcile, created first, with its status if it has
	// one. Required.
	Object client.Object

	// Given are the other objects that exist before the reconcile, created in order
	// after Object, each with its status if it has one: a Deployment with ready
	// replicas, a pod that has succeeded.
	Given []client.Object

	// GivenYAML holds more of them as manifests, separated by "---" lines, created
	// after Given.
	GivenYAML string

	// Now is the time of the case's Clock; zero means DefaultNow.
	Now time.Time

	// ReconciledBefore is how many times the object is reconciled, unchecked, before
	// the reconcile the case checks: with 1, the case checks a second reconcile, which
	// a converged reconciler makes without a write. Faults and WantEvents are for the
	// checked reconcile alone.
	ReconciledBefore int

	// Meanwhile, if set, runs after the reconciles of ReconciledBefore and before the
	// one the case checks, with an administrator's client and the case's namespace:
	// what the cluster does in between on an API server alone, where no controller
	// runs. A Deployment controller's status, say, or a person's edit of the spec. An
	// error fails the case.
	Meanwhile func(ctx context.Context, c client.Client, namespace string) error

	// Faults, if set, fail some of the requests of the checked reconcile, as Faults
	// does. Wrap is not called: the case applies it to the reconciler's client.
	Faults *Faults

	// WantRequests are the writes the reconcile sends, in order, each as "verb
	// resource": "create deployments", "patch podsets/status". Verbs and resources
	// are named as Counter names them. A request failed by Faults was sent, and is
	// listed. Reads are not compared, since a manager would serve most from its
	// cache; the failure message lists them all.
	WantRequests []string

	// WantObjects are objects that exist afterwards. Each is defaulted by the API
	// server (a dry-run create) and compared with the live object of its kind and
	// name with go-cmp. Not compared: resourceVersion, uid, creationTimestamp,
	// generation, managedFields, generateName, ownership.IntentAnnotation (a hash no
	// person writes), an empty field with a missing one, the fields the API server
	// assigns that the object leaves empty (a Service's cluster IPs and node
	// ports; a Job's selector and its pods' labels batch.kubernetes.io/controller-uid,
	// controller-uid, batch.kubernetes.io/job-name and job-name, which name the Job
	// and its UID unless spec.manualSelector is true, and the Job's own labels too when
	// it sets none, since it then takes its pods'; a label the object sets itself is
	// compared), and status: the status of the object reconciled is WantStatus's, and
	// nothing writes the status of the others on an API server alone; nor a Namespace's
	// label kubernetes.io/metadata.name, which the API server sets to its name, unless
	// the object sets it. Every kind named here is listed whole in each namespace it is
	// named in: an object of that kind there that WantObjects does not name fails the
	// case, as does one it names that does not exist. Cluster-scoped objects are
	// compared by name alone. An object in another namespace names it (with
	// CaseNamespace, "tenant-{namespace}", for one made after the case's), as does a
	// Namespace (Name "tenant-{namespace}"). An object with a GenerateName and no Name
	// stands for an object of that generateName, kind and namespace, each such wanted
	// object for another, the oldest first.
	WantObjects []client.Object

	// WantObjectsYAML holds more of them as manifests, separated by "---" lines.
	WantObjectsYAML string

	// WantStatus, if not nil, is the status of the object reconciled afterwards, the
	// value of its status field (the one tagged json:"status", or else the field named
	// Status), such as a v1alpha1.PodSetStatus, with CaseNamespace
	// for the case's namespace. Transition times are compared too: the shell stamps
	// them with the case's Clock.
	WantStatus any

	// WantEvents are the events recorded, in order, as events.FakeRecorder formats
	// them, "type reason note", with CaseNamespace for the case's namespace: "Warning
	// ReconcileError broken".
	WantEvents []string

	// WantResult is the result Reconcile returns.
	WantResult rtreconcile.Result

	// WantErr is part of the text of the error Reconcile returns, with CaseNamespace
	// for the case's namespace; empty means no error.
	WantErr string
}

// Run runs every case as a subtest of t, each in a namespace of its own on the table's
// control plane, and logs the time the cases took once they have all run.
func (rt ReconcilerTests) Run(t *testing.T) {
	t.Helper()
	h := rt.harness(t)
	h.warmUp(t)
	var (
		mu   sync.Mutex
		took []time.Duration
	)
	t.Cleanup(func() { // after every subtest, parallel ones included
		if len(took) > 0 {
			t.Logf("table tests: %s", summarize(took))
		}
	})
	for _, tc := range rt.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			objs, err := h.caseObjects(tc)
			if err != nil {
				t.Fatalf("reconciletest: %v", err)
			}
			if !h.anyClusterScoped(t, objs) {
				t.Parallel()
			}
			start := time.Now()
			h.run(t, tc, objs)
			mu.Lock()
			took = append(took, time.Since(start))
			mu.Unlock()
		})
	}
}

// RunCase runs one case on t, in the calling goroutine: for a case that is no table's,
// or a testing.TB of the test's own. Without a ControlPlane it starts one for t.
func (rt ReconcilerTests) RunCase(t testing.TB, tc ReconcilerTestCase) {
	t.Helper()
	h := rt.harness(t)
	objs, err := h.caseObjects(tc)
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	h.run(t, tc, objs)
}

// harness is what the cases of one table share.
type harness struct {
	rt      ReconcilerTests
	cp      *ControlPlane
	scheme  *runtime.Scheme
	decoder runtime.Decoder
	admin   client.Client // an administrator's, uncounted: the case's own moves
	config  *rest.Config  // the reconciler's: an administrator's, or Role's
}

func (rt ReconcilerTests) harness(t testing.TB) *harness {
	t.Helper()
	if (rt.Reconciler == nil) == (rt.Controller == nil) {
		t.Fatal("reconciletest: set one of ReconcilerTests.Controller and ReconcilerTests.Reconciler")
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	if rt.AddToScheme != nil {
		if err := rt.AddToScheme(scheme); err != nil {
			t.Fatalf("reconciletest: %v", err)
		}
	}
	cp := rt.ControlPlane
	if cp == nil {
		cp = StartAPIServer(t, rt.CRDDirectories...)
	}
	mapper, err := mapperOf(cp)
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	admin, err := client.New(cp.Config, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	config := cp.Config
	if rt.Role != "" {
		if rt.User == "" {
			t.Fatal("reconciletest: ReconcilerTests.Role needs User, the name the reconciler authenticates as")
		}
		name, err := cp.createClusterRole(t.Context(), rt.Role, func(role *rbacv1.ClusterRole) {
			role.Name = rt.User + "-" + role.Name + "-" + utilrand.String(5) // one for each table
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cp.client.Delete(context.Background(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}})
		})
		config = cp.ConfigFor(t, rt.User, name)
	}
	if rt.Operator != nil {
		config = rt.Operator.Track(config)
	}
	return &harness{
		rt:      rt,
		cp:      cp,
		scheme:  scheme,
		decoder: serializer.NewCodecFactory(scheme).UniversalDeserializer(),
		admin:   admin,
		config:  config,
	}
}

// mappers hold a RESTMapper for each control plane, shared by every table and case
// that runs on it: a mapper learns an API group by asking the server, which costs more
// than a whole case, and need ask only once.
var mappers sync.Map // *ControlPlane → meta.RESTMapper

func mapperOf(cp *ControlPlane) (meta.RESTMapper, error) {
	if m, ok := mappers.Load(cp); ok {
		return m.(meta.RESTMapper), nil
	}
	httpClient, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		return nil, err
	}
	m, err := apiutil.NewDynamicRESTMapper(cp.Config, httpClient)
	if err != nil {
		return nil, err
	}
	actual, _ := mappers.LoadOrStore(cp, m)
	return actual.(meta.RESTMapper), nil
}

// warmUp pays once, before the cases, what the first request of a kind costs: the
// mapper asks the server about the kind's API group, and the API server builds what
// it tracks a custom resource's managed fields with, which takes seconds. The cases
// then cost what they would cost in a long series.
func (h *harness) warmUp(t testing.TB) {
	t.Helper()
	ns := h.cp.Namespace(t)
	warm := map[schema.GroupVersionKind]bool{}
	for _, tc := range h.rt.Cases {
		objs, err := h.caseObjects(tc)
		if err != nil {
			continue // the case says so
		}
		for _, obj := range slices.Concat(objs.given, objs.want) {
			gvk, err := apiutil.GVKForObject(obj, h.scheme)
			if err != nil || warm[gvk] || !h.namespaced(t, obj) {
				continue
			}
			warm[gvk] = true
			obj.SetNamespace(ns)
			obj.SetOwnerReferences(nil)
			_, _ = h.defaulted(t.Context(), obj) // only its cost matters
		}
	}
}

// caseObjects are the objects of a case, copied, so that parallel cases never share
// one and a table can reuse an object in several.
type caseObjects struct {
	given []client.Object // Object first
	want  []client.Object
}

func (h *harness) caseObjects(tc ReconcilerTestCase) (caseObjects, error) {
	if tc.Object == nil {
		return caseObjects{}, errors.New("the case has no Object to reconcile")
	}
	var objs caseObjects
	objs.given = append(objs.given, tc.Object.DeepCopyObject().(client.Object))
	for _, o := range tc.Given {
		objs.given = append(objs.given, o.DeepCopyObject().(client.Object))
	}
	more, err := h.decode(tc.GivenYAML)
	if err != nil {
		return caseObjects{}, fmt.Errorf("GivenYAML: %w", err)
	}
	objs.given = append(objs.given, more...)
	for _, o := range tc.WantObjects {
		objs.want = append(objs.want, o.DeepCopyObject().(client.Object))
	}
	if more, err = h.decode(tc.WantObjectsYAML); err != nil {
		return caseObjects{}, fmt.Errorf("WantObjectsYAML: %w", err)
	}
	objs.want = append(objs.want, more...)
	return objs, nil
}

// decode decodes manifests separated by "---" lines into typed objects.
func (h *harness) decode(manifests string) ([]client.Object, error) {
	var objs []client.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifests)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		var probe map[string]any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, err
		}
		if len(probe) == 0 { // a comment, or nothing
			continue
		}
		obj, _, err := h.decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		o, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("a %T is not an object", obj)
		}
		objs = append(objs, o)
	}
}

// anyClusterScoped reports whether a case names an object it shares with others: a
// cluster-scoped one, or one in a namespace not its own.
func (h *harness) anyClusterScoped(t testing.TB, objs caseObjects) bool {
	t.Helper()
	for _, o := range slices.Concat(objs.given, objs.want) {
		if !h.namespaced(t, o) || elsewhere(o) {
			return true
		}
	}
	return false
}

// elsewhere reports whether obj names a namespace another case may name too: one set, that
// is not made of the case's (CaseNamespace, "tenant-{namespace}").
func elsewhere(obj client.Object) bool {
	ns := obj.GetNamespace()
	return ns != "" && !strings.Contains(ns, CaseNamespace)
}

func (h *harness) namespaced(t testing.TB, obj client.Object) bool {
	t.Helper()
	namespaced, err := h.admin.IsObjectNamespaced(obj)
	if err != nil {
		t.Fatalf("reconciletest: is a %T namespaced? %v", obj, err)
	}
	return namespaced
}

// sent is a request the reconciler sent, as the failure message shows it.
type sent struct {
	verb, resource, name string
	code                 int
	faulted              bool
}

func (s sent) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", s.verb, s.resource)
	if s.name != "" {
		fmt.Fprintf(&b, " %s", s.name)
	}
	switch {
	case s.faulted:
		fmt.Fprintf(&b, " → %d (Faults)", s.code)
	case s.code != 0:
		fmt.Fprintf(&b, " → %d", s.code)
	default:
		b.WriteString(" → no answer")
	}
	return b.String()
}

// requestLog is every request of a case's reconciler, in order.
type requestLog struct {
	mu    sync.Mutex
	sent  []sent
	armed bool // faults apply

	// namespaces are those the reconciler created, in ReconciledBefore too: the case
	// removes them when it ends (removeMadeNamespaces).
	namespaces []string
}

func (l *requestLog) writes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var w []string
	for _, s := range l.sent {
		if isWrite(s.verb, s.resource) {
			w = append(w, s.verb+" "+s.resource)
		}
	}
	return w
}

func (l *requestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.sent) == 0 {
		return "  none\n"
	}
	var b strings.Builder
	for _, s := range l.sent {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	return b.String()
}

func (l *requestLog) reset(armed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent, l.armed = nil, armed
}

// run runs one case on t.
func (h *harness) run(t testing.TB, tc ReconcilerTestCase, objs caseObjects) {
	t.Helper()
	ctx := t.Context()
	var ns string
	if h.rt.Restricted {
		ns = h.cp.RestrictedNamespace(t)
	} else {
		ns = h.cp.Namespace(t)
	}
	for i, obj := range objs.given {
		said, err := inCase(obj, ns)
		if err != nil {
			t.Fatalf("reconciletest: %s: %v", obj.GetName(), err)
		}
		objs.given[i] = said
		h.create(t, ns, said, objs)
	}
	key := client.ObjectKeyFromObject(objs.given[0])

	now := tc.Now
	if now.IsZero() {
		now = DefaultNow
	}
	// The API server stamps a deletion with its own time; the reconciler reads it in the
	// case's, as though the case's clock had been the server's since the case began.
	offset := now.Sub(time.Now().Truncate(time.Second))

	// The reconciler's client: every request logged, failed by the case's Faults once
	// armed, and its answers' deletionTimestamps in the case's time.
	var log requestLog
	cfg := Intercept(h.config, func(r *Request) (*http.Response, error) {
		s := sent{verb: r.Verb, resource: r.resource(), name: r.Name}
		log.mu.Lock()
		armed := log.armed
		log.mu.Unlock()
		var (
			resp *http.Response
			err  error
		)
		if armed && tc.Faults != nil && tc.Faults.strike(r) {
			resp, s.faulted = tc.Faults.fail(r), true
		} else {
			resp, err = r.Send()
		}
		if resp != nil {
			s.code = resp.StatusCode
			if !s.faulted && r.Verb != "watch" { // a watch's body never ends
				resp, err = inCaseTime(resp, offset)
			}
		}
		var made string
		if err == nil && !s.faulted && resp.StatusCode == http.StatusCreated && r.Verb == "create" && r.resource() == "namespaces" {
			made, resp, err = createdName(resp)
		}
		log.mu.Lock()
		log.sent = append(log.sent, s)
		if made != "" {
			log.namespaces = append(log.namespaces, made)
		}
		log.mu.Unlock()
		return resp, err
	})
	// The namespaces the reconciler made go when the case ends, as those the case made do.
	t.Cleanup(func() {
		log.mu.Lock()
		made := slices.Clone(log.namespaces)
		log.mu.Unlock()
		h.removeMadeNamespaces(t, ns, made, objs)
	})
	// JSON, which inCaseTime reads, where client-go's own types would be sent as protobuf.
	cfg.ContentType = runtime.ContentTypeJSON
	c, err := client.New(cfg, client.Options{Scheme: h.scheme, Mapper: h.admin.RESTMapper()})
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	recorder := events.NewFakeRecorder(1000)
	deps := Deps{Client: c, Clock: NewClock(now), Recorder: recorder}
	var r rtreconcile.Reconciler
	if h.rt.Controller != nil {
		r = h.rt.Controller.Reconciler(c, reconcile.WithClock(deps.Clock), reconcile.WithRecorder(deps.Recorder))
	} else {
		r = h.rt.Reconciler(deps)
	}
	req := rtreconcile.Request{NamespacedName: key}
	for i := range tc.ReconciledBefore {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Logf("reconciletest: reconcile %d of ReconciledBefore returned %v", i+1, err)
		}
	}
	drain(recorder)
	if tc.Meanwhile != nil {
		if err := tc.Meanwhile(ctx, h.admin, ns); err != nil {
			t.Fatalf("reconciletest: Meanwhile: %v", err)
		}
	}
	log.reset(true)
	result, err := r.Reconcile(ctx, req)
	log.disarm()

	check := checker{t: t, log: &log}
	if err != nil { // its text, as a table can write it
		err = errors.New(strings.ReplaceAll(err.Error(), ns, CaseNamespace))
	}
	check.outcome(tc, result, err)
	check.diff("the writes", tc.WantRequests, log.writes(), true)
	recorded := drain(recorder)
	for i := range recorded {
		recorded[i] = strings.ReplaceAll(recorded[i], ns, CaseNamespace)
	}
	check.diff("the events", tc.WantEvents, recorded, false)
	if tc.WantStatus != nil {
		h.checkStatus(&check, objs.given[0], ns, tc.WantStatus)
	}
	h.checkObjects(&check, ns, objs.want)
}

// deletionTimestamp is a deletionTimestamp in an answer of the API server, in JSON.
var deletionTimestamp = regexp.MustCompile(`"deletionTimestamp":"([^"]+)"`)

// inCaseTime returns resp with every deletionTimestamp in its body moved by offset: the
// time the API server stamped, said in the case's clock, so that a deletion made during
// the case happened at the case's Now, not years before it (DefaultNow) or after it.
func inCaseTime(resp *http.Response, offset time.Duration) (*http.Response, error) {
	if resp.Body == nil || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if bytes.Contains(body, []byte(`"deletionTimestamp"`)) {
		body = deletionTimestamp.ReplaceAllFunc(body, func(m []byte) []byte {
			stamped, err := time.Parse(time.RFC3339, string(deletionTimestamp.FindSubmatch(m)[1]))
			if err != nil {
				return m // not a time the API server writes: as it is
			}
			return []byte(`"deletionTimestamp":"` + stamped.Add(offset).UTC().Format(time.RFC3339) + `"`)
		})
		resp.ContentLength = int64(len(body))
		resp.Header.Del("Content-Length")
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// disarm stops the faults and keeps the log.
func (l *requestLog) disarm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
}

// drain returns the events recorded so far.
func drain(r *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-r.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

// create creates a case's object in its namespace, then writes its status, which a
// create ignores where there is a status subresource. A namespace it makes, given or for
// an object given in it, it removes when the case ends, with the objects of the case's
// kinds in it (objs).
func (h *harness) create(t testing.TB, ns string, obj client.Object, objs caseObjects) {
	t.Helper()
	ctx := t.Context()
	switch {
	case !h.namespaced(t, obj):
		obj.SetNamespace("")
		if _, ok := obj.(*corev1.Namespace); ok {
			t.Cleanup(func() { h.removeNamespace(t, obj.GetName(), objs) })
		} else {
			t.Cleanup(func() { h.deleteClusterScoped(t, obj) })
		}
	case obj.GetNamespace() != "" && obj.GetNamespace() != ns: // another namespace, made if need be
		if h.ensureNamespace(t, obj.GetNamespace()) {
			// Registered first, so that it runs after the object's deletion.
			t.Cleanup(func() { h.removeNamespace(t, obj.GetNamespace(), objs) })
		}
		t.Cleanup(func() { h.deleteClusterScoped(t, obj) })
	default:
		obj.SetNamespace(ns)
	}
	if err := h.resolveOwners(t, obj); err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	gvk, err := apiutil.GVKForObject(obj, h.scheme)
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("reconciletest: %v", err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	status, _ := content["status"].(map[string]any)
	if err := h.admin.Create(ctx, u); err != nil {
		t.Fatalf("reconciletest: creating %s %s: %v", gvk.Kind, obj.GetName(), err)
	}
	if len(status) == 0 {
		return
	}
	stored, _ := u.Object["status"].(map[string]any)
	merged := merge(stored, status)
	if reflect.DeepEqual(stored, merged) { // no status subresource: the create kept it
		return
	}
	u.Object["status"] = merged
	if err := h.admin.Status().Update(ctx, u); err != nil {
		t.Fatalf("reconciletest: writing the status of %s %s: %v", gvk.Kind, obj.GetName(), err)
	}
}

// merge returns the status the API server stored with the given one written over it:
// kept are the fields the server set on create (a pod's qosClass), which a status
// update may not remove.
func merge(stored, given map[string]any) map[string]any {
	out := make(map[string]any, len(stored)+len(given))
	for k, v := range stored {
		out[k] = v
	}
	for k, v := range given {
		s, sok := out[k].(map[string]any)
		g, gok := v.(map[string]any)
		if sok && gok {
			out[k] = merge(s, g)
		} else {
			out[k] = v
		}
	}
	return out
}

// ensureNamespace creates the namespace ns, another than the case's, unless it exists, and
// reports whether it did: the case that made it removes it (removeNamespace). One that
// existed is left alone: another case, or the test, has it.
func (h *harness) ensureNamespace(t testing.TB, ns string) (made bool) {
	t.Helper()
	err := h.admin.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("reconciletest: creating the namespace %s of a given object: %v", ns, err)
	}
	return err == nil
}

// removeNamespace removes, for good, a namespace a case made when the case ends: the
// objects in it of the kinds the case gives or wants (objs), the reconciler's among them,
// then the namespace, whose finalizer it removes itself. An API server alone has no
// namespace controller to finish the deletion, and would leave the namespace Terminating
// for ever: behind the case, and refusing the objects of the next case that names it.
func (h *harness) removeNamespace(t testing.TB, ns string, objs caseObjects) {
	ctx := context.Background() // the test's is done by the time cleanups run
	done := map[schema.GroupVersionKind]bool{}
	for _, o := range slices.Concat(objs.given, objs.want) {
		gvk, err := apiutil.GVKForObject(o, h.scheme)
		if err != nil || done[gvk] {
			continue
		}
		done[gvk] = true
		if namespaced, err := h.admin.IsObjectNamespaced(o); err != nil || !namespaced {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := h.admin.DeleteAllOf(ctx, u, client.InNamespace(ns)); client.IgnoreNotFound(err) != nil {
			t.Errorf("reconciletest: deleting the %ss of namespace %s: %v", gvk.Kind, ns, err)
		}
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	switch err := h.admin.Delete(ctx, namespace); {
	case apierrors.IsNotFound(err):
		return
	case apierrors.IsConflict(err): // already terminating, deleted by the reconciler: finalize it
	case err != nil:
		t.Errorf("reconciletest: deleting namespace %s: %v", ns, err)
		return
	}
	// A namespace controller may finish first: then there is nothing left to finalize.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.admin.Get(ctx, client.ObjectKeyFromObject(namespace), namespace); err != nil {
			return err
		}
		namespace.Spec.Finalizers = nil
		return h.admin.SubResource("finalize").Update(ctx, namespace)
	})
	if client.IgnoreNotFound(err) != nil {
		t.Errorf("reconciletest: finalizing namespace %s: %v", ns, err)
	}
}

// createdName returns the name of the object resp, a create's answer, created, and resp
// with its body still to read.
func createdName(resp *http.Response) (string, *http.Response, error) {
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return "", nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var created metav1.PartialObjectMetadata
	if json.Unmarshal(body, &created) != nil {
		return "", resp, nil // not JSON: the client asked for another form, and says no name
	}
	return created.Name, resp, nil
}

// removeMadeNamespaces removes, when a case ends, the namespaces its reconciler made (made),
// as removeNamespace does those the case made: one made of the case's namespace ns
// ("tenant-" + ns), which no other case can name, or any when the case runs alone (it names
// a cluster-scoped object, such as the Tenant that makes its namespace, or the Namespace
// itself in WantObjects). One of a fixed name made by a case that runs beside others might
// be another case's too, and is left, named in the test's log.
func (h *harness) removeMadeNamespaces(t testing.TB, ns string, made []string, objs caseObjects) {
	alone := h.anyClusterScoped(t, objs)
	for _, name := range made {
		if alone || strings.Contains(name, ns) {
			h.removeNamespace(t, name, objs)
			continue
		}
		t.Logf("reconciletest: the reconciler made namespace %s, which the case leaves behind: a case that runs beside others may share it; name it in WantObjects, which runs the case alone and removes it when the case ends", name)
	}
}

// deleteClusterScoped deletes an object the case shares with others when it ends: a
// cluster-scoped one, or one in a namespace not the case's.
func (h *harness) deleteClusterScoped(t testing.TB, obj client.Object) {
	u := &unstructured.Unstructured{}
	gvk, err := apiutil.GVKForObject(obj, h.scheme)
	if err != nil {
		return // create said so already
	}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	// The test's context is done by the time cleanups run.
	if err := h.admin.Delete(context.Background(), u); client.IgnoreNotFound(err) != nil {
		t.Errorf("reconciletest: deleting %s %s: %v", gvk.Kind, obj.GetName(), err)
	}
}

// resolveOwners gives each owner reference without a UID the UID of the object it
// names, which must exist.
func (h *harness) resolveOwners(t testing.TB, obj client.Object) error {
	t.Helper()
	refs := obj.GetOwnerReferences()
	for i, ref := range refs {
		if ref.UID != "" {
			continue
		}
		owner := &unstructured.Unstructured{}
		owner.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
		key := client.ObjectKey{Name: ref.Name}
		if h.namespaced(t, owner) {
			key.Namespace = obj.GetNamespace()
		}
		if err := h.admin.Get(t.Context(), key, owner); err != nil {
			return fmt.Errorf("the owner %s %s of %s: %w", ref.Kind, ref.Name, obj.GetName(), err)
		}
		refs[i].UID = owner.GetUID()
	}
	obj.SetOwnerReferences(refs)
	return nil
}

// checker reports what a case got wrong, each with the diff and, for requests, what
// was sent.
type checker struct {
	t   testing.TB
	log *requestLog
}

func (c *checker) outcome(tc ReconcilerTestCase, result rtreconcile.Result, err error) {
	c.t.Helper()
	switch {
	case err == nil && tc.WantErr != "":
		c.t.Errorf("Reconcile returned no error; want one containing %q", tc.WantErr)
	case err != nil && tc.WantErr == "":
		c.t.Errorf("Reconcile returned the error %q; want none", err)
	case err != nil && !strings.Contains(err.Error(), tc.WantErr):
		c.t.Errorf("Reconcile returned the error %q; want one containing %q", err, tc.WantErr)
	}
	if d := cmp.Diff(tc.WantResult, result); d != "" {
		c.t.Errorf("the result (-want +got):\n%s", d)
	}
}

// diff compares two lists of strings, and shows every request sent with a difference
// in requests.
func (c *checker) diff(what string, want, got []string, requests bool) {
	c.t.Helper()
	d := cmp.Diff(want, got, cmpopts.EquateEmpty())
	if d == "" {
		return
	}
	msg := fmt.Sprintf("%s (-want +got):\n%s", what, d)
	if requests {
		msg += "every request the reconcile sent, in order:\n" + c.log.String()
	} else if len(got) > 0 { // in full: go-cmp shortens long strings
		msg += what + ", in full:\n"
		for _, g := range got {
			msg += fmt.Sprintf("  %q\n", g)
		}
	}
	c.t.Errorf("%s", msg)
}

// checkStatus compares the status of obj, the object reconciled, with want, the case's
// namespace ns said as CaseNamespace: ns, not obj's, which a cluster-scoped object has none of.
func (h *harness) checkStatus(c *checker, obj client.Object, ns string, want any) {
	c.t.Helper()
	live, err := h.live(c.t.Context(), obj, client.ObjectKeyFromObject(obj))
	if err != nil {
		c.t.Errorf("reading the object reconciled: %v", err)
		return
	}
	field, ok := statusfield.Of(reflect.TypeOf(live))
	if !ok {
		c.t.Errorf("WantStatus: a %T has no status field (json:\"status\")", live)
		return
	}
	status := reflect.ValueOf(live).Elem().FieldByIndex(field.Index)
	got, err := withPlaceholder(status.Interface(), ns)
	if err != nil {
		c.t.Errorf("reading the status of the object reconciled: %v", err)
		return
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		c.t.Errorf("the status of %s %s (-want +got):\n%s", kindOf(h.scheme, obj), obj.GetName(), d)
	}
}

// withPlaceholder returns a copy of status with CaseNamespace for every mention of the
// case's namespace, as a message may name an object.
func withPlaceholder(status any, ns string) (any, error) {
	raw, err := json.Marshal(status)
	if err != nil {
		return nil, err
	}
	if ns == "" { // an empty string is found between every two bytes
		return status, nil
	}
	quoted, _ := json.Marshal(ns) // a namespace needs no escaping; this is its JSON all the same
	raw = bytes.ReplaceAll(raw, quoted[1:len(quoted)-1], []byte(CaseNamespace))
	out := reflect.New(reflect.TypeOf(status))
	if err := json.Unmarshal(raw, out.Interface()); err != nil {
		return nil, err
	}
	return out.Elem().Interface(), nil
}

// live reads an object of obj's type afresh.
func (h *harness) live(ctx context.Context, obj client.Object, key client.ObjectKey) (client.Object, error) {
	fresh := obj.DeepCopyObject().(client.Object)
	if err := h.admin.Get(ctx, key, fresh); err != nil {
		return nil, err
	}
	return fresh, nil
}

// compareObjects are the go-cmp options objects are compared with.
var compareObjects = []cmp.Option{
	cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion", "UID", "CreationTimestamp",
		"Generation", "ManagedFields", "GenerateName", "SelfLink"),
	cmpopts.IgnoreTypes(metav1.TypeMeta{}),
	cmpopts.EquateEmpty(),
	// The status of the object itself: a pointer's status field.
	cmp.FilterPath(func(p cmp.Path) bool {
		if len(p) != 3 {
			return false
		}
		_, indirect := p[1].(cmp.Indirect)
		f, field := p[2].(cmp.StructField)
		if !indirect || !field {
			return false
		}
		status, ok := statusfield.Of(p[1].Type())
		return ok && f.Index() == status.Index[0]
	}, cmp.Ignore()),
}

// forgetIntent removes ownership.IntentAnnotation, a hash no person writes.
func forgetIntent(obj client.Object) {
	annotations := obj.GetAnnotations()
	if _, ok := annotations[ownership.IntentAnnotation]; !ok {
		return
	}
	delete(annotations, ownership.IntentAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	obj.SetAnnotations(annotations)
}

// keepAllocated gives defaulted what live has in the fields the API server assigns, where
// the wanted object w leaves them empty: a Service's cluster IPs and node ports, a Job's
// generated selector and the labels it gives the Job's pods. A dry-run create assigns
// values of its own there, which no case can know; what w sets is compared as it is.
func keepAllocated(w, defaulted, live client.Object) {
	switch want := w.(type) {
	case *corev1.Service:
		d, okD := defaulted.(*corev1.Service)
		l, okL := live.(*corev1.Service)
		if okD && okL {
			keepServiceAllocated(want, d, l)
		}
	case *batchv1.Job:
		d, okD := defaulted.(*batchv1.Job)
		l, okL := live.(*batchv1.Job)
		if okD && okL {
			keepJobIdentity(want, d, l)
		}
	case *corev1.Namespace:
		d, okD := defaulted.(*corev1.Namespace)
		l, okL := live.(*corev1.Namespace)
		if _, set := want.Labels[corev1.LabelMetadataName]; okD && okL && !set {
			// The API server labels a namespace with its name, which the dry run's is not.
			keepKey(&d.Labels, l.Labels, corev1.LabelMetadataName)
		}
	}
}

// keepServiceAllocated is keepAllocated for a Service.
func keepServiceAllocated(want, d, l *corev1.Service) {
	if want.Spec.ClusterIP == "" && len(want.Spec.ClusterIPs) == 0 {
		d.Spec.ClusterIP, d.Spec.ClusterIPs = l.Spec.ClusterIP, l.Spec.ClusterIPs
	}
	if want.Spec.HealthCheckNodePort == 0 {
		d.Spec.HealthCheckNodePort = l.Spec.HealthCheckNodePort
	}
	for i := range d.Spec.Ports {
		if i < len(want.Spec.Ports) && want.Spec.Ports[i].NodePort == 0 && i < len(l.Spec.Ports) {
			d.Spec.Ports[i].NodePort = l.Spec.Ports[i].NodePort
		}
	}
}

// jobIdentity are the labels the API server gives a Job's pods, and (the first) its
// selector, unless spec.manualSelector is true: the Job's name and UID, which a dry-run
// create under a generated name gives other values.
var jobIdentity = []string{batchv1.ControllerUidLabel, "controller-uid", batchv1.JobNameLabel, "job-name"}

// keepJobIdentity is keepAllocated for a Job: the identity labels w does not set itself.
func keepJobIdentity(want, d, l *batchv1.Job) {
	if ptr.Deref(want.Spec.ManualSelector, false) {
		return
	}
	for _, key := range jobIdentity {
		if _, set := want.Spec.Template.Labels[key]; !set {
			keepKey(&d.Spec.Template.Labels, l.Spec.Template.Labels, key)
		}
		// A Job created without labels of its own takes its pods' labels, those the API
		// server adds included.
		if _, set := want.Labels[key]; !set && len(want.Labels) == 0 {
			keepKey(&d.Labels, l.Labels, key)
		}
	}
	if want.Spec.Selector != nil {
		if _, set := want.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; set {
			return
		}
	}
	if d.Spec.Selector != nil && l.Spec.Selector != nil {
		keepKey(&d.Spec.Selector.MatchLabels, l.Spec.Selector.MatchLabels, batchv1.ControllerUidLabel)
	}
}

// keepKey gives *dst the value src has at key, or none when src has none.
func keepKey(dst *map[string]string, src map[string]string, key string) {
	v, ok := src[key]
	switch {
	case ok && *dst == nil:
		*dst = map[string]string{key: v}
	case ok:
		(*dst)[key] = v
	default:
		delete(*dst, key)
	}
}

// checkObjects compares the objects that exist afterwards with those wanted.
func (h *harness) checkObjects(c *checker, ns string, want []client.Object) {
	c.t.Helper()
	ctx := c.t.Context()
	type place struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	var places []place                           // where a namespaced kind is wanted, in order
	wanted := map[place]map[string]bool{}        // the names wanted there
	seen := map[schema.GroupVersionKind]string{} // the newest resourceVersion read, by kind
	for _, w := range want {
		gvk, err := apiutil.GVKForObject(w, h.scheme)
		if err != nil {
			c.t.Errorf("WantObjects: %v", err)
			continue
		}
		said, err := inCase(w, ns)
		if err != nil {
			c.t.Errorf("WantObjects: %s %s: %v", gvk.Kind, w.GetName(), err)
			continue
		}
		w = said
		namespaced := h.namespaced(c.t, w)
		switch {
		case !namespaced:
			w.SetNamespace("")
		case w.GetNamespace() == "": // the case's
			w.SetNamespace(ns)
		}
		at := place{gvk, w.GetNamespace()}
		if namespaced && wanted[at] == nil {
			places = append(places, at)
			wanted[at] = map[string]bool{}
		}
		if w.GetName() == "" && w.GetGenerateName() != "" {
			name, err := h.generated(ctx, gvk, w, wanted[at])
			if err != nil {
				c.t.Errorf("WantObjects: %s %s: %v", gvk.Kind, shownName(w.GetNamespace(), w.GetGenerateName()+"*", ns), err)
				continue
			}
			w.SetName(name)
		}
		if namespaced {
			wanted[at][w.GetName()] = true
		}
		what := shownName(w.GetNamespace(), w.GetName(), ns)
		live, err := h.live(ctx, w, client.ObjectKeyFromObject(w))
		if apierrors.IsNotFound(err) {
			c.t.Errorf("%s %s does not exist; WantObjects has it", gvk.Kind, what)
			continue
		} else if err != nil {
			c.t.Errorf("reading %s %s: %v", gvk.Kind, what, err)
			continue
		}
		seen[gvk] = newer(seen[gvk], live.GetResourceVersion())
		// A wanted object's owner may be missing: that fails the case, not the test.
		if err := h.resolveOwners(c.t, w); err != nil {
			c.t.Errorf("WantObjects: %v", err)
			continue
		}
		defaulted, err := h.defaulted(ctx, w)
		if err != nil {
			c.t.Errorf("WantObjects: %s %s as the API server would store it: %v", gvk.Kind, what, err)
			continue
		}
		forgetIntent(defaulted)
		forgetIntent(live)
		keepAllocated(w, defaulted, live)
		if d := cmp.Diff(defaulted, live, compareObjects...); d != "" {
			c.t.Errorf("%s %s (-want +got):\n%s", gvk.Kind, what, d)
		}
	}
	// Every object of a namespaced kind wanted in a namespace is wanted by name.
	for _, at := range places {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(at.gvk.GroupVersion().WithKind(at.gvk.Kind + "List"))
		// A list that must be consistent waits for the API server's watch cache to
		// catch up with etcd, which takes up to a tenth of a second: more than the rest
		// of a case. This one needs to be no older than the objects just read (it holds
		// every object created before them), and each object it holds that the case
		// does not want is read again, consistently, before it fails the case.
		opts := &metav1.ListOptions{ResourceVersion: "0"}
		if rv := seen[at.gvk]; rv != "" {
			opts = &metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
		}
		if err := h.admin.List(ctx, list, client.InNamespace(at.namespace), &client.ListOptions{Raw: opts}); err != nil {
			c.t.Errorf("listing %s: %v", at.gvk.Kind, err)
			continue
		}
		for _, item := range list.Items {
			if wanted[at][item.GetName()] {
				continue
			}
			err := h.admin.Get(ctx, client.ObjectKeyFromObject(&item), &item)
			if apierrors.IsNotFound(err) {
				continue // deleted since the list's resourceVersion
			}
			c.t.Errorf("%s %s exists; WantObjects does not have it%s", at.gvk.Kind, shownName(item.GetNamespace(), item.GetName(), ns), ownedBy(item.GetOwnerReferences()))
		}
	}
}

// shownName names an object as a failure message does: by name alone in the case's namespace
// ns, or cluster-scoped; otherwise namespace/name, with CaseNamespace for ns in it.
func shownName(namespace, name, ns string) string {
	if namespace == "" || namespace == ns {
		return name
	}
	return strings.ReplaceAll(namespace, ns, CaseNamespace) + "/" + name
}

// generated returns the name of the object w stands for, which names it by generateName
// alone: an object of w's kind, namespace and generateName that no other wanted object
// (taken, by name) has been matched with, the oldest first.
func (h *harness) generated(ctx context.Context, gvk schema.GroupVersionKind, w client.Object, taken map[string]bool) (string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var opts []client.ListOption
	if w.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(w.GetNamespace()))
	}
	if err := h.admin.List(ctx, list, opts...); err != nil {
		return "", err
	}
	items := list.Items
	slices.SortStableFunc(items, func(a, b unstructured.Unstructured) int {
		return a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time)
	})
	count := 0
	for _, item := range items {
		if item.GetGenerateName() != w.GetGenerateName() {
			continue
		}
		count++
		if !taken[item.GetName()] {
			return item.GetName(), nil
		}
	}
	if count == 0 {
		return "", fmt.Errorf("no object named by generateName %q exists", w.GetGenerateName())
	}
	return "", fmt.Errorf("WantObjects has more objects named by generateName %q than the %d that exist", w.GetGenerateName(), count)
}

// newer returns the newer of two resourceVersions read from the same kind. They are
// opaque to clients in general; etcd's are increasing integers, and an API server alone
// has no other storage.
func newer(a, b string) string {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA != nil:
		return b
	case errB != nil || x >= y:
		return a
	}
	return b
}

func ownedBy(refs []metav1.OwnerReference) string {
	for _, ref := range refs {
		if ref.Controller != nil && *ref.Controller {
			return fmt.Sprintf(" (controlled by %s %s)", ref.Kind, ref.Name)
		}
	}
	return ""
}

// defaulted returns obj as the API server would store it, defaults and admission
// included, by a dry-run create under a generated name: an object of its name exists.
func (h *harness) defaulted(ctx context.Context, obj client.Object) (client.Object, error) {
	d := obj.DeepCopyObject().(client.Object)
	name := d.GetName()
	d.SetName("")
	d.SetGenerateName("want-")
	d.SetResourceVersion("")
	// A Job's pods must be labelled with its own name: under the generated one, a
	// job-name label the case sets is refused. It is set again after the dry run.
	restore := func() {}
	if job, ok := d.(*batchv1.Job); ok && !ptr.Deref(job.Spec.ManualSelector, false) {
		set := map[string]string{}
		for _, key := range []string{batchv1.JobNameLabel, "job-name"} {
			if v, ok := job.Spec.Template.Labels[key]; ok {
				set[key] = v
				delete(job.Spec.Template.Labels, key)
			}
		}
		restore = func() { maps.Copy(job.Spec.Template.Labels, set) }
	}
	if err := h.admin.Create(ctx, d, client.DryRunAll); err != nil {
		return nil, err
	}
	restore()
	d.SetName(name)
	d.SetGenerateName("")
	return d, nil
}

func kindOf(scheme *runtime.Scheme, obj client.Object) string {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}

// summarize describes the times cases took.
func summarize(took []time.Duration) string {
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	p95 := sorted[min(len(sorted)-1, (len(sorted)*95+99)/100-1)]
	var total time.Duration
	for _, d := range took {
		total += d
	}
	return fmt.Sprintf("cases=%d median_case_ms=%.1f p95_case_ms=%.1f total_case_ms=%.1f",
		len(took), ms(sorted[len(sorted)/2]), ms(p95), ms(total))
}
