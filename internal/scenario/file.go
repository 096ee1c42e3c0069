package scenario

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Mismatches runs the scenario file at path and returns, for each command
// whose output differs from the file's, the command with what it printed
// and what the file expected: none when the file passes. It lets a
// mutation test show that a scenario fails when its bug is put back, which
// datadriven's runner, failing the test, cannot.
func Mismatches(t *testing.T, path string) []string {
	var diffs []string
	runFile(t, path, func(c fileCase, got string) {
		if got != c.want {
			diffs = append(diffs, fmt.Sprintf("%s: %s\n got:\n%s want:\n%s", c.pos, c.line, got, c.want))
		}
	})
	return diffs
}

// Findings runs the scenario file at path and returns what each check
// command that did not find the history clean printed: the checker's
// verdict, not a changed trace, is what shows a bug caught.
func Findings(t *testing.T, path string) []string {
	var found []string
	runFile(t, path, func(c fileCase, got string) {
		if c.cmd != "check" {
			return
		}
		for line := range strings.Lines(got) {
			if strings.HasPrefix(line, "clean: ") {
				return
			}
		}
		found = append(found, fmt.Sprintf("%s: %s\n%s", c.pos, c.line, got))
	})
	return found
}

// runFile runs the file's commands in order, handing each with its output
// to visit.
func runFile(t *testing.T, path string, visit func(c fileCase, got string)) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{}
	for _, c := range parse(string(data)) {
		d := &datadriven.TestData{Pos: c.pos, Cmd: c.cmd, CmdArgs: c.args}
		visit(c, e.do(t, d))
	}
}

type fileCase struct {
	pos, line, cmd, want string
	args                 []datadriven.CmdArg
}

// parse reads the subset of datadriven's format the scenario files use:
// comments, then blocks of one command line, a "----" line and its
// expected output up to the next blank line.
func parse(data string) []fileCase {
	lines := strings.Split(data, "\n")
	var cases []fileCase
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := fileCase{pos: fmt.Sprintf("line %d", i+1), line: line}
		fields := strings.Fields(line)
		c.cmd = fields[0]
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			a := datadriven.CmdArg{Key: k}
			if ok {
				a.Vals = []string{v}
			}
			c.args = append(c.args, a)
		}
		i++ // the ---- line
		var want strings.Builder
		for i+1 < len(lines) && lines[i+1] != "" {
			i++
			want.WriteString(lines[i] + "\n")
		}
		c.want = want.String()
		cases = append(cases, c)
	}
	return cases
}
