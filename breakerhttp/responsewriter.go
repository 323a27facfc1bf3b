package breakerhttp

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// responseWriter records the status a handler answers. It passes every call on to the
// ResponseWriter it wraps.
type responseWriter struct {
	http.ResponseWriter
	status   int  // the first final status written; 0 until then
	hijacked bool // the handler took the connection
}

var (
	_ http.Flusher  = (*responseWriter)(nil)
	_ http.Hijacker = (*responseWriter)(nil)
	_ io.ReaderFrom = (*responseWriter)(nil)
)

// statusCode is the status the client got: 200 when the handler wrote none.
func (w *responseWriter) statusCode() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// WriteHeader records the first final status: informational ones (1xx) but 101 Switching
// Protocols precede it.
func (w *responseWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code) // panics on an invalid code: then nothing is recorded
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
}

// Write writes the body; the status is 200 if none was written before.
func (w *responseWriter) Write(b []byte) (int, error) {
	w.sent()
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps the server's io.ReaderFrom (sendfile) fast path.
func (w *responseWriter) ReadFrom(r io.Reader) (int64, error) {
	w.sent()
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{w.ResponseWriter}, r)
}

// Flush sends what is buffered; see FlushError.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError sends what is buffered, and the header with status 200 if none was written. It is
// what http.ResponseController.Flush calls, so the underlying error reaches it.
func (w *responseWriter) FlushError() error {
	w.sent()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection to the handler, if the underlying ResponseWriter can.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

// Unwrap returns the wrapped ResponseWriter, for http.ResponseController.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sent records the implied status 200 when the header goes out without one.
func (w *responseWriter) sent() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
}

// writerOnly hides every method but Write, so io.Copy cannot call ReadFrom again.
type writerOnly struct{ io.Writer }
