package server

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// quietHost makes the slot tests independent of what the host serves.
func quietHost(t *testing.T) {
	saved := slotAnswers
	slotAnswers = func(int) bool { return false }
	t.Cleanup(func() { slotAnswers = saved })
}

func TestSlotsAreClaimedOncePerDataDir(t *testing.T) {
	quietHost(t)
	slots, root := t.TempDir(), t.TempDir()
	dir := func(name string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	claim := func(d, name string) clusterFile {
		t.Helper()
		cf, err := claimSlot(d, slots, name)
		if err != nil {
			t.Fatal(err)
		}
		return cf
	}
	a, b := dir("a"), dir("b")
	if got := claim(a, ""); got != (clusterFile{Name: "minik", Slot: 0}) {
		t.Errorf("first cluster = %+v, want minik in slot 0", got)
	}
	if got := claim(b, ""); got != (clusterFile{Name: "minik-1", Slot: 1}) {
		t.Errorf("second cluster = %+v, want minik-1 in slot 1", got)
	}
	if got := claim(a, ""); got.Slot != 0 {
		t.Errorf("a restarted in slot %d, want its slot 0", got.Slot)
	}
	if got := claim(dir("c"), "ci"); got != (clusterFile{Name: "ci", Slot: 2}) {
		t.Errorf("named cluster = %+v, want ci in slot 2", got)
	}
	// A data dir that is gone frees its slot for the next new one.
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	if got := claim(dir("d"), ""); got.Slot != 1 {
		t.Errorf("after b's removal a new cluster took slot %d, want 1", got.Slot)
	}
	// b comes back with its old cluster file: slot 1 is d's now.
	b = dir("b")
	if err := writeClusterFile(b, clusterFile{Name: "minik-1", Slot: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := claimSlot(b, slots, ""); err == nil {
		t.Error("two data dirs were given slot 1")
	}
}

func TestConcurrentClaimsGetDistinctSlots(t *testing.T) {
	quietHost(t)
	slots, root := t.TempDir(), t.TempDir()
	const n = 12
	got := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := filepath.Join(root, string(rune('a'+i)))
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Error(err)
				return
			}
			cf, err := claimSlot(d, slots, "")
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = cf.Slot
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, s := range got {
		if seen[s] {
			t.Fatalf("slots %v: %d given twice", got, s)
		}
		seen[s] = true
	}
}

func TestASlotInUseIsSkipped(t *testing.T) {
	saved := slotAnswers
	slotAnswers = func(n int) bool { return n == 0 }
	t.Cleanup(func() { slotAnswers = saved })
	cf, err := claimSlot(t.TempDir(), t.TempDir(), "")
	if err != nil || cf.Slot != 1 {
		t.Fatalf("claim beside a cluster serving on slot 0 = %+v, %v; want slot 1", cf, err)
	}
}

func TestSlotNetworksDoNotOverlap(t *testing.T) {
	if nw := networkOf(0); nw.Host != "127.0.0.1" || nw.ServiceCIDR != "127.96.0.0/20" {
		t.Errorf("slot 0 = %+v", nw)
	}
	if nw := networkOf(1); nw.Host != "127.0.1.1" || nw.ServiceCIDR != "127.96.16.0/20" {
		t.Errorf("slot 1 = %+v", nw)
	}
	if nw := networkOf(maxSlots - 1); nw.Host != "127.0.255.1" || nw.ServiceCIDR != "127.111.240.0/20" {
		t.Errorf("last slot = %+v", nw)
	}
}

func TestSecondServerOnADataDirRefuses(t *testing.T) {
	d := t.TempDir()
	first, err := lockDataDir(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDataDir(d); err == nil {
		t.Fatal("a second lock on one data dir was granted")
	}
	first.Close()
	again, err := lockDataDir(d)
	if err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
	again.Close()
}
