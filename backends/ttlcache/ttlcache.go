// Package ttlcache keeps answers for a time: a typed map of values by key,
// each reused while younger than a TTL, with one load at a time per key
// (singleflight) that outlives the request that started it. The network
// mirror handler keeps its listings in one, the pull-through mirror its
// upstream's.
package ttlcache

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Cache holds values of type V by key. Its zero value is ready, with a TTL
// of zero (nothing reused); set TTL before use. It is safe for concurrent
// use.
type Cache[V any] struct {
	// TTL is how long a value is reused.
	TTL time.Duration

	mu    sync.Mutex
	last  map[string]entry[V]
	group singleflight.Group
}

type entry[V any] struct {
	at  time.Time
	val V
}

// Get returns the value for key: the one kept, when younger than the TTL;
// otherwise load's. Concurrent Gets of one key share one load, made under
// ctx without its cancellation (the request that started it may go away
// while others wait for it). A load that fails keeps nothing: when a value
// was kept before, Get returns it, its age as stale, and load's error;
// otherwise the zero V and the error. stale is zero for a fresh value.
func (c *Cache[V]) Get(ctx context.Context, key string, load func(context.Context) (V, error)) (v V, stale time.Duration, err error) {
	c.mu.Lock()
	last, ok := c.last[key]
	c.mu.Unlock()
	if ok && time.Since(last.at) < c.TTL {
		return last.val, 0, nil
	}
	got, err, _ := c.group.Do(key, func() (any, error) {
		v, err := load(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if c.last == nil {
			c.last = map[string]entry[V]{}
		}
		c.last[key] = entry[V]{at: time.Now(), val: v}
		c.mu.Unlock()
		return v, nil
	})
	if err != nil {
		if ok {
			return last.val, max(time.Since(last.at), time.Nanosecond), err
		}
		return v, 0, err
	}
	return got.(V), 0, nil
}
