// Package explore tests an operator built on reconcilekit the way the research tools
// Sieve (OSDI 2022) and Acto (SOSP 2023) test controllers, from a go test and with no
// assertion written by its author: a reference run of a short workload on a real API
// server, then runs of the same workload each perturbed at one point (the operator killed
// right after one of its writes and started again, one of its writes failed or its answer
// lost, a restart against a view of one resource that lags, a watch that delivers only
// the first and last of a series of events), each judged by oracles that know nothing of
// the operator: the same end state as the reference, no object created twice or deleted
// needlessly, no object written that the operator does not control, nothing left behind
// once the workload has deleted what it made, no write once converged, and no Current
// verdict (kstatus) before what it controls has settled.
//
// What varies from run to run is learnt, not listed: the reference run is made twice,
// and what differs between the two (a generated password, say) is masked for the rest of
// the exploration, with what the API server assigns (UIDs, a Job's controller-uid labels,
// timestamps) and what the author names in Exploration.Masks. A spec transition's run is
// compared with a fresh operator's from scratch on the spec it left (Acto's differential
// oracle) once the operator has quiesced, whatever kstatus reads the object; what an
// oracle cannot judge (a run that never settled, an object its operator reports Stalled)
// is counted in Report.Unjudged, with why, never skipped in silence. The oracles are
// named by the constants of Oracles. An exploration is bounded: a reference run that
// does not settle is the finding and ends it, and each class is explored at a seeded
// sample of at most MaxPoints points.
//
// A run is named by its class and point ("crash@7": killed right after its seventh
// accepted write); a violation is reported with the one command that replays that run
// and the writes of both runs side by side. docs/exploring.md shows it at work, and lists
// what the comparison of end states masks.
package explore
