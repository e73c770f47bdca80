package repocheck

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// repoRoot walks up from the test's directory to the one holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
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

// repoFiles lists the files under root whose names keep(name) accepts,
// skipping .git and other version-control metadata.
func repoFiles(t *testing.T, root string, keep func(name string) bool) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if keep(d.Name()) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func isMarkdown(name string) bool { return strings.HasSuffix(name, ".md") }

// A Markdown document's headings as GitHub anchors, and its links.
type document struct {
	anchors map[string]bool
	links   []link
}

type link struct {
	line   int
	target string
}

var (
	fence      = regexp.MustCompile("^ {0,3}(```|~~~)")
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	inlineLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// slug turns heading text into the anchor GitHub gives it: the rendered
// text, lower-cased, with everything but letters, digits, marks, spaces,
// hyphens and underscores removed, and spaces turned into hyphens.
func slug(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func parse(t *testing.T, path string) document {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc := document{anchors: map[string]bool{}}
	seen := map[string]int{}
	inFence := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			doc.anchors[m[1]] = true
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			s := slug(m[2])
			if k := seen[s]; k > 0 {
				doc.anchors[s+"-"+itoa(k)] = true
			} else {
				doc.anchors[s] = true
			}
			seen[s]++
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			doc.links = append(doc.links, link{n, m[1]})
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			doc.links = append(doc.links, link{n, m[2]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return doc
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

var external = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// TestMarkdownLinks checks every relative link in every Markdown file:
// the target is inside the repository and exists, and an #anchor names a
// heading of the target document.
func TestMarkdownLinks(t *testing.T) {
	root := repoRoot(t)
	files := repoFiles(t, root, isMarkdown)
	if len(files) == 0 {
		t.Fatal("no Markdown files found under " + root)
	}
	docs := map[string]document{}
	get := func(path string) document {
		if d, ok := docs[path]; ok {
			return d
		}
		d := parse(t, path)
		docs[path] = d
		return d
	}
	checked := 0
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		for _, l := range get(file).links {
			if l.target == "" || external.MatchString(l.target) {
				continue
			}
			checked++
			where := rel + ":" + itoa(l.line) + ": link " + l.target
			pathPart, anchor, _ := strings.Cut(l.target, "#")
			target := file
			if pathPart != "" {
				if strings.HasPrefix(pathPart, "/") {
					t.Errorf("%s: absolute path; use a path relative to the file", where)
					continue
				}
				target = filepath.Join(filepath.Dir(file), filepath.FromSlash(pathPart))
				if r, err := filepath.Rel(root, target); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
					t.Errorf("%s: leaves the repository", where)
					continue
				}
				st, err := os.Stat(target)
				if err != nil {
					t.Errorf("%s: %s does not exist", where, pathPart)
					continue
				}
				if st.IsDir() {
					if anchor != "" {
						t.Errorf("%s: an anchor on a directory", where)
					}
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !isMarkdown(target) {
				continue // anchors into source files (#L10) are GitHub's line links
			}
			if !get(target).anchors[strings.ToLower(anchor)] {
				t.Errorf("%s: no heading in %s has the anchor #%s", where, filepath.Base(target), anchor)
			}
		}
	}
	t.Logf("%d Markdown files, %d relative links", len(files), checked)
}

// outside matches references to the notes that live beside the
// repository rather than in it. Built from pieces so that this file does
// not match itself.
var outside = regexp.MustCompile(`(^|[^A-Za-z0-9_.-])(\.\./)*` + "shared" + `/`)

// TestNoPathsOutsideRepository checks that no document, source file,
// script or Makefile refers to the notes directory beside the
// repository: the project has to stand alone.
func TestNoPathsOutsideRepository(t *testing.T) {
	root := repoRoot(t)
	keep := func(name string) bool {
		return name == "Makefile" || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".sh")
	}
	files := repoFiles(t, root, keep)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		for i, line := range strings.Split(string(data), "\n") {
			if outside.MatchString(line) {
				t.Errorf("%s:%d: refers to a path outside the repository: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
	}
	t.Logf("%d files checked", len(files))
}

// fieldReports matches the word this project once used for the field
// reports it started from. Product text states their facts instead, and
// names the other things the word could mean (a fuzz corpus, where a
// random-number generator starts) by those names, so the word is not
// used at all. (The archive's shipped column order_seed is one token and
// does not match.)
var fieldReports = regexp.MustCompile(`(?i)\bseed(s|ed)?\b`)

// TestNoFieldReportCitations checks the documents, code and scripts for
// such wording.
func TestNoFieldReportCitations(t *testing.T) {
	root := repoRoot(t)
	keep := func(name string) bool {
		return name == "Makefile" || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".sh")
	}
	for _, file := range repoFiles(t, root, keep) {
		rel, _ := filepath.Rel(root, file)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if fieldReports.MatchString(line) {
				t.Errorf("%s:%d: cites the field reports; state the fact instead: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Client flags", "client-flags"},
		{"`wireperf rr HOST`: request-response latency", "wireperf-rr-host-request-response-latency"},
		{"Request-response (latency)", "request-response-latency"},
		{"UDPmon method (size × spacing)", "udpmon-method-size--spacing"},
		{"TCP internals (Web100 → TCP_INFO)", "tcp-internals-web100--tcp_info"},
		{"See [the spec](spec.md) here", "see-the-spec-here"},
		{"Données reçues", "données-reçues"},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

// cited matches a Go comment's reference to a document of docs/, with an
// optional #anchor or a quoted section name after it.
var cited = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md)(#[A-Za-z0-9_-]+)?(?:,\s*"([^"]+)")?`)

// TestCodeCitesExistingSections checks that every comment citing a
// document under docs/ names one that exists, and a section it has.
// Comment lines are joined first, since a citation may wrap.
func TestCodeCitesExistingSections(t *testing.T) {
	root := repoRoot(t)
	files := repoFiles(t, root, func(name string) bool { return strings.HasSuffix(name, ".go") })
	docs := map[string]document{}
	citations := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		// Join each run of comment lines; remember where it started.
		var block strings.Builder
		start := 0
		flush := func() {
			for _, m := range cited.FindAllStringSubmatch(block.String(), -1) {
				citations++
				where := rel + ":" + itoa(start) + ": docs/" + m[1]
				path := filepath.Join(root, "docs", m[1])
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s does not exist", where)
					continue
				}
				d, ok := docs[path]
				if !ok {
					d = parse(t, path)
					docs[path] = d
				}
				if a := strings.TrimPrefix(m[2], "#"); a != "" && !d.anchors[a] {
					t.Errorf("%s#%s: no such anchor", where, a)
				}
				if sec := m[3]; sec != "" && !d.anchors[slug(sec)] {
					t.Errorf("%s: no section %q (anchor #%s)", where, sec, slug(sec))
				}
			}
			block.Reset()
		}
		for i, line := range strings.Split(string(data), "\n") {
			text := strings.TrimSpace(line)
			if c, ok := strings.CutPrefix(text, "//"); ok {
				if block.Len() == 0 {
					start = i + 1
				}
				block.WriteString(strings.TrimSpace(c) + " ")
				continue
			}
			// A citation may also sit in a string, such as a command's help.
			if block.Len() > 0 {
				flush()
			}
			start = i + 1
			block.WriteString(text)
			flush()
		}
		flush()
	}
	t.Logf("%d citations of docs/ in %d Go files", citations, len(files))
}
