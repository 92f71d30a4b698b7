package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/backends/cliconfig"
)

// Config writes what `tfmirror config` found: files, mirrors, credentials.
func Config(w io.Writer, c *cliconfig.Config, envTokens map[string]backends.EnvToken) {
	if len(c.Files) == 0 {
		fmt.Fprintln(w, "No CLI configuration file found (looked for TF_CLI_CONFIG_FILE, ~/.terraformrc, ~/.tofurc, ~/.terraform.d/*.tfrc).")
	}
	for _, f := range c.Files {
		fmt.Fprintf(w, "file %s (read by %s)\n", f.Path, strings.Join(f.Clients, ", "))
	}
	fmt.Fprintln(w)
	if len(c.Mirrors) == 0 {
		fmt.Fprintln(w, "No mirrors: provider_installation names no filesystem_mirror, network_mirror or oci_mirror.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MIRROR\tKIND\tINCLUDE\tEXCLUDE\tFROM")
		for _, m := range c.Mirrors {
			inc, exc := strings.Join(patternList(m.Include), ","), strings.Join(patternList(m.Exclude), ",")
			if inc == "" {
				inc = "*"
			}
			if exc == "" {
				exc = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s:%d\n", m.Place, m.Kind, inc, exc, m.File, m.Line)
		}
		tw.Flush()
	}
	for _, in := range c.Installations {
		for _, m := range in.Methods {
			if m.Kind == cliconfig.Direct {
				fmt.Fprintf(w, "direct installation from origin registries is also allowed (%s:%d)\n", m.File, m.Line)
			}
		}
		if len(in.DevOverrides) > 0 {
			fmt.Fprintf(w, "dev_overrides for %d providers are ignored by tfmirror (%s:%d)\n", len(in.DevOverrides), in.File, in.Line)
		}
	}
	fmt.Fprintln(w)
	hosts := credentialHosts(c, envTokens)
	if len(hosts) == 0 {
		fmt.Fprintln(w, "No tokens for network mirrors or registries (credentials blocks, TF_TOKEN_* variables).")
	}
	for _, h := range hosts {
		fmt.Fprintf(w, "token for %s from %s\n", h[0], h[1])
	}
	for _, oc := range c.OCICredentials {
		fmt.Fprintf(w, "OCI credentials for %s: %s (%s:%d)\n", oc.RepositoryPrefix, ociCredentialKind(oc), oc.File, oc.Line)
	}
	if d := c.OCIDefault; d != nil && !d.DiscoverAmbientCredentials {
		fmt.Fprintf(w, "OCI ambient credentials (docker/podman files) are turned off (%s:%d)\n", d.File, d.Line)
	}
}

// credentialHosts lists [host, source] pairs, the environment winning; a
// variable is named as it was set.
func credentialHosts(c *cliconfig.Config, envTokens map[string]backends.EnvToken) [][2]string {
	var out [][2]string
	for h, t := range envTokens {
		out = append(out, [2]string{h, t.Var})
	}
	for h := range c.Tokens {
		if _, ok := envTokens[h]; !ok {
			out = append(out, [2]string{h, c.TokenFiles[h]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// ConfigJSON writes the same as Config, as one JSON object.
func ConfigJSON(w io.Writer, c *cliconfig.Config, envTokens map[string]backends.EnvToken, loadErr error) error {
	type mirror struct {
		Kind     string   `json:"kind"`
		Place    string   `json:"place"`
		Location string   `json:"location"`
		Include  []string `json:"include"`
		Exclude  []string `json:"exclude"`
		File     string   `json:"file"`
		Line     int      `json:"line"`
	}
	type cred struct {
		Host   string `json:"host"`
		Source string `json:"source"`
	}
	type ociCred struct {
		Prefix string `json:"prefix"`
		Kind   string `json:"kind"`
		File   string `json:"file"`
		Line   int    `json:"line"`
	}
	type file struct {
		Path    string   `json:"path"`
		Clients []string `json:"clients"`
	}
	out := struct {
		Files          []file    `json:"files"`
		Mirrors        []mirror  `json:"mirrors"`
		Credentials    []cred    `json:"credentials"`
		OCICredentials []ociCred `json:"oci_credentials"`
		Warnings       []string  `json:"warnings"`
		Errors         []string  `json:"errors"`
	}{Files: []file{}, Mirrors: []mirror{}, Credentials: []cred{}, OCICredentials: []ociCred{}, Warnings: append([]string{}, c.Warnings...), Errors: []string{}}
	for _, f := range c.Files {
		out.Files = append(out.Files, file{f.Path, f.Clients})
	}
	for _, m := range c.Mirrors {
		out.Mirrors = append(out.Mirrors, mirror{m.Kind, m.Place, m.Location, patternList(m.Include), patternList(m.Exclude), m.File, m.Line})
	}
	for _, h := range credentialHosts(c, envTokens) {
		out.Credentials = append(out.Credentials, cred{h[0], h[1]})
	}
	for _, oc := range c.OCICredentials {
		out.OCICredentials = append(out.OCICredentials, ociCred{oc.RepositoryPrefix, ociCredentialKind(oc), oc.File, oc.Line})
	}
	var ce *cliconfig.Error
	if errors.As(loadErr, &ce) {
		for _, d := range ce.Diags {
			out.Errors = append(out.Errors, d.String())
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func patternList(ps []cliconfig.Pattern) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func ociCredentialKind(oc cliconfig.OCICredentials) string {
	switch {
	case oc.DockerCredentialHelper != "":
		return "docker-credential-" + oc.DockerCredentialHelper
	case oc.AccessToken != "":
		return "access token"
	}
	return "username " + oc.Username
}
