// Package sentinelinit initializes sentinel-golang once per process, quiet and offline, for
// the scenarios and the peer micro-benchmarks alike. It is a package of its own so that the
// micro-benchmarks' binary links sentinel-golang without the scenario guards of every other
// library (go-zero's starts a CPU sampler and signal handlers when it is linked).
package sentinelinit

import (
	"os"
	"sync"

	"github.com/alibaba/sentinel-golang/api"
	"github.com/alibaba/sentinel-golang/core/config"
)

var (
	once   sync.Once
	logDir string
	err    error
)

// Init initializes sentinel-golang once per process and returns the temp directory its logs
// go to, which Cleanup removes. api.InitDefault would log to files under ~/logs/csp, flush a
// metric log there every second and start collectors of system load, CPU and memory; this
// keeps the defaults but logs nowhere and turns the metric log and the collectors off, none of
// which takes part in circuit breaking.
func Init() (string, error) {
	once.Do(func() {
		logDir, err = os.MkdirTemp("", "sentinel-")
		if err != nil {
			return
		}
		conf := config.NewDefaultConfig()
		conf.Sentinel.Log.Logger = quietSentinel{}
		conf.Sentinel.Log.Dir = logDir
		conf.Sentinel.Log.Metric.FlushIntervalSec = 0
		conf.Sentinel.Stat.System.CollectIntervalMs = 0
		conf.Sentinel.Stat.System.CollectLoadIntervalMs = 0
		conf.Sentinel.Stat.System.CollectCpuIntervalMs = 0
		conf.Sentinel.Stat.System.CollectMemoryIntervalMs = 0
		err = api.InitWithConfig(conf)
	})
	return logDir, err
}

// Cleanup removes the log directory of Init, if it made one. Call it once the process is done
// with sentinel-golang.
func Cleanup() {
	if logDir != "" {
		_ = os.RemoveAll(logDir)
	}
}

// quietSentinel drops every log line sentinel-golang writes.
type quietSentinel struct{}

func (quietSentinel) Debug(string, ...any)        {}
func (quietSentinel) DebugEnabled() bool          { return false }
func (quietSentinel) Info(string, ...any)         {}
func (quietSentinel) InfoEnabled() bool           { return false }
func (quietSentinel) Warn(string, ...any)         {}
func (quietSentinel) WarnEnabled() bool           { return false }
func (quietSentinel) Error(error, string, ...any) {}
func (quietSentinel) ErrorEnabled() bool          { return false }
