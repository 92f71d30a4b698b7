package pull

import (
	"context"
	gosync "sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// listings reuses upstream answers for a TTL: concurrent requests for a
// key share one load, which outlives the request that started it, and
// when a load fails the last answer is served, however old.
type listings struct {
	mu    gosync.Mutex
	last  map[string]timed
	group singleflight.Group
}

// get returns load's answer for key, reusing one younger than ttl (zero:
// DefaultTTL). stale is the age of the last answer, served because load
// failed with err; zero otherwise.
func (l *listings) get(ctx context.Context, key string, ttl time.Duration, load func(context.Context) (any, error)) (v any, stale time.Duration, err error) {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	l.mu.Lock()
	last, ok := l.last[key]
	l.mu.Unlock()
	if ok && time.Since(last.at) < ttl {
		return last.val, 0, nil
	}
	v, err, _ = l.group.Do(key, func() (any, error) {
		v, err := load(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.last == nil {
			l.last = map[string]timed{}
		}
		l.last[key] = timed{at: time.Now(), val: v}
		l.mu.Unlock()
		return v, nil
	})
	if err != nil && ok {
		return last.val, max(time.Since(last.at), time.Nanosecond), err
	}
	return v, 0, err
}
