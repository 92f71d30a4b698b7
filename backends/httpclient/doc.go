// Package httpclient is the one HTTP layer of tfmirror's network places:
// network mirrors, origin registries, module registries and the module
// package fetcher. Every request goes through the same rules: a deadline, a
// bounded number of redirects (no loops, never from https down to plain
// http), bounded documents, retries of transient failures, a bearer token
// sent to its own host and port over https only and dropped for good once a
// redirect leaves it, archives downloaded exactly as sent (no transparent
// decompression), and statuses mapped to backends' sentinels. Service
// discovery (/.well-known/terraform.json) is here too, for providers.v1 and
// modules.v1 alike.
package httpclient
