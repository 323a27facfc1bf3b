// Package breakerview is what every operator surface of a [breaker.Manager] shows, worked out
// once: the rows a [breaker.Snapshot] makes, the names called and their last minute, and the
// names configured and not called. The status page (breakerdebug), contrib/prometheus and
// contrib/otel each format a [View] and hold no logic of their own, so that they agree. Each
// row says its name's [Side], a route the program serves or a call it makes, and its last
// minute counts the calls a dependency refused apart from those that failed.
//
// A surface keeps a [Calls], a call observer's bounded registry of the names it heard, and
// reads a View from it and one Snapshot:
//
//	calls := breakerview.NewCalls(breakerview.Limits{}, func(label string) struct{} { return struct{}{} })
//	m := breaker.NewManager(breaker.WithCallObserver(calls.OnCall))
//	since := m.Now() // when the surface began to watch
//	...
//	snap := m.Snapshot()
//	v := calls.View(&snap, since)
//
// Every time is the Manager's: a call counts at CallInfo.At, a View is read at Snapshot.At,
// and no clock of its own is read. Any time a Clock can give counts, before 1970 and after
// 2262 included. The package uses the standard library only, and starts no goroutines.
package breakerview
