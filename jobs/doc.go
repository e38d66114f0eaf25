// Package jobs runs the Jobs of a periodic operator, in the shape of Kubernetes' CronJob: a
// Job per scheduled run (New), named after the run (Name) so that it is made once, started
// by a ConcurrencyPolicy (Start), its outcome read from the Job API's conditions (OutcomeOf),
// the finished Jobs pruned to the newest N of each verdict (HistoryOf, Prune), and the
// owner's readiness for kstatus defined by History.Readiness. Which run is due is
// schedule.Cron.Due's business; the writes go through an ownership.Writer.
package jobs
