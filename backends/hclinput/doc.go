// Package hclinput bounds what tfmirror hands to hcl/v2: the lock files and
// CLI configuration files it reads. hcl's parsers (native and JSON) and its
// expression evaluator recurse once per level of nesting, with no limit, and
// a Go stack overflow is not a panic that can be recovered: a few hundred KB
// of brackets in ~/.terraformrc would kill every command. Size is checked
// before a file is read in full, and nesting before the bytes are parsed.
package hclinput
