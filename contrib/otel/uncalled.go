package breakerotel

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
)

// observeUncalled reports breaker.uncalled, 1 for each name of snap configured and not called,
// as breakerdebug.Uncalled finds them among called, the names called in the last minute at now:
// the status page's "uncalled", as an instrument. It reports nothing in the first minute since
// Watch (since), when a name without calls may just not have had its turn yet; nor while calls
// past the bounds counted in the minute, as OverflowResource, which may be any name's.
func (ins *Instruments) observeUncalled(o metric.Observer, snap *breaker.Snapshot,
	called map[string]uint64, now, since time.Time) {
	if now.Before(since.Add(time.Minute)) {
		return
	}
	observed := map[[2]string]bool{} // names that differ only in bytes not UTF-8 share attributes
	for _, u := range breakerdebug.Uncalled(snap, called) {
		attrs := [2]string{resourceValue(u.Name), resourceValue(u.Nearest)}
		if !observed[attrs] {
			observed[attrs] = true
			o.ObserveInt64(ins.uncalled, 1,
				metric.WithAttributeSet(ins.set(ResourceKey.String(attrs[0]), NearestKey.String(attrs[1]))))
		}
	}
}
