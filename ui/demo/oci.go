package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/sirupsen/logrus"

	// The filesystem storage driver registers itself by name.
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

// OCITemplate is the repository template the demo's OCI registry is
// written with, below its host: OpenTofu's oci_mirror repository_template
// is HOST/OCITemplate.
const OCITemplate = "tf/${namespace}/${type}"

// OCIRegistry is a real OCI registry (the CNCF distribution registry, the
// `registry:2` image's code, in process) served over HTTPS on 127.0.0.1,
// its storage in the world (DIR/oci), anonymous, as the tests' registry.
type OCIRegistry struct {
	// Host is 127.0.0.1:PORT.
	Host string
	// Client trusts the registry's certificate (the world's CertFile).
	Client *http.Client
	ts     *tlsServer
	app    *handlers.App
}

// Place is the registry as a place argument:
// oci://127.0.0.1:PORT/tf/${namespace}/${type}.
func (r *OCIRegistry) Place() string { return "oci://" + r.Host + "/" + OCITemplate }

// ServeOCI serves the world's OCI registry until ctx is cancelled or Close
// is called. What is pushed to it stays in DIR/oci.
func (w *World) ServeOCI(ctx context.Context) (*OCIRegistry, error) {
	cert, err := w.cert()
	if err != nil {
		return nil, err
	}
	// The registry logs through logrus's standard logger, on the terminal
	// the UI draws on: silence it.
	logrus.SetOutput(io.Discard)
	cfg := &configuration.Configuration{}
	cfg.Storage = configuration.Storage{
		"filesystem":  configuration.Parameters{"rootdirectory": filepath.Join(w.Dir, "oci")},
		"delete":      configuration.Parameters{"enabled": true},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	cfg.HTTP.Secret = "tfmirror-demo-not-a-secret"
	cfg.Catalog.MaxEntries = 1000 // the YAML loader's default; zero lists nothing
	appCtx, cancel := context.WithCancel(ctx)
	app := handlers.NewApp(appCtx, cfg)
	ts, err := serveTLS(appCtx, app, cert)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("demo: serving the OCI registry: %w", err)
	}
	ts.onClose = func() { _ = app.Shutdown(); cancel() } // the demo is over
	return &OCIRegistry{Host: ts.addr, Client: ts.client, ts: ts, app: app}, nil
}

// Close stops the registry.
func (r *OCIRegistry) Close() error { return r.ts.close() }
