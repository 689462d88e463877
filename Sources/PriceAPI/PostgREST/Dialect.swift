// The PostgREST dialect (read options, result sets, Prefer, timestamps, error bodies, function calls)
// is its own module; every file of the application speaks it, so it is imported once, here.
@_exported import PostgRESTDialect
