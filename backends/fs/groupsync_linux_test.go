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

func TestMeminfoKB(t *testing.T) {
	text := []byte("MemTotal:       24683648 kB\nDirty:               812 kB\nWriteback:             0 kB\nWritebackTmp:   9 kB\n")
	for field, want := range map[string]int64{"Dirty:": 812, "Writeback:": 0, "MemTotal:": 24683648} {
		if got, ok := meminfoKB(text, field); !ok || got != want {
			t.Errorf("%s = %d, %v; want %d", field, got, ok, want)
		}
	}
	if _, ok := meminfoKB(text, "Shmem:"); ok {
		t.Error("a field that is not there was found")
	}
	if _, ok := meminfoKB([]byte("Dirty: lots\n"), "Dirty:"); ok {
		t.Error("a value that is not a number was read")
	}
}
