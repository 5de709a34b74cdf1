// Package cli implements minikctl, the kubectl twin: its commands, flags,
// messages, table columns and exit codes follow kubectl v1.37.
//
// Every command follows the same shape: a NewCmdX function binds flags to an
// XOptions value, the options are completed and validated, and a plain runX
// function does the work. Commands write data to IOStreams.Out and status to
// IOStreams.ErrOut and return errors; Run turns an error into kubectl's
// message and exit code, and only cmd/minikctl exits.
//
// Everything that prints objects goes through one printer stack
// (PrintFlags.ToPrinter): server-side tables, names, YAML, JSON, JSONPath and
// custom columns.
package cli
