package ociclient

import (
	"encoding/json"
	"errors"

	"oras.land/oras-go/v2/registry/remote/errcode"
)

// PlainDetails makes the error responses of registries in err print what
// the registries sent. A response's errors carry a free-form "detail" that
// oras decodes into Go values and prints with %v, so users would read
// map[name:repo] (distribution's NAME_UNKNOWN); PlainDetails turns each
// detail back into its JSON text. Every registry error on its way to a
// user passes through here (classify, and modoci's errors). It returns
// err.
func PlainDetails(err error) error {
	var resp *errcode.ErrorResponse
	if !errors.As(err, &resp) {
		return err
	}
	for i, e := range resp.Errors {
		if e.Detail == nil {
			continue
		}
		if _, ok := e.Detail.(string); ok {
			continue
		}
		if b, jerr := json.Marshal(e.Detail); jerr == nil {
			resp.Errors[i].Detail = string(b)
		}
	}
	return err
}
