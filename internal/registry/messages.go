package registry

// OptimisticLockErrorMsg is kube's message for a write that lost a
// resourceVersion race.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"
