package registry

import "k8s.io/apimachinery/pkg/runtime/schema"

// This file holds the create-only kinds of authorization.k8s.io/v1 (access
// reviews), answered by their Answer (review_answers.go) and listed by CreateOnly.

var authorizationV1 = schema.GroupVersion{Group: "authorization.k8s.io", Version: "v1"}

// localSubjectAccessReviews asks whether a user may act in one namespace.
var localSubjectAccessReviews = &Resource{
	GroupVersion: authorizationV1, Name: "localsubjectaccessreviews", SingularName: "localsubjectaccessreview", Kind: "LocalSubjectAccessReview",
	Namespaced: true,
	Answer:     answerLocalSubjectAccessReview,
}

// selfSubjectAccessReviews asks whether the client itself may act.
var selfSubjectAccessReviews = &Resource{
	GroupVersion: authorizationV1, Name: "selfsubjectaccessreviews", SingularName: "selfsubjectaccessreview", Kind: "SelfSubjectAccessReview",
	Answer: answerSelfSubjectAccessReview,
}

// selfSubjectRulesReviews lists what the client may do in a namespace.
var selfSubjectRulesReviews = &Resource{
	GroupVersion: authorizationV1, Name: "selfsubjectrulesreviews", SingularName: "selfsubjectrulesreview", Kind: "SelfSubjectRulesReview",
	Answer: answerSelfSubjectRulesReview,
}

// subjectAccessReviews asks whether a user may act.
var subjectAccessReviews = &Resource{
	GroupVersion: authorizationV1, Name: "subjectaccessreviews", SingularName: "subjectaccessreview", Kind: "SubjectAccessReview",
	Answer: answerSubjectAccessReview,
}
