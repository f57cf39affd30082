package ledger

import (
	"strconv"
	"time"
)

// WindowLabel writes W the way PromQL range selectors do ("5s", "1m"): the
// window label of /metrics and of a recording's derived series.
func WindowLabel(d time.Duration) string {
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	if d%time.Second == 0 {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
