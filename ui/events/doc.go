// Package events is the UI's events pane: every failure and warning of the
// session, each in full (lazygit's command log, k9s's events), where the
// status line has room for one cut line of the latest.
package events
