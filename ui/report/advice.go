package report

import (
	"errors"

	"github.com/tfmirror/tfmirror/backends"
	"github.com/tfmirror/tfmirror/hashing"
	"github.com/tfmirror/tfmirror/sync"
)

// Advice is what to do about an error in the command line's terms: the flag
// to pass. The layers below say what went wrong; which flag fixes it is the
// front end's to say (the terminal UI has keys instead).
func Advice(err error) string {
	switch {
	case errors.Is(err, backends.ErrConflict):
		return "use --force to replace it"
	case errors.Is(err, hashing.ErrTooLarge):
		return "if the archive is genuine, raise the limit with --max-unpacked"
	case errors.Is(err, backends.ErrNoCatalogue):
		return "name the providers with --provider (HOST/NAMESPACE/TYPE) or --lock"
	}
	return ""
}

// Advised is err's message followed by its Advice, if any.
func Advised(err error) string {
	if a := Advice(err); a != "" {
		return backends.Printable(err.Error() + "; " + a)
	}
	return backends.Printable(err.Error())
}

// findingAdvice is the advice a finding's status calls for.
func findingAdvice(s sync.Status) string {
	if s == sync.StatusConflict {
		return "use --force to replace it"
	}
	return ""
}

// advisedDetail is a finding's detail with the advice its status calls for.
func advisedDetail(f sync.Finding) string {
	if a := findingAdvice(f.Status); a != "" {
		return backends.Printable(f.Detail + " (" + a + ")")
	}
	return backends.Printable(f.Detail)
}
