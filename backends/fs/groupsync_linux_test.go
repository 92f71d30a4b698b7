package fs

import "testing"

func TestKernelAtLeast(t *testing.T) {
	for release, want := range map[string]bool{
		"6.1.0-18-amd64":         true,
		"5.8.0":                  true,
		"5.10.219-208.866.amzn2": true,
		"5.7.19":                 false,
		"4.19.0-27-amd64":        false,
		"10.0":                   true,
		"5":                      false,
		"":                       false,
		"x.y":                    false,
	} {
		if got := kernelAtLeast(release, 5, 8); got != want {
			t.Errorf("kernelAtLeast(%q, 5, 8) = %v, want %v", release, got, want)
		}
	}
}
