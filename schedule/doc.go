// Package schedule reads the schedules an object's spec names: a one-shot time (an RFC 3339
// instant in UTC, ParseTime and Until) and a cron expression (ParseCron), whose runs follow
// Kubernetes' CronJob rules (Cron.Due; Cron.Next, the kubebuilder tutorial's). Parse errors
// are an *Error, so that a controller turns a bad spec into a condition rather than a retry
// storm. Nothing here reads the wall clock: callers pass now. The outcome a reconcile returns
// once it knows when to run again is package requeue's.
package schedule
