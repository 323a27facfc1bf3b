package breakerview

import (
	"strings"

	"github.com/halfopen/breaker/breakerhttp"
)

// Side is which side of a call a resource name stands for: a request the program serves, or a
// call it makes. It is a function of the name alone, so showing it adds no series to an
// exporter: the names breakerhttp.Middleware makes begin with breakerhttp.ServerPrefix, and
// every other name (breakerhttp.NewTransport's, contrib/grpc's, a name given to Do) is a call
// the program makes.
type Side uint8

const (
	// NoSide is the side of Overflow, whose calls are those of the names past the Limits, of
	// either side.
	NoSide Side = iota
	// ClientSide is a call the program makes: a name that does not begin with
	// breakerhttp.ServerPrefix.
	ClientSide
	// ServerSide is a request the program serves: a name that begins with
	// breakerhttp.ServerPrefix, as those of breakerhttp.Middleware do.
	ServerSide
)

// String returns the label every surface gives s: "client" or "server"; "" for NoSide, which
// the exporters leave out.
func (s Side) String() string {
	switch s {
	case ClientSide:
		return "client"
	case ServerSide:
		return "server"
	}
	return ""
}

// SideOf returns the side of the resource name, or of its Label, which keeps the prefix:
// ServerSide for one that begins with breakerhttp.ServerPrefix, ClientSide for any other.
func SideOf(name string) Side {
	if strings.HasPrefix(name, breakerhttp.ServerPrefix) {
		return ServerSide
	}
	return ClientSide
}

// labelSide is the side of a label: NoSide for Overflow, else SideOf(label).
func labelSide(label string) Side {
	if label == Overflow {
		return NoSide
	}
	return SideOf(label)
}
