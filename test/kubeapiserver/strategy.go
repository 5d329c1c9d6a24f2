package main

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
)

// leaseStrategy is the create/update policy of Leases, the same as
// kube-apiserver's (kubernetes/kubernetes pkg/registry/coordination/lease/
// strategy.go): namespaced, created by PUT too, updated only with a
// resourceVersion (no unconditional update), names validated as DNS
// subdomains and the spec's numbers checked as in
// pkg/apis/coordination/validation.
type leaseStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

func (leaseStrategy) NamespaceScoped() bool                                            { return true }
func (leaseStrategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (leaseStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (leaseStrategy) Canonicalize(runtime.Object)                                      {}
func (leaseStrategy) AllowCreateOnUpdate(context.Context) bool                         { return true }
func (leaseStrategy) AllowUnconditionalUpdate(context.Context) bool                    { return false }
func (leaseStrategy) WarningsOnCreate(context.Context, runtime.Object) []string        { return nil }
func (leaseStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (leaseStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateLease(obj.(*coordinationv1.Lease))
}

func (leaseStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	lease, prev := obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease)
	errs := apivalidation.ValidateObjectMetaUpdate(&lease.ObjectMeta, &prev.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateLease(lease)...)
}

func validateLease(lease *coordinationv1.Lease) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&lease.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if d := lease.Spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(spec.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if n := lease.Spec.LeaseTransitions; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(spec.Child("leaseTransitions"), *n, "must be greater than or equal to 0"))
	}
	return errs
}
