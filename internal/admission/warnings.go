package admission

import (
	"context"
	"net/http"
	"strings"
	"sync"
)

// warningRecorder collects the warnings of one request and writes each,
// once, as a Warning response header.
type warningRecorder struct {
	mu   sync.Mutex
	h    http.Header
	seen map[string]bool
}

type warningsKey struct{}

// AddWarning sends a warning to the client of the request ctx belongs to,
// as a "Warning: 299 - "text"" header (kube's format). The same text is
// sent once however often it is added (an update retried after a conflict
// runs admission again). Without WithWarnings on the handler chain it does
// nothing.
func AddWarning(ctx context.Context, text string) {
	rec, _ := ctx.Value(warningsKey{}).(*warningRecorder)
	if rec == nil || text == "" {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.seen[text] {
		return
	}
	rec.seen[text] = true
	rec.h.Add("Warning", "299 - "+quoteWarning(text))
}

// WithWarnings wraps an API handler so that admission plugins can send
// warnings (AddWarning) to the client while the request is served; the
// headers are written with the response.
func WithWarnings(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &warningRecorder{h: w.Header(), seen: map[string]bool{}}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), warningsKey{}, rec)))
	})
}

// quoteWarning quotes a warning text as RFC 7234 (and kube) want: in
// double quotes, with quotes and backslashes escaped, control characters
// turned into spaces.
func quoteWarning(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
