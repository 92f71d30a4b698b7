package keypress

import tea "charm.land/bubbletea/v2"

var named = map[string]tea.KeyPressMsg{
	"enter":     {Code: tea.KeyEnter},
	"space":     {Code: tea.KeySpace, Text: " "},
	"esc":       {Code: tea.KeyEscape},
	"tab":       {Code: tea.KeyTab},
	"up":        {Code: tea.KeyUp},
	"down":      {Code: tea.KeyDown},
	"left":      {Code: tea.KeyLeft},
	"right":     {Code: tea.KeyRight},
	"pgdown":    {Code: tea.KeyPgDown},
	"backspace": {Code: tea.KeyBackspace},
	"ctrl+c":    {Code: 'c', Mod: tea.ModCtrl},
	"ctrl+r":    {Code: 'r', Mod: tea.ModCtrl},
}

// Msg is the press of the key named k: a name above, or one character.
func Msg(k string) tea.KeyPressMsg {
	if msg, ok := named[k]; ok {
		return msg
	}
	r := []rune(k)
	if len(r) != 1 {
		panic("keypress: unknown key " + k)
	}
	return tea.KeyPressMsg{Code: r[0], Text: k}
}
