package backends

import "testing"

func TestSuggestPlatform(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Linux_AMD64", "linux_amd64"},
		{"linux_x86_64", "linux_amd64"},
		{"LINUX_X86_64", "linux_amd64"},
		{"linux-amd64", "linux_amd64"},
		{"darwin-aarch64", "darwin_arm64"},
		{"macos_arm64", "darwin_arm64"},
		{"osx_x86_64", "darwin_amd64"},
		{"win_x64", "windows_amd64"},
		{"linux_i686", "linux_386"},
		{"linux_armv7", "linux_arm"},
		{" linux_amd64", "linux_amd64"},
		// Already as the clients write them, or nothing like a platform.
		{"linux_amd64", ""},
		{"freebsd_arm", ""},
		{"linux", ""},
		{"a_b_c", ""},
		{"", ""},
	} {
		got, ok := SuggestPlatform(c.in)
		if c.want == "" && ok || c.want != "" && (!ok || got.String() != c.want) {
			t.Errorf("SuggestPlatform(%q) = %v, %v; want %q", c.in, got, ok, c.want)
		}
	}
}
