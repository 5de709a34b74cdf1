package registry

import "k8s.io/apimachinery/pkg/runtime/schema"

// This file holds the create-only kinds of authentication.k8s.io/v1,
// answered by their Answer (review_answers.go) and listed by CreateOnly.

var authenticationV1 = schema.GroupVersion{Group: "authentication.k8s.io", Version: "v1"}

// selfSubjectReviews tells a client who the server takes it for.
var selfSubjectReviews = &Resource{
	GroupVersion: authenticationV1, Name: "selfsubjectreviews", SingularName: "selfsubjectreview", Kind: "SelfSubjectReview",
	Answer: answerSelfSubjectReview,
}

// tokenReviews authenticates a bearer token for a client.
var tokenReviews = &Resource{
	GroupVersion: authenticationV1, Name: "tokenreviews", SingularName: "tokenreview", Kind: "TokenReview",
	SecretBearing: true,
	Answer:        answerTokenReview,
}
