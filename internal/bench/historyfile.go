package bench

import (
	"bufio"
	"errors"
	"os"

	"github.com/hybridkv/hybridkv/internal/history"
)

// historyFile is a checked run's history as it is recorded: the clients
// record into a recorder that streams the events to the run's history
// file, so the client process's memory stays flat however long the run.
type historyFile struct {
	rec  *history.Recorder
	out  *os.File
	buf  *bufio.Writer
	done bool
}

// historyBuffer gathers the file's writes: a chunk of events is a few
// megabytes.
const historyBuffer = 1 << 20

func createHistory(path string) (*historyFile, error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(out, historyBuffer)
	rec, err := history.NewSpillingRecorder(buf)
	if err != nil {
		out.Close()
		return nil, err
	}
	return &historyFile{rec: rec, out: out, buf: buf}, nil
}

// finish writes the rest of the history and closes the file; the file is
// then whole, and the recorder takes nothing more.
func (h *historyFile) finish() error {
	if h.done {
		return errors.New("bench: history finished twice")
	}
	h.done = true
	err := h.rec.Close()
	if err == nil {
		err = h.buf.Flush()
	}
	if cerr := h.out.Close(); err == nil {
		err = cerr
	}
	return err
}

// abandon closes an unfinished history when the run stops early.
func (h *historyFile) abandon() {
	if !h.done {
		_ = h.finish() // the run already failed; its history is not checked
	}
}
