package cliconfig

import (
	"context"
	"errors"
	"strings"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// OCIStore returns the configuration's OCI credentials as an ORAS
// credentials store, for the OCI backend: a registry's oci_credentials block
// without a repository path, else oci_default_credentials' helper, else
// ambient (the credentials container tools use, passed by the caller; nil
// for none). Ambient credentials are skipped when oci_default_credentials
// turns discovery off. Blocks for a repository path apply per repository,
// which a per-registry store cannot express: use OCICredentialsFor for them.
//
// The store is read-only; credential helpers are run only when a registry
// asks for credentials.
func (c *Config) OCIStore(ambient credentials.Store) credentials.Store {
	s := ociStore{c: c, ambient: ambient}
	if c.OCIDefault != nil && !c.OCIDefault.DiscoverAmbientCredentials {
		s.ambient = nil
	}
	return s
}

type ociStore struct {
	c       *Config
	ambient credentials.Store
}

var errReadOnly = errors.New("the CLI configuration's OCI credentials are read-only: edit the oci_credentials blocks instead")

func (s ociStore) Get(ctx context.Context, serverAddress string) (auth.Credential, error) {
	host := strings.TrimPrefix(strings.TrimPrefix(serverAddress, "https://"), "http://")
	for _, oc := range s.c.OCICredentials {
		if oc.RepositoryPath != "" || !strings.EqualFold(oc.Registry, host) {
			continue
		}
		switch {
		case oc.DockerCredentialHelper != "":
			return credentials.NewNativeStore(oc.DockerCredentialHelper).Get(ctx, host)
		case oc.AccessToken != "" || oc.RefreshToken != "":
			return auth.Credential{AccessToken: oc.AccessToken, RefreshToken: oc.RefreshToken}, nil
		default:
			return auth.Credential{Username: oc.Username, Password: oc.Password}, nil
		}
	}
	if d := s.c.OCIDefault; d != nil && d.DockerCredentialHelper != "" {
		cred, err := credentials.NewNativeStore(d.DockerCredentialHelper).Get(ctx, host)
		if err != nil || cred != auth.EmptyCredential {
			return cred, err
		}
	}
	if s.ambient != nil {
		return s.ambient.Get(ctx, serverAddress)
	}
	return auth.EmptyCredential, nil
}

func (s ociStore) Put(context.Context, string, auth.Credential) error { return errReadOnly }
func (s ociStore) Delete(context.Context, string) error               { return errReadOnly }
