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
// (see tables.go), exported as one Table per kind (Pod, Deployment, ...)
// that internal/registry puts in each kind's descriptor; built-in kinds
// without a printer of their own use CreatedAt (NAME, CREATED AT), and
// custom resources use PrinterColumns. Cells that depend on the current
// time (AGE, LAST SEEN, RESTARTS "3 (5m ago)") read the clock given to Table.Convertor, so tests are
// deterministic.
package tables

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	// Order, when not nil, orders the rows of a list (of one page of it),
	// as the few kube printers that sort do (FlowSchemas by matching
	// precedence); nil keeps the list's order.
	Order func(a, b runtime.Object) int
}

// Table is the description of one kind's table: its columns and how to
// compute a row's cells (and, rarely, conditions) from an object. The
// package exports one per kind (Pod, Deployment, ...); a resource's
// descriptor binds it to a clock with Convertor.
type Table struct {
	columns    []metav1.TableColumnDefinition
	row        func(obj runtime.Object, now time.Time) ([]interface{}, error)
	conditions func(obj runtime.Object) []metav1.TableRowCondition
	order      func(a, b runtime.Object) int
}

// Convertor binds the table to a clock: now (time.Now if nil) is called
// once per row to compute ages and other relative times. Each call returns
// a new convertor, which the caller may keep and modify.
func (t Table) Convertor(now func() time.Time) *TableConvertor {
	if now == nil {
		now = time.Now
	}
	return &TableConvertor{
		Columns: slices.Clone(t.columns),
		Row: func(obj runtime.Object) ([]interface{}, error) {
			return t.row(obj, now())
		},
		Conditions: t.conditions,
		Order:      t.order,
	}
}

// kindTable builds the table of the kind whose Go type is T: the row
// function receives the object already asserted to T, and Row reports an
// error for any other type.
func kindTable[T runtime.Object](columns []metav1.TableColumnDefinition, row func(obj T, now time.Time) []interface{}) Table {
	return Table{
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
func withConditions[T runtime.Object](t Table, conditions func(obj T) []metav1.TableRowCondition) Table {
	t.conditions = func(obj runtime.Object) []metav1.TableRowCondition {
		o, ok := obj.(T)
		if !ok {
			return nil
		}
		return conditions(o)
	}
	return t
}

// withOrder returns t with a row order for lists of objects of type T
// (objects of another type sort last).
func withOrder[T runtime.Object](t Table, cmp func(a, b T) int) Table {
	t.order = func(a, b runtime.Object) int {
		ta, okA := a.(T)
		tb, okB := b.(T)
		switch {
		case okA && okB:
			return cmp(ta, tb)
		case okA:
			return -1
		case okB:
			return 1
		}
		return 0
	}
	return t
}
