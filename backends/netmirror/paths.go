package netmirror

import (
	"net/url"

	"github.com/tfmirror/tfmirror/backends"
)

// ArchivePath is the path, from the server's root, at which a Handler
// serving a's place serves a's zip: /HOST/NAMESPACE/TYPE/FILE, as its
// version documents name it. Other protocols served beside the network
// mirror (the registry protocols) point their clients at it.
func ArchivePath(a backends.Archive) string {
	p := a.Provider
	return "/" + p.Hostname + "/" + p.Namespace + "/" + p.Type + "/" + url.PathEscape(archiveName(a))
}
