// Package pgstore is a [store.Store] in PostgreSQL.
package pgstore
