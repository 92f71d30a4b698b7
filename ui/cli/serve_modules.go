package cli

import (
	"context"
	"fmt"
	"log"
	gosync "sync"

	"github.com/tfmirror/tfmirror/backends/modules"
	"github.com/tfmirror/tfmirror/backends/modules/modplace"
	"github.com/tfmirror/tfmirror/backends/place"
	"github.com/tfmirror/tfmirror/backends/regserve"
	"github.com/tfmirror/tfmirror/sync/pull"
)

// serveModules is what serve's modules.v1 answers from: the module place
// --modules names (a directory, a bucket or oci://REGISTRY/TEMPLATE), pulled
// through from each module's registry where serve has an upstream (through
// o, which reaches what serve may reach), its fetches counted in metrics;
// nil without --modules.
func (f *pullFlags) serveModules(ctx context.Context, o place.Options, logger *log.Logger, pol *pull.Policy, metrics *pull.Metrics) (regserve.ModuleSource, error) {
	if f.modules == "" {
		return nil, nil
	}
	cache, err := modplace.OpenWriter(ctx, f.modules, o)
	if err != nil {
		return nil, usageErr("serve: --modules %s: %v", f.modules, err)
	}
	if _, ok := cache.(modules.PackageOpener); !ok {
		return nil, usageErr("serve: --modules %s: serve cannot stream the packages of such a place (give a directory, s3://BUCKET/PREFIX or oci://REGISTRY/TEMPLATE)", f.modules)
	}
	mo := pull.ModuleOptions{Cache: cache, Policy: pol, TTL: f.ttl, Logger: logger, UpstreamName: f.upstream, Metrics: metrics}
	if f.upstream != "" && !f.offline {
		b, err := modplace.Builder(o, f.spoolDir)
		if err != nil {
			return nil, err
		}
		mo.Builder = b
		mo.Upstream, err = moduleUpstream(f.upstream, o)
		if err != nil {
			return nil, err
		}
	}
	return pull.NewModules(mo), nil
}

// moduleUpstream opens the registry of each module hostname (--upstream
// origin), or the one registry --upstream registry://HOST names for its
// own hostname; other upstreams offer no modules.
func moduleUpstream(upstream string, o place.Options) (func(context.Context, string) (pull.ModuleUpstream, error), error) {
	only := ""
	if upstream != "origin" {
		s, err := place.Parse(upstream)
		if err != nil || s.Kind != place.Registry {
			return nil, nil
		}
		only = s.Target
	}
	var mu gosync.Mutex
	opened := map[string]*modules.Registry{}
	return func(ctx context.Context, host string) (pull.ModuleUpstream, error) {
		if only != "" && host != only {
			return nil, fmt.Errorf("module hostname %s: --upstream %s mirrors %s only", host, upstream, only)
		}
		mu.Lock()
		defer mu.Unlock()
		if r := opened[host]; r != nil {
			return r, nil
		}
		r, err := modplace.OpenRegistry("registry://"+host, o)
		if err != nil {
			return nil, err
		}
		opened[host] = r
		return r, nil
	}, nil
}
