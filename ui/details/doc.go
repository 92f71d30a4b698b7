// Package details is the UI's Details pane: for the matrix cell under the
// cursor, what each mirror holds (size, h1:/zh: hashes and the source that
// states each) and how verification went; for the job under the cursor, its
// transfer, checks and the whole of any error.
package details
