package breaker_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The docs' tests read README.md and every docs/*.md and docs/*/*.md page, and check three
// things: the README stays a page a newcomer reads in ten minutes (at most readmeMaxLines lines,
// and it links every page of docs/), every relative link and #anchor leads somewhere, and every
// ```go block compiles against the packages of this module as they are now.
//
// A block that starts with a package clause is a whole file and is type-checked on its own. Any
// other block is a fragment: it is type-checked as the body of a function that returns an error
// (so a fragment may end in "return err"), in one package with the other fragments and with
// docsPrelude, which declares the names the examples take as given (ctx, m, inventory, mux, ...).
// A fragment's imports are those of docsPackages whose names it uses. A fragment may leave a
// variable unused; every other error fails the test, at the block's line in the markdown. Every
// block must also read as gofmt writes it (a fragment as a function body).
//
// The blocks are type-checked with go/types against the export data that one "go list -export"
// of everything they import gives (the build cache keeps it), so the whole check takes well
// under a second once the cache is warm. A whole-file block may import a contrib module (a
// go.mod of its own, found through go.work): it is checked when go list can load that module,
// and skipped with a log line when it cannot (its dependencies not downloaded, say). Fragments
// cannot use contrib modules; no block does today.

const readmeMaxLines = 300

// docsPackages are the packages a fragment may use, by the name it uses them under.
var docsPackages = map[string]string{
	"breaker":      "github.com/halfopen/breaker",
	"breakerdebug": "github.com/halfopen/breaker/breakerdebug",
	"breakerhttp":  "github.com/halfopen/breaker/breakerhttp",
	"breakerretry": "github.com/halfopen/breaker/breakerretry",
	"breakertest":  "github.com/halfopen/breaker/breakertest",
	"rulefile":     "github.com/halfopen/breaker/rulefile",
	"context":      "context",
	"errors":       "errors",
	"fmt":          "fmt",
	"http":         "net/http",
	"io":           "io",
	"json":         "encoding/json",
	"log":          "log",
	"os":           "os",
	"slog":         "log/slog",
	"strings":      "strings",
	"sync":         "sync",
	"time":         "time",
}

// docsPrelude declares, for the fragments, the names the examples take as given: a context, a
// Manager, the inventory service of the quick start and the like.
const docsPrelude = `package docs

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

var (
	ctx       = context.Background()
	m         = breaker.NewManager()
	clock     = breakertest.NewClock()
	mux       = http.NewServeMux()
	orders    http.Handler
	logger    = slog.Default()
	data      []byte // a rule file's or a document's content
	item      string
	rejected  atomic.Int64
	inventory inventoryService
	operators interface{ Check(user, pass string) bool }

	ErrNotFound, ErrQuotaExceeded error
)

type inventoryService struct{}

func (inventoryService) Reserve(ctx context.Context, item string) error      { return nil }
func (inventoryService) Count(ctx context.Context, item string) (int, error) { return 0, nil }

type BadRequestError struct{}

func (*BadRequestError) Error() string { return "bad request" }

type Price struct{}

func reserve(context.Context) error                  { return nil }
func countStock(context.Context) (int, error)        { return 0, nil }
func search(context.Context) error                   { return nil }
func ledgerCall(context.Context) error               { return nil }
func getPrice(context.Context) (Price, error)        { return Price{}, nil }
func cachedPrice(context.Context) (Price, error)     { return Price{}, nil }
func alert(error)                                    {}
`

// docPage is one markdown file: its path from the repository root and its lines.
type docPage struct {
	path  string
	lines []string
}

// docBlock is one fenced block of a page: its info string ("go"), the line of its first line of
// code (from 1), and its code.
type docBlock struct {
	page *docPage
	info string
	line int
	code string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.page.path, b.line) }

