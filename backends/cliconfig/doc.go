// Package cliconfig reads the Terraform/OpenTofu CLI configuration a user
// already has (~/.terraformrc, ~/.tofurc, the *.tfrc files of the config
// directory, or the file TF_CLI_CONFIG_FILE names) and turns it into what
// tfmirror needs: the mirrors of provider_installation blocks as place
// arguments, bearer tokens for HTTP places, and OCI registry credentials.
//
// The clients still parse this file with the legacy HCL 1 parser; tfmirror
// parses it with HCL 2 (native syntax, or JSON for *.json files), which reads
// every configuration written in the documented block syntax. Only Unix
// locations are searched.
package cliconfig
