package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// The control plane's etcd is reached through the JSON gateway etcd serves beside gRPC on
// its client address, so that a test can do to the store what happens to it in a real
// cluster, compaction and data an older program wrote, with no etcd client library.

// CompactEtcd compacts etcd's history up to its current revision, as the API server does
// every five minutes in a production cluster, and returns that revision. A client that
// then resumes a watch from an older resource version is told 410 Gone, "too old resource
// version", unless the API server's watch cache still holds it.
func (cp *ControlPlane) CompactEtcd(ctx context.Context) (int64, error) {
	var status struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := cp.etcd(ctx, "/v3/maintenance/status", struct{}{}, &status); err != nil {
		return 0, err
	}
	revision, err := strconv.ParseInt(status.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("controlplane: etcd's revision %q: %w", status.Header.Revision, err)
	}
	compaction := map[string]any{"revision": strconv.FormatInt(revision, 10), "physical": true}
	return revision, cp.etcd(ctx, "/v3/kv/compaction", compaction, nil)
}

// RewriteStored rewrites an object as etcd stores it, behind the API server's back: the
// way to store what the API server would no longer accept, such as a status an older
// version of an operator wrote under an older schema. key is the object's key in etcd,
// "/registry/<group>/<resource>/<namespace>/<name>" for a custom resource
// ("/registry/<group>/<resource>/<name>" for a cluster-scoped one), which the API
// server stores as JSON; rewrite changes the decoded object. The API server's watches
// see the change as an update.
func (cp *ControlPlane) RewriteStored(ctx context.Context, key string, rewrite func(obj map[string]any)) error {
	var got struct {
		Kvs []struct {
			Value []byte `json:"value"` // base64 in JSON, as encoding/json writes []byte
		} `json:"kvs"`
	}
	if err := cp.etcd(ctx, "/v3/kv/range", map[string]any{"key": []byte(key)}, &got); err != nil {
		return err
	}
	if len(got.Kvs) != 1 {
		return fmt.Errorf("controlplane: etcd holds no object at %s", key)
	}
	var obj map[string]any
	if err := json.Unmarshal(got.Kvs[0].Value, &obj); err != nil {
		return fmt.Errorf("controlplane: the object at %s is not JSON: %w", key, err)
	}
	rewrite(obj)
	value, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	return cp.etcd(ctx, "/v3/kv/put", map[string]any{"key": []byte(key), "value": value}, nil)
}

// Stored returns every object etcd holds under the key prefix, as etcd stores it, by
// key: "/registry/<group>/<resource>/<namespace>/" holds a namespace's custom resources,
// which the API server stores as JSON, each in the version that was the storage version
// when it was last written ("apiVersion"). What a storage migration is proven by.
func (cp *ControlPlane) Stored(ctx context.Context, prefix string) (map[string]map[string]any, error) {
	end := []byte(prefix)
	end[len(end)-1]++ // every key that begins with prefix
	var got struct {
		Kvs []struct {
			Key   []byte `json:"key"`
			Value []byte `json:"value"`
		} `json:"kvs"`
	}
	if err := cp.etcd(ctx, "/v3/kv/range", map[string]any{"key": []byte(prefix), "range_end": end}, &got); err != nil {
		return nil, err
	}
	stored := make(map[string]map[string]any, len(got.Kvs))
	for _, kv := range got.Kvs {
		var obj map[string]any
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			return nil, fmt.Errorf("controlplane: the object at %s is not JSON: %w", kv.Key, err)
		}
		stored[string(kv.Key)] = obj
	}
	return stored, nil
}

// etcd posts request to a path of etcd's JSON gateway and decodes the answer into reply,
// which may be nil.
func (cp *ControlPlane) etcd(ctx context.Context, path string, request, reply any) error {
	body, err := json.Marshal(request)
	if err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	u := *cp.env.ControlPlane.Etcd.URL
	u.Path = path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("controlplane: etcd %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("controlplane: etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("controlplane: etcd %s: %s: %s", path, resp.Status, data)
	}
	if reply == nil {
		return nil
	}
	if err := json.Unmarshal(data, reply); err != nil {
		return fmt.Errorf("controlplane: etcd %s answered %s: %w", path, data, err)
	}
	return nil
}
