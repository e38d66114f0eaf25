// This file is added to api/v1 of the scaffolded project: the Sprocket's conditions, which
// the shell keeps (Ready, Reconciling, Stalled) through these two methods.

package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions returns the Sprocket's conditions.
func (w *Sprocket) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions sets the Sprocket's conditions.
func (w *Sprocket) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