// readDocs reads README.md, docs/*.md and the pages in docs' folders, docs/*/*.md.
func readDocs(t *testing.T) []*docPage {
	t.Helper()
	paths, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	inFolders, err := filepath.Glob("docs/*/*.md")
	require.NoError(t, err)
	paths = append(paths, inFolders...)
	slices.Sort(paths)
	paths = append([]string{"README.md"}, paths...)
	pages := make([]*docPage, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		pages = append(pages, &docPage{path: filepath.ToSlash(p), lines: strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")})
	}
	return pages
}

// fence returns the info string of a line that opens or closes a fenced block, and whether it
// is one.
func fence(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || !strings.HasPrefix(trimmed, "```") {
		return "", false
	}
	return strings.TrimSpace(strings.TrimLeft(trimmed, "`")), true
}

// split returns the page's fenced blocks, and its lines outside them (a block's lines as "").
func (p *docPage) split() (blocks []docBlock, prose []string) {
	prose = make([]string, len(p.lines))
	in := false
	var cur docBlock
	var code []string
	for i, l := range p.lines {
		info, ok := fence(l)
		switch {
		case ok && !in:
			in, cur, code = true, docBlock{page: p, info: info, line: i + 2}, nil
		case ok && in && info == "":
			in = false
			cur.code = strings.Join(code, "\n") + "\n"
			blocks = append(blocks, cur)
		case in:
			code = append(code, l)
		default:
			prose[i] = l
		}
	}
	return blocks, prose
}

// Given the README, then it is at most readmeMaxLines lines and links every page of docs/.
func TestDocsREADMELength(t *testing.T) {
	pages := readDocs(t)
	readme := pages[0]
	assert.LessOrEqual(t, len(readme.lines), readmeMaxLines,
		"README.md is for a newcomer's first ten minutes: move reference text to docs/")

	// The README's map of the rest links every page of docs/; a page in a folder of docs/ is
	// linked from its folder's page.
	_, prose := readme.split()
	text := strings.Join(prose, "\n")
	for _, p := range pages[1:] {
		if strings.Count(p.path, "/") == 1 {
			assert.Contains(t, text, "("+p.path+")", "README.md does not link %s", p.path)
		}
	}
}

var (
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	htmlLink   = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	hasScheme  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// anchors returns the anchors a page's headings get, as GitHub makes them: lowercase, spaces
// to hyphens, punctuation dropped, a repeated one numbered.
func (p *docPage) anchors() map[string]bool {
	_, prose := p.split()
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range prose {
		for _, a := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[a[1]] = true
		}
		h := heading.FindStringSubmatch(l)
		if h == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(h[2]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Given every relative link of the docs (markdown or HTML), then its file exists, and its
// #anchor, on a markdown page, is a heading there.
func TestDocsLinks(t *testing.T) {
	pages := readDocs(t)
	byPath := map[string]*docPage{}
	for _, p := range pages {
		byPath[p.path] = p
	}
	anchorsOf := func(path string) (map[string]bool, error) {
		p := byPath[path]
		if p == nil {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			p = &docPage{path: path, lines: strings.Split(string(b), "\n")}
			byPath[path] = p
		}
		return p.anchors(), nil
	}
	links := 0
	for _, p := range pages {
		_, prose := p.split()
		for i, l := range prose {
			l = codeSpan.ReplaceAllString(l, "``")
			var targets []string
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				targets = append(targets, m[1])
			}
			for _, m := range htmlLink.FindAllStringSubmatch(l, -1) {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if hasScheme.MatchString(target) {
					continue
				}
				links++
				at := fmt.Sprintf("%s:%d: link %q", p.path, i+1, target)
				file, anchor, _ := strings.Cut(target, "#")
				path := p.path
				if file != "" {
					path = filepath.ToSlash(filepath.Join(filepath.Dir(p.path), file))
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s: %v", at, err)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				anchors, err := anchorsOf(path)
				if !assert.NoError(t, err, at) {
					continue
				}
				assert.True(t, anchors[anchor], "%s: %s has no heading #%s", at, path, anchor)
			}
		}
	}
	assert.Greater(t, links, 50, "the link pattern finds the docs' links")
}

// goList runs "go list -export -deps" on paths and returns the export data file of each package
// it loaded, and the error of each it could not.
func goList(t *testing.T, paths []string) (exports map[string]string, failed map[string]string) {
	t.Helper()
	args := append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Export,Error,DepsErrors"}, paths...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	exports, failed = map[string]string{}, map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var pkg struct {
			ImportPath string
			Export     string
			Error      *struct{ Err string }
			DepsErrors []struct{ Err string }
		}
		err := dec.Decode(&pkg)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch {
		case pkg.Error != nil:
			failed[pkg.ImportPath] = pkg.Error.Err
		case len(pkg.DepsErrors) > 0:
			failed[pkg.ImportPath] = pkg.DepsErrors[0].Err
		case pkg.Export == "":
			failed[pkg.ImportPath] = "no export data"
		default:
			exports[pkg.ImportPath] = pkg.Export
		}
	}
	return exports, failed
}

// fragmentFile parses a fragment as the body of a function, after a //line directive that puts
// its code at its lines in the markdown, with the imports that the package names it uses need;
// it returns the file and those imports, or the error that parsing gave.
//
// Each block is parsed under a file name without a directory, so that the //line directive's
// path, which is relative to that name's directory, stays the markdown's path.
func fragmentFile(fset *token.FileSet, b docBlock) (*ast.File, []string, error) {
	body := "func _() error {\n//line " + b.page.path + ":" + strconv.Itoa(b.line) + "\n" + b.code + "return nil\n}\n"
	f, err := parser.ParseFile(fset, "block.go", "package docs\n"+body, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	uses := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && docsPackages[id.Name] != "" {
				uses[id.Name] = true
			}
		}
		return true
	})
	var imports []string
	var src strings.Builder
	src.WriteString("package docs\n\n")
	for name := range uses {
		imports = append(imports, docsPackages[name])
	}
	slices.Sort(imports)
	for _, path := range imports {
		fmt.Fprintf(&src, "import %q\n", path)
	}
	src.WriteString(body)
	f, err = parser.ParseFile(fset, "block.go", src.String(), parser.SkipObjectResolution)
	return f, imports, err
}

// Given every ```go block of the docs, then it is gofmt'd and type-checks against the module's
// packages as they are now.
func TestDocsCode(t *testing.T) {
	fset := token.NewFileSet()
	prelude, err := parser.ParseFile(fset, "docs_test.go:docsPrelude", docsPrelude, parser.SkipObjectResolution)
	require.NoError(t, err)
	need := map[string]bool{}
	for _, imp := range prelude.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		need[path] = true
	}

	// Parse every block: fragments into one package with the prelude, whole files each on
	// their own.
	fragments := []*ast.File{prelude}
	type whole struct {
		b       docBlock
		f       *ast.File
		imports []string
	}
	var files []whole
	blocks := 0
	for _, p := range readDocs(t) {
		all, _ := p.split()
		for _, b := range all {
			if b.info != "go" {
				continue
			}
			blocks++
			_, err := parser.ParseFile(token.NewFileSet(), "", b.code, parser.PackageClauseOnly)
			isFile := err == nil
			assert.True(t, gofmtted(b.code, isFile), "%s: the block is not as gofmt writes it", b)
			if isFile {
				src := "//line " + b.page.path + ":" + strconv.Itoa(b.line) + "\n" + b.code
				f, err := parser.ParseFile(fset, "block.go", src, parser.SkipObjectResolution)
				if err != nil {
					t.Errorf("%s: %v", b, err)
					continue
				}
				w := whole{b: b, f: f}
				for _, imp := range f.Imports {
					path, _ := strconv.Unquote(imp.Path.Value)
					w.imports = append(w.imports, path)
					need[path] = true
				}
				files = append(files, w)
				continue
			}
			f, imports, err := fragmentFile(fset, b)
			if err != nil {
				t.Errorf("%s: %v", b, err)
				continue
			}
			for _, path := range imports {
				need[path] = true
			}
			fragments = append(fragments, f)
		}
	}
	require.Greater(t, blocks, 20, "the fence pattern finds the docs' go blocks")

	paths := make([]string, 0, len(need))
	for p := range need {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	exports, failed := goList(t, paths)
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if file, ok := exports[path]; ok {
			return os.Open(file)
		}
		return nil, fmt.Errorf("go list: %s", failed[path])
	})

	check := func(pkg string, files []*ast.File, fragment bool) {
		conf := types.Config{Importer: imp, Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) && fragment && te.Soft && strings.Contains(te.Msg, "declared and not used") {
				return // a fragment shows a call, not what is done with all it returns
			}
			t.Error(err)
		}}
		_, _ = conf.Check(pkg, fset, files, nil)
	}
	check("docs", fragments, true)
	for _, w := range files {
		if i := slices.IndexFunc(w.imports, func(p string) bool { return failed[p] != "" }); i >= 0 {
			path := w.imports[i]
			if strings.HasPrefix(path, "github.com/halfopen/breaker/contrib/") {
				t.Logf("%s: not checked: %s: %s", w.b, path, firstLine(failed[path]))
				continue
			}
			t.Errorf("%s: %s: %s", w.b, path, failed[path])
			continue
		}
		check(w.f.Name.Name, []*ast.File{w.f}, false)
	}
}

// gofmtted reports whether code reads as gofmt writes it: a whole file as it is, a fragment as
// the body of a function.
func gofmtted(code string, isFile bool) bool {
	if isFile {
		out, err := format.Source([]byte(code))
		return err == nil && string(out) == code
	}
	var src strings.Builder
	src.WriteString("package docs\n\nfunc _() {\n")
	for _, l := range strings.SplitAfter(code, "\n") {
		if l != "\n" && l != "" {
			src.WriteString("\t")
		}
		src.WriteString(l)
	}
	src.WriteString("}\n")
	out, err := format.Source([]byte(src.String()))
	return err == nil && string(out) == src.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
