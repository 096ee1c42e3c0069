package disk

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestRecordsSyncIntoWrittenBlocks: the witness log's room ahead of its
// frames is written zeros, not space reserved with fallocate, whose
// "unwritten" extents make every data sync also commit their conversion
// (see recordsChunk). Checked with the FIEMAP ioctl; skipped where the
// file system does not answer it.
func TestRecordsSyncIntoWrittenBlocks(t *testing.T) {
	dir := t.TempDir()
	path, end := writeRecords(t, dir)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	extents, err := fileExtents(f)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTTY) {
		t.Skipf("the file system under %s does not report extents: %v", dir, err)
	}
	require.NoError(t, err)
	require.NotEmpty(t, extents, "a synced witness log has no blocks")
	info, err := f.Stat()
	require.NoError(t, err)
	require.Greater(t, info.Size(), end, "no room was made ahead of the frames")
	for _, e := range extents {
		require.Zero(t, e.flags&fiemapExtentUnwritten,
			"bytes %d–%d of the witness log are reserved but unwritten", e.logical, e.logical+e.length)
	}
}

const (
	fsIocFiemap           = 0xC020660B
	fiemapFlagSync        = 0x1
	fiemapExtentUnwritten = 0x800
	fiemapExtentLast      = 0x1
)

type extent struct{ logical, length, flags uint64 }

// fileExtents lists a file's extents (FS_IOC_FIEMAP, after syncing it).
func fileExtents(f *os.File) ([]extent, error) {
	const max = 64
	// struct fiemap (32 bytes) followed by max struct fiemap_extent (56 bytes each).
	buf := make([]uint64, (32+56*max)/8)
	buf[1] = ^uint64(0) // fm_length: the whole file
	hdr := (*[4]uint32)(unsafe.Pointer(&buf[2]))
	hdr[0] = fiemapFlagSync // fm_flags
	hdr[2] = max            // fm_extent_count
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0]))); errno != 0 {
		return nil, errno
	}
	n := int(hdr[1]) // fm_mapped_extents
	var out []extent
	for i := range n {
		e := buf[4+7*i:]
		flags := uint64((*[2]uint32)(unsafe.Pointer(&e[5]))[0])
		out = append(out, extent{logical: e[0], length: e[2], flags: flags})
	}
	return out, nil
}
