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
	// The first SIGINT or SIGTERM cancels the context, naming the signal so
	// the exit code can (130, 143); a second one kills as usual.
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		signal.Stop(sigs)
		cancel(cli.Interrupted{Signal: s})
	}()
	os.Exit(cli.Execute(ctx, os.Args[1:]))
}
