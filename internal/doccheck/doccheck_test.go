package doccheck

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/hybridkv/hybridkv/internal/config"
	"github.com/hybridkv/hybridkv/internal/protocols"
)

// TestDocLinks checks every relative link and image in README.md and
// docs/**/*.md: the file or directory it names exists, and a #fragment
// names a heading of the Markdown file it points into.
func TestDocLinks(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	docs := make(map[string]*document, len(files))
	for _, f := range files {
		docs[f] = parse(t, f)
	}
	// A link's target may be a file outside the set (a result figure, a
	// source file, .ci/run), so headings are parsed on demand too.
	headings := func(path string) map[string]bool {
		if d, ok := docs[path]; ok {
			return d.slugs
		}
		d := parse(t, path)
		docs[path] = d
		return d.slugs
	}

	var broken []string
	checked := 0
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		for _, l := range docs[f].links {
			checked++
			if why := check(root, f, l.target, headings); why != "" {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", rel, l.line, l.target, why))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no links found: the parser is broken")
	}
	if len(broken) > 0 {
		t.Errorf("%d broken links of %d:\n%s", len(broken), checked, strings.Join(broken, "\n"))
		return
	}
	t.Logf("%d links in %d files resolve", checked, len(files))
}

// TestDocCommands checks the README's two opening commands: the main job
// is the benchmark with no flags, described as its defaults are, and the
// test command is the one .ci/run runs.
func TestDocCommands(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := firstCodeBlock(string(readme))
	if len(block) != 2 {
		t.Fatalf("the README's first code block holds %d lines, want the two commands:\n%s",
			len(block), strings.Join(block, "\n"))
	}
	benchCmd, benchNote := splitComment(block[0])
	testCmd, _ := splitComment(block[1])

	if benchCmd != "go run ./cmd/hybridkv bench" {
		t.Errorf("the README's main command is %q, want %q: the benchmark with its defaults",
			benchCmd, "go run ./cmd/hybridkv bench")
	}
	def := config.Default()
	for _, want := range []string{
		fmt.Sprintf("%d sites", len(def.Replicas)),
		fmt.Sprintf("%g ms one way", def.Network.OneWayMs),
		fmt.Sprintf("%g s each", def.Bench.DurationS),
	} {
		if !strings.Contains(benchNote, want) {
			t.Errorf("the README describes the main command as %q, which does not say %q as the defaults have it",
				benchNote, want)
		}
	}
	for _, name := range protocols.DefaultNames() {
		if !strings.Contains(strings.ToLower(benchNote), name) {
			t.Errorf("the README's main command does not name protocol %s, which the benchmark runs by default", name)
		}
	}

	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(ci), "\n"), testCmd) {
		t.Errorf("the README's test command %q is not a line of .ci/run", testCmd)
	}
}

// TestSlug pins the heading anchors to GitHub's rule, which the link check
// relies on.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"What `bench` prints": "what-bench-prints",
		"Safety under partitions, deposed leaders and recovery": "safety-under-partitions-deposed-leaders-and-recovery",
		"The replica's loop":                         "the-replicas-loop",
		"Group commit: the busy writer's wait":       "group-commit-the-busy-writers-wait",
		"CURP-HT (hybrid, transparent to witnesses)": "curp-ht-hybrid-transparent-to-witnesses",
		"2026-11-24: peak throughput, 3 × 128":       "2026-11-24-peak-throughput-3--128",
		"A [linked](x.md) heading_name":              "a-linked-heading_name",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// document is what the checks need of a Markdown file.
type document struct {
	links []link
	slugs map[string]bool
}

type link struct {
	target string
	line   int
}

