// This file is added to api/v1 of the scaffolded project: the Widget's conditions, which
// the shell keeps (Ready, Reconciling, Stalled) through these two methods.

package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions returns the Widget's conditions.
func (w *Widget) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions sets the Widget's conditions.
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
