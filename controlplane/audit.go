package controlplane

import (
	"os"
	"path/filepath"
)

// auditPolicy has the API server log every answer to a user who is no administrator: the
// operators run with a config of User, and anything else run as them. Administrators (the
// program's own clients, the cluster's components, the API server's loopback) are in
// system:masters and are not logged, so the log costs nothing where nothing is refused.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: None
  userGroups: ["system:masters"]
- level: Metadata
`

// auditFlags configures the API server to write its audit log into dir, and returns the
// log's path.
func auditFlags(dir string, set func(name, value string)) (string, error) {
	policy, log := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return "", err
	}
	set("audit-policy-file", policy)
	set("audit-log-path", log)
	set("audit-log-format", "json")
	// Written before the answer is sent: a refusal is in the log by the time the client
	// that was refused hears of it.
	set("audit-log-mode", "blocking")
	// A long run (a soak of hours) keeps at most two logs of 100 MB.
	set("audit-log-maxsize", "100")
	set("audit-log-maxbackup", "1")
	return log, nil
}