var (
	// inlineLink finds the target of [text](target) and ![alt](target);
	// targets with parentheses of their own are not used in these docs.
	inlineLink = regexp.MustCompile(`\]\(([^()]*)\)`)
	// refDef is a reference definition: [label]: target.
	refDef  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	heading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	fence   = regexp.MustCompile("^ {0,3}(```|~~~)")
	// linkText is a link or image in a heading, which renders as its text.
	linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// parse reads a Markdown file's links and heading anchors, skipping code:
// a path in a shell example or a "#" comment in a fenced block is neither.
func parse(t *testing.T, path string) *document {
	d := &document{slugs: map[string]bool{}}
	if !strings.HasSuffix(path, ".md") {
		return d
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	inFence := ""
	for i, line := range strings.Split(string(data), "\n") {
		if m := fence.FindStringSubmatch(line); m != nil {
			switch inFence {
			case "":
				inFence = m[1]
			case m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		text := stripCodeSpans(line)
		if m := heading.FindStringSubmatch(text); m != nil {
			// GitHub numbers repeated anchors: x, x-1, x-2.
			s := slug(m[2])
			if n := seen[s]; n > 0 {
				d.slugs[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				d.slugs[s] = true
			}
			seen[s]++
		}
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			d.links = append(d.links, link{target: m[1], line: i + 1})
		}
		if m := refDef.FindStringSubmatch(text); m != nil {
			d.links = append(d.links, link{target: m[1], line: i + 1})
		}
	}
	return d
}

// check returns why a link from file from is broken, or "" when it
// resolves. Links with a scheme (https:, mailto:) are left to their sites.
func check(root, from, target string, headings func(string) map[string]bool) string {
	target = strings.TrimSpace(target)
	if i := strings.IndexAny(target, " \t"); i >= 0 {
		target = target[:i] // a title follows: [x](path "title")
	}
	target = strings.TrimSuffix(strings.TrimPrefix(target, "<"), ">")
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		return ""
	}
	if target == "" {
		return "empty link"
	}
	path, frag, _ := strings.Cut(target, "#")
	path, err := url.PathUnescape(path)
	if err != nil {
		return err.Error()
	}
	dest := from
	switch {
	case path == "":
	case strings.HasPrefix(path, "/"):
		dest = filepath.Join(root, filepath.FromSlash(path))
	default:
		dest = filepath.Join(filepath.Dir(from), filepath.FromSlash(path))
	}
	if rel, err := filepath.Rel(root, dest); err != nil || strings.HasPrefix(rel, "..") {
		return "points outside the repository"
	}
	if _, err := os.Stat(dest); err != nil {
		return "no such file or directory"
	}
	if frag == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	if !headings(dest)[frag] {
		return fmt.Sprintf("no heading with anchor #%s", frag)
	}
	return ""
}

// slug is GitHub's anchor for a heading: the rendered text lowercased,
// every character but letters, digits, marks, '_', '-' and spaces dropped,
// and each space made a '-'.
func slug(h string) string {
	h = linkText.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// stripCodeSpans removes `code` spans, so that what they quote is not
// taken for a link or a heading's markup. A span's delimiters are runs of
// equal length; an unmatched run is literal text.
func stripCodeSpans(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "`")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		n := i
		for n < len(s) && s[n] == '`' {
			n++
		}
		delim := s[i:n]
		end := strings.Index(s[n:], delim)
		if end < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		// Keep the quoted text for headings (it renders), but not as
		// markup: brackets and parentheses inside are code.
		b.WriteString(strings.NewReplacer("[", "", "]", "", "(", "", ")", "").Replace(s[n : n+end]))
		s = s[n+end+len(delim):]
	}
}

// firstCodeBlock returns the lines of the first fenced code block.
func firstCodeBlock(md string) []string {
	var lines []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		if fence.MatchString(line) {
			if in {
				return lines
			}
			in = true
			continue
		}
		if in {
			lines = append(lines, line)
		}
	}
	return nil
}

// splitComment splits a shell line into its command and its # comment.
func splitComment(line string) (cmd, comment string) {
	cmd, comment, _ = strings.Cut(line, "#")
	return strings.TrimSpace(cmd), strings.TrimSpace(comment)
}

// markdownFiles lists README.md and every .md file under docs/.
func markdownFiles(t *testing.T, root string) []string {
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// repoRoot is the directory holding go.mod, above the test's own.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
