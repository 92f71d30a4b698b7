package backends

import (
	"context"
	gosync "sync"
)

// WarningLog collects a place's warnings, each once, in order; it is safe
// for concurrent use. Places embed it to implement Warner.
type WarningLog struct {
	mu   gosync.Mutex
	list []string
	seen map[string]bool
}

// Warn records msg unless it was recorded before, its control characters
// written out (Printable).
func (w *WarningLog) Warn(msg string) {
	msg = Printable(msg)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[msg] {
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[msg] = true
	w.list = append(w.list, msg)
}

// Warnings returns the warnings recorded so far.
func (w *WarningLog) Warnings() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

// Notice is what a place says while a command runs, as it happens: that
// it waits, and for what, or a warning the command must show at once (in
// its --json output too).
type Notice struct {
	// Kind is NoticeWaiting or NoticeWarning.
	Kind string
	// Place names the place.
	Place string
	// Message says what happened, its control characters written out
	// (Printable).
	Message string
}

// The kinds of Notice.
const (
	NoticeWaiting = "waiting"
	NoticeWarning = "warning"
)

type clientKey struct{}

// WithClient names, in a request's context, who made it: the name of the
// token it presented, or of its client certificate (serve --auth,
// --client-ca); never the token itself.
func WithClient(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, clientKey{}, name)
}

// ClientOf is the name WithClient gave ctx, or "".
func ClientOf(ctx context.Context) string {
	s, _ := ctx.Value(clientKey{}).(string)
	return s
}
