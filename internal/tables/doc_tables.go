// Package tables converts API objects into server-side tables
// (meta.k8s.io/v1 Table) with the columns kubectl shows for each kind.
//
// The columns, their types, formats, descriptions and priorities, and the
// text of every cell follow kube-apiserver's printers
// (pkg/printers/internalversion) so that kubectl, and minikctl, print the
// same thing against minikd as against a real cluster. As in kube-apiserver,
// rows always carry the cells of every column, including the priority-1
// ("-o wide") ones; the client decides which columns to show.
//
// Each kind is described once, as data: a column list and a row function
// (see tables.go). Cells that depend on the current time (AGE, LAST SEEN,
// RESTARTS "3 (5m ago)") read the clock given to ForClock, so tests are
// deterministic.
package tables

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TableConvertor describes the server-side table of a resource, with
// kubectl's columns.
type TableConvertor struct {
	// Columns are the column definitions; those with Priority > 0 are shown
	// only by "-o wide".
	Columns []metav1.TableColumnDefinition
	// Row returns the cells of one object, one per column, in order. It
	// returns an error when obj is not of the convertor's kind.
	Row func(obj runtime.Object) ([]interface{}, error)
	// Conditions, when not nil, returns the row conditions of one object
	// (metav1.TableRow.Conditions). kube-apiserver sets them only for Pods
	// that have completed: {Completed True Succeeded|Failed}. A nil function,
	// or a nil result, means no conditions.
	Conditions func(obj runtime.Object) []metav1.TableRowCondition
}

// Default is the table of kinds without a specific one: Name and Age, as
// kube-apiextensions-apiserver serves for custom resources without printer
// columns. Its Age cells are read with time.Now; use DefaultClock to choose
// the clock.
var Default = DefaultClock(time.Now)

// DefaultClock returns the Name/Age table reading the current time from now
// (time.Now if nil).
func DefaultClock(now func() time.Time) *TableConvertor {
	if now == nil {
		now = time.Now
	}
	return defaultTable.convertor(now)
}

// For returns the table convertor of a kind, reading the current time with
// time.Now. It never returns nil: kinds without a specific table get the
// Name/Age table (a fresh copy of Default). Each call returns a new
// convertor, which the caller may keep and modify.
func For(gk schema.GroupKind) *TableConvertor {
	return ForClock(gk, time.Now)
}

// ForClock is For with an injected clock: now is called once per row to
// compute ages and other relative times. A nil now means time.Now.
func ForClock(gk schema.GroupKind, now func() time.Time) *TableConvertor {
	if now == nil {
		now = time.Now
	}
	if t, ok := tables[gk]; ok {
		return t.convertor(now)
	}
	return DefaultClock(now)
}

// Kinds returns the kinds that have a specific table (not the default one),
// sorted by group then kind.
func Kinds() []schema.GroupKind {
	gks := make([]schema.GroupKind, 0, len(tables))
	for gk := range tables {
		gks = append(gks, gk)
	}
	slices.SortFunc(gks, func(a, b schema.GroupKind) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind))
	})
	return gks
}

// table is the description of one kind's table: its columns and how to
// compute a row's cells (and, rarely, conditions) from an object.
type table struct {
	columns    []metav1.TableColumnDefinition
	row        func(obj runtime.Object, now time.Time) ([]interface{}, error)
	conditions func(obj runtime.Object) []metav1.TableRowCondition
}

// convertor binds a table to a clock.
func (t table) convertor(now func() time.Time) *TableConvertor {
	return &TableConvertor{
		Columns: slices.Clone(t.columns),
		Row: func(obj runtime.Object) ([]interface{}, error) {
			return t.row(obj, now())
		},
		Conditions: t.conditions,
	}
}

// kindTable builds the table of the kind whose Go type is T: the row
// function receives the object already asserted to T, and Row reports an
// error for any other type.
func kindTable[T runtime.Object](columns []metav1.TableColumnDefinition, row func(obj T, now time.Time) []interface{}) table {
	return table{
		columns: columns,
		row: func(obj runtime.Object, now time.Time) ([]interface{}, error) {
			o, ok := obj.(T)
			if !ok {
				var want T
				return nil, fmt.Errorf("print %T as a table of %T: wrong type", obj, want)
			}
			return row(o, now), nil
		},
	}
}

// withConditions returns t with a row-conditions function for objects of
// type T.
func withConditions[T runtime.Object](t table, conditions func(obj T) []metav1.TableRowCondition) table {
	t.conditions = func(obj runtime.Object) []metav1.TableRowCondition {
		o, ok := obj.(T)
		if !ok {
			return nil
		}
		return conditions(o)
	}
	return t
}
