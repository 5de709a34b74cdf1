package auth

import (
	"context"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Info is the user as k8s.io/apiserver's libraries see it (audit policy
// rules, CEL's authorizer, RBAC's rule resolution). A nil user is a nil
// user.Info, not a typed nil: kube's code tests for nil.
func (u *User) Info() user.Info {
	if u == nil {
		return nil
	}
	return &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

// UserFromInfo is the reverse of Info.
func UserFromInfo(info user.Info) *User {
	if info == nil {
		return nil
	}
	return &User{Name: info.GetName(), UID: info.GetUID(), Groups: info.GetGroups(), Extra: info.GetExtra()}
}

// Record is the action as k8s.io/apiserver's authorizer.Attributes.
func (a Attributes) Record() authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: a.User.Info(), Verb: a.Verb, ResourceRequest: a.IsResource,
		APIGroup: a.APIGroup, APIVersion: a.APIVersion, Namespace: a.Namespace,
		Resource: a.Resource, Subresource: a.Subresource, Name: a.Name, Path: a.Path,
	}
}

// AttributesFrom is the reverse of Record.
func AttributesFrom(a authorizer.Attributes) Attributes {
	return Attributes{
		User: UserFromInfo(a.GetUser()), Verb: a.GetVerb(), IsResource: a.IsResourceRequest(),
		APIGroup: a.GetAPIGroup(), APIVersion: a.GetAPIVersion(), Namespace: a.GetNamespace(),
		Resource: a.GetResource(), Subresource: a.GetSubresource(), Name: a.GetName(), Path: a.GetPath(),
	}
}

// KubeAuthorizer lets k8s.io/apiserver's libraries (CEL's authorizer
// library) ask minik's authorizer.
type KubeAuthorizer struct {
	Authorizer Authorizer
}

// Authorize implements authorizer.UnconditionalAuthorizer.
func (k KubeAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	d, reason, err := k.Authorizer.Authorize(ctx, AttributesFrom(a))
	switch d {
	case Allow:
		return authorizer.DecisionAllow, reason, err
	case Deny:
		return authorizer.DecisionDeny, reason, err
	}
	return authorizer.DecisionNoOpinion, reason, err
}
