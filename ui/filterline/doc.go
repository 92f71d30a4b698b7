// Package filterline is the "/" filter line the list panes share: a text
// input, whether the user is typing in it, and the keys that end typing.
package filterline
