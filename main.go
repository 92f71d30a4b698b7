// Command tfmirror browses, compares, syncs and verifies private
// Terraform/OpenTofu provider mirrors. The command line lives in ui/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tfmirror/tfmirror/ui/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
