// Copyright 2020 The Kubernetes Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package controller_test

// The table of TestControllerV2SyncCronJob, Kubernetes' own CronJob controller's
// (k8s.io/kubernetes v1.37.1, pkg/controller/cronjob/cronjob_controllerv2_test.go), with
// the times and constants it uses (and utils_test.go's topOfTheHour), copied as they
// are, and the jobSpec() they use: kubernetes_upstream_test.go runs every case against this
// operator. Only the package, the name of the batch/v1 import (kbatch, as in the rest of
// the package) and the name of the table changed.

import (
	"fmt"
	"time"

	kbatch "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// nextScheduleDelta is the padding Kubernetes' controller adds to every requeue for clock
// skews (cronjob_controllerv2.go).
const nextScheduleDelta = 100 * time.Millisecond

var (
	shortDead  int64 = 10
	mediumDead int64 = 2 * 60 * 60
	longDead   int64 = 1000000
	noDead     int64 = -12345

	errorSchedule = "obvious error schedule"
	// schedule is hourly on the hour
	onTheHour = "0 * * * ?"
	everyHour = "@every 1h"

	errorTimeZone = "bad timezone"
	newYork       = "America/New_York"
)

func justAfterThePriorHour() time.Time {
	T1, err := time.Parse(time.RFC3339, "2016-05-19T09:01:00Z")
	if err != nil {
		panic("test setup error")
	}
	return T1
}

func justBeforeThePriorHour() time.Time {
	T1, err := time.Parse(time.RFC3339, "2016-05-19T08:59:00Z")
	if err != nil {
		panic("test setup error")
	}
	return T1
}

func justAfterTheHour() *time.Time {
	T1, err := time.Parse(time.RFC3339, "2016-05-19T10:01:00Z")
	if err != nil {
		panic("test setup error")
	}
	return &T1
}

func justAfterTheHourInZone(tz string) time.Time {
	location, err := time.LoadLocation(tz)
	if err != nil {
		panic("tz error: " + err.Error())
	}

	T1, err := time.ParseInLocation(time.RFC3339, "2016-05-19T10:01:00Z", location)
	if err != nil {
		panic("test setup error: " + err.Error())
	}
	return T1
}

func justBeforeTheHour() time.Time {
	T1, err := time.Parse(time.RFC3339, "2016-05-19T09:59:00Z")
	if err != nil {
		panic("test setup error")
	}
	return T1
}

func justBeforeTheNextHour() time.Time {
	T1, err := time.Parse(time.RFC3339, "2016-05-19T10:59:00Z")
	if err != nil {
		panic("test setup error")
	}
	return T1
}

func weekAfterTheHour() time.Time {
	T1, err := time.Parse(time.RFC3339, "2016-05-26T10:00:00Z")
	if err != nil {
		panic("test setup error")
	}
	return T1
}

func topOfTheHour() *time.Time {
	T1, err := time.Parse(time.RFC3339, "2016-05-19T10:00:00Z")
	if err != nil {
		panic("test setup error")
	}
	return &T1
}

// upstreamCase is the type of a case of TestControllerV2SyncCronJob.
type upstreamCase struct {
	// cj spec
	concurrencyPolicy          kbatch.ConcurrencyPolicy
	suspend                    bool
	schedule                   string
	timeZone                   *string
	deadline                   int64
	successfulJobsHistoryLimit *int32

	// cj status
	ranPreviously bool
	stillActive   bool

	// environment
	cronjobCreationTime time.Time
	jobCreationTime     time.Time
	lastScheduleTime    time.Time
	now                 time.Time
	jobCreateError      error
	jobGetErr           error

	// expectations
	expectCreate               bool
	expectDelete               bool
	expectCompleted            bool
	expectActive               int
	expectedWarnings           int
	expectErr                  bool
	expectRequeueAfter         bool
	expectedRequeueDuration    time.Duration
	expectUpdateStatus         bool
	jobStillNotFoundInLister   bool
	jobPresentInCJActiveStatus bool
}

// upstreamCases are the cases of TestControllerV2SyncCronJob.
var upstreamCases = map[string]upstreamCase{
	"never ran, not valid schedule, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   errorSchedule,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectedWarnings:           1,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, not valid schedule, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   errorSchedule,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectedWarnings:           1,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, not valid schedule, R": {
		concurrencyPolicy:          "Forbid",
		schedule:                   errorSchedule,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectedWarnings:           1,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, not valid time zone": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		timeZone:                   &errorTimeZone,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectedWarnings:           1,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, not time, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true},
	"never ran, not time, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, not time, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, not time in zone": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		timeZone:                   &newYork,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time in zone, but time zone disabled": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		timeZone:                   &newYork,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justAfterTheHourInZone(newYork),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time in zone": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		timeZone:                   &newYork,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justAfterTheHourInZone(newYork),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time in zone, but TZ is also set in schedule": {
		concurrencyPolicy:          "Allow",
		schedule:                   "TZ=UTC " + onTheHour,
		timeZone:                   &newYork,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justAfterTheHourInZone(newYork),
		expectCreate:               true,
		expectedWarnings:           1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time, suspended": {
		concurrencyPolicy:          "Allow",
		suspend:                    true,
		schedule:                   onTheHour,
		deadline:                   noDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time, past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   shortDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justAfterTheHour().Add(time.Minute * time.Duration(shortDead+1)),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute - time.Minute*time.Duration(shortDead+1) + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"never ran, is time, not past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   longDead,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},

	"prev ran but done, not time, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, not time, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, not time, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, is time, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, is time, create job failed, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		jobCreateError:             errors.NewAlreadyExists(schema.GroupResource{Resource: "job", Group: "batch"}, ""),
		expectErr:                  false,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, is time, job not present in CJ active status, create job failed, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		jobCreateError:             errors.NewAlreadyExists(schema.GroupResource{Resource: "job", Group: "batch"}, ""),
		expectErr:                  false,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: false,
	},
	"prev ran but done, is time, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, is time, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, is time, suspended": {
		concurrencyPolicy:          "Allow",
		suspend:                    true,
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, is time, past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   shortDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, is time, not past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   longDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},

	"still active, not time, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"still active, not time, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"still active, not time, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        justBeforeTheHour(),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"still active, is time, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               2,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"still active, is time, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"still active, is time, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectDelete:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"still active, is time, get job failed, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		jobGetErr:                  errors.NewBadRequest("request is invalid"),
		expectActive:               1,
		expectedWarnings:           1,
		jobPresentInCJActiveStatus: true,
	},
	"still active, is time, suspended": {
		concurrencyPolicy:          "Allow",
		suspend:                    true,
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectActive:               1,
		jobPresentInCJActiveStatus: true,
	},
	"still active, is time, past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   shortDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"still active, is time, not past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   longDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               2,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},

	// Controller should fail to schedule these, as there are too many missed starting times
	// and either no deadline or a too long deadline.
	"prev ran but done, long overdue, not past deadline, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   longDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectedWarnings:           1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, long overdue, not past deadline, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   longDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectedWarnings:           1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, long overdue, not past deadline, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   longDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectedWarnings:           1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, long overdue, no deadline, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectedWarnings:           1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, long overdue, no deadline, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectedWarnings:           1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, long overdue, no deadline, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectedWarnings:           1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},

	"prev ran but done, long overdue, past medium deadline, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   mediumDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, long overdue, past short deadline, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   shortDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},

	"prev ran but done, long overdue, past medium deadline, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   mediumDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, long overdue, past short deadline, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   shortDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},

	"prev ran but done, long overdue, past medium deadline, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   mediumDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"prev ran but done, long overdue, past short deadline, F": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   shortDead,
		ranPreviously:              true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},

	// Tests for time skews
	// the controller sees job is created, takes no actions
	"this ran but done, time drifted back, F": {
		concurrencyPolicy:       "Forbid",
		schedule:                onTheHour,
		deadline:                noDead,
		ranPreviously:           true,
		jobCreationTime:         *justAfterTheHour(),
		now:                     justBeforeTheHour(),
		jobCreateError:          errors.NewAlreadyExists(schema.GroupResource{Resource: "jobs", Group: "batch"}, ""),
		expectRequeueAfter:      true,
		expectedRequeueDuration: 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:      true,
	},

	// Tests for slow job lister
	"this started but went missing, not past deadline, A": {
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   longDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            topOfTheHour().Add(time.Millisecond * 100),
		now:                        justAfterTheHour().Add(time.Millisecond * 100),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute - time.Millisecond*100 + nextScheduleDelta,
		jobStillNotFoundInLister:   true,
		jobPresentInCJActiveStatus: true,
	},
	"this started but went missing, not past deadline, f": {
		concurrencyPolicy:          "Forbid",
		schedule:                   onTheHour,
		deadline:                   longDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            topOfTheHour().Add(time.Millisecond * 100),
		now:                        justAfterTheHour().Add(time.Millisecond * 100),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute - time.Millisecond*100 + nextScheduleDelta,
		jobStillNotFoundInLister:   true,
		jobPresentInCJActiveStatus: true,
	},
	"this started but went missing, not past deadline, R": {
		concurrencyPolicy:          "Replace",
		schedule:                   onTheHour,
		deadline:                   longDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            topOfTheHour().Add(time.Millisecond * 100),
		now:                        justAfterTheHour().Add(time.Millisecond * 100),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute - time.Millisecond*100 + nextScheduleDelta,
		jobStillNotFoundInLister:   true,
		jobPresentInCJActiveStatus: true,
	},

	// Tests for slow cronjob list
	"this started but is not present in cronjob active list, not past deadline, A": {
		concurrencyPolicy:       "Allow",
		schedule:                onTheHour,
		deadline:                longDead,
		ranPreviously:           true,
		stillActive:             true,
		jobCreationTime:         topOfTheHour().Add(time.Millisecond * 100),
		now:                     justAfterTheHour().Add(time.Millisecond * 100),
		expectActive:            1,
		expectRequeueAfter:      true,
		expectedRequeueDuration: 1*time.Hour - 1*time.Minute - time.Millisecond*100 + nextScheduleDelta,
	},
	"this started but is not present in cronjob active list, not past deadline, f": {
		concurrencyPolicy:       "Forbid",
		schedule:                onTheHour,
		deadline:                longDead,
		ranPreviously:           true,
		stillActive:             true,
		jobCreationTime:         topOfTheHour().Add(time.Millisecond * 100),
		now:                     justAfterTheHour().Add(time.Millisecond * 100),
		expectActive:            1,
		expectRequeueAfter:      true,
		expectedRequeueDuration: 1*time.Hour - 1*time.Minute - time.Millisecond*100 + nextScheduleDelta,
	},
	"this started but is not present in cronjob active list, not past deadline, R": {
		concurrencyPolicy:       "Replace",
		schedule:                onTheHour,
		deadline:                longDead,
		ranPreviously:           true,
		stillActive:             true,
		jobCreationTime:         topOfTheHour().Add(time.Millisecond * 100),
		now:                     justAfterTheHour().Add(time.Millisecond * 100),
		expectActive:            1,
		expectRequeueAfter:      true,
		expectedRequeueDuration: 1*time.Hour - 1*time.Minute - time.Millisecond*100 + nextScheduleDelta,
	},

	// Tests for @every-style schedule
	"with @every schedule, never ran, not time": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   noDead,
		cronjobCreationTime:        justBeforeTheHour(),
		jobCreationTime:            justBeforeTheHour(),
		now:                        *topOfTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"with @every schedule, never ran, is time": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   noDead,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeThePriorHour(),
		now:                        justBeforeTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
		expectCreate:               true,
		expectActive:               1,
		expectUpdateStatus:         true,
	},
	"with @every schedule, never ran, is time, past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   shortDead,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeThePriorHour(),
		now:                        justBeforeTheHour().Add(time.Second * time.Duration(shortDead+1)),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - time.Second*time.Duration(shortDead+1) + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"with @every schedule, never ran, is time, not past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   longDead,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeThePriorHour(),
		now:                        justBeforeTheHour().Add(time.Second * time.Duration(shortDead-1)),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - time.Second*time.Duration(shortDead-1) + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"with @every schedule, prev ran but done, not time": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   noDead,
		ranPreviously:              true,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeThePriorHour(),
		lastScheduleTime:           justBeforeTheHour(),
		now:                        *topOfTheHour(),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"with @every schedule, prev ran but done, is time": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   noDead,
		ranPreviously:              true,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeThePriorHour(),
		lastScheduleTime:           justBeforeTheHour(),
		now:                        topOfTheHour().Add(1 * time.Hour),
		expectCreate:               true,
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"with @every schedule, prev ran but done, is time, past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   shortDead,
		ranPreviously:              true,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeThePriorHour(),
		lastScheduleTime:           justBeforeTheHour(),
		now:                        justBeforeTheNextHour().Add(time.Second * time.Duration(shortDead+1)),
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - time.Second*time.Duration(shortDead+1) + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	// This test will fail: the logic around StartingDeadlineSecond in getNextScheduleTime messes up
	// the time that calculating schedule.Next(earliestTime) is based on. While this works perfectly
	// well for classic cron scheduled, with @every X, schedule.Next(earliestTime) just returns the time
	// offset by X relative to the earliestTime.
	// "with @every schedule, prev ran but done, is time, not past deadline": {
	// 	concurrencyPolicy:          "Allow",
	// 	schedule:                   everyHour,
	// 	deadline:                   shortDead,
	// 	ranPreviously:              true,
	// 	cronjobCreationTime:        justBeforeThePriorHour(),
	// 	jobCreationTime:            justBeforeThePriorHour(),
	// 	lastScheduleTime:           justBeforeTheHour(),
	// 	now:                        justBeforeTheNextHour().Add(time.Second * time.Duration(shortDead-1)),
	// 	expectCreate:               true,
	// 	expectActive:               1,
	// 	expectRequeueAfter:         true,
	// 	expectedRequeueDuration:    1*time.Hour - time.Second*time.Duration(shortDead-1) + nextScheduleDelta,
	// 	expectUpdateStatus:         true,
	// 	jobPresentInCJActiveStatus: true,
	// },
	"with @every schedule, still active, not time": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeTheHour(),
		lastScheduleTime:           justBeforeTheHour(),
		now:                        *topOfTheHour(),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 1*time.Minute + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"with @every schedule, still active, is time": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeThePriorHour(),
		lastScheduleTime:           justBeforeThePriorHour(),
		now:                        *justAfterTheHour(),
		expectCreate:               true,
		expectActive:               2,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - 2*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"with @every schedule, still active, is time, past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   shortDead,
		ranPreviously:              true,
		stillActive:                true,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeTheHour(),
		lastScheduleTime:           justBeforeTheHour(),
		now:                        justBeforeTheNextHour().Add(time.Second * time.Duration(shortDead+1)),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - time.Second*time.Duration(shortDead+1) + nextScheduleDelta,
		jobPresentInCJActiveStatus: true,
	},
	"with @every schedule, still active, is time, not past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   longDead,
		ranPreviously:              true,
		stillActive:                true,
		cronjobCreationTime:        justBeforeThePriorHour(),
		jobCreationTime:            justBeforeTheHour(),
		lastScheduleTime:           justBeforeTheHour(),
		now:                        justBeforeTheNextHour().Add(time.Second * time.Duration(shortDead-1)),
		expectCreate:               true,
		expectActive:               2,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - time.Second*time.Duration(shortDead-1) + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
	},
	"with @every schedule, prev ran but done, long overdue, no deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   noDead,
		ranPreviously:              true,
		cronjobCreationTime:        justAfterThePriorHour(),
		lastScheduleTime:           *justAfterTheHour(),
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour(),
		expectCreate:               true,
		expectActive:               1,
		expectedWarnings:           1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Minute + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"with @every schedule, prev ran but done, long overdue, past deadline": {
		concurrencyPolicy:          "Allow",
		schedule:                   everyHour,
		deadline:                   shortDead,
		ranPreviously:              true,
		cronjobCreationTime:        justAfterThePriorHour(),
		lastScheduleTime:           *justAfterTheHour(),
		jobCreationTime:            justAfterThePriorHour(),
		now:                        weekAfterTheHour().Add(1 * time.Minute).Add(time.Second * time.Duration(shortDead+1)),
		expectActive:               1,
		expectRequeueAfter:         true,
		expectedRequeueDuration:    1*time.Hour - time.Second*time.Duration(shortDead+1) + nextScheduleDelta,
		expectUpdateStatus:         true,
		jobPresentInCJActiveStatus: true,
		expectCompleted:            true,
	},
	"do nothing if the namespace is terminating": {
		jobCreateError: &errors.StatusError{ErrStatus: metav1.Status{Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{
			{
				Type:    v1.NamespaceTerminatingCause,
				Message: fmt.Sprintf("namespace %s is being terminated", metav1.NamespaceDefault),
				Field:   "metadata.namespace",
			}}}}},
		concurrencyPolicy:          "Allow",
		schedule:                   onTheHour,
		deadline:                   noDead,
		ranPreviously:              true,
		stillActive:                true,
		jobCreationTime:            justAfterThePriorHour(),
		now:                        *justAfterTheHour(),
		expectActive:               0,
		expectRequeueAfter:         false,
		expectUpdateStatus:         false,
		expectErr:                  true,
		jobPresentInCJActiveStatus: false,
	},
	"set lastsuccessfultime if successfulJobHistoryLimit is zero": {
		successfulJobsHistoryLimit: ptr.To[int32](0),
		ranPreviously:              true,
		schedule:                   onTheHour,
		expectUpdateStatus:         true,
		expectCompleted:            true,
		jobPresentInCJActiveStatus: true,
	},
	"set lastsuccessfultime if successfulJobHistoryLimit is ten": {
		successfulJobsHistoryLimit: ptr.To[int32](10),
		ranPreviously:              true,
		schedule:                   onTheHour,
		expectUpdateStatus:         true,
		expectCompleted:            true,
		jobPresentInCJActiveStatus: true,
	},
	"set lastsuccessfultime if successfulJobHistoryLimit is nil": {
		ranPreviously:              true,
		schedule:                   onTheHour,
		expectUpdateStatus:         true,
		expectCompleted:            true,
		jobPresentInCJActiveStatus: true,
	},
}

func jobSpec() kbatch.JobSpec {
	one := int32(1)
	return kbatch.JobSpec{
		Parallelism: &one,
		Completions: &one,
		Template: v1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Labels: map[string]string{
					"foo": "bar",
				},
			},
			Spec: v1.PodSpec{
				Containers: []v1.Container{
					{Image: "foo/bar"},
				},
			},
		},
	}
}
