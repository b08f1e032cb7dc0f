package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/internal/testenv"
)

// commandDocs are the pages whose ```sh blocks TestDocCommands runs: every
// command in them runs on a checkout, with no service, in seconds.
// CONTRIBUTING.md, docs/serve.md and bench/README.md show commands that need
// services or run for minutes; TestDocCommandsNamed checks theirs.
var commandDocs = []string{"README.md", "docs/cli.md", "docs/audit.md"}

// namedDocs are the pages whose commands are not run, only checked: each
// package or file they name exists.
var namedDocs = []string{"CONTRIBUTING.md", "docs/serve.md", "docs/policy.md", "bench/README.md"}

// docBlock is a fenced code block of a Markdown page.
type docBlock struct {
	info  string   // the info string: "sh", "text", "go"…
	line  int      // the line of its opening fence, from 1
	lines []string // its content
	// output is the ```text block that follows a ```sh block with only prose
	// between them: what the block's commands print, one after the other.
	output *docBlock
}

// readBlocks returns the fenced code blocks of the Markdown file name.
func readBlocks(t *testing.T, name string) []*docBlock {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []*docBlock
	var cur *docBlock
	var prev *docBlock // the last block closed, when only prose came since
	for i, line := range strings.Split(string(src), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &docBlock{info: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: i + 1}
		case cur != nil && line == "```":
			if cur.info == "text" && prev != nil && prev.info == "sh" {
				prev.output = cur
			}
			blocks = append(blocks, cur)
			prev, cur = cur, nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		case strings.HasPrefix(line, "#"):
			prev = nil // a heading ends what a block's output may be
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a code block that is never closed", name, cur.line)
	}
	return blocks
}

// commands returns the shell commands of a ```sh block: its lines, with
// those ending in a backslash joined to the next, less blank lines and
// comments.
func (b *docBlock) commands() []string {
	var cmds []string
	var cur strings.Builder
	for _, line := range b.lines {
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`))
			continue
		}
		cur.WriteString(line)
		cmd := strings.TrimSpace(cur.String())
		cur.Reset()
		if cmd != "" && !strings.HasPrefix(cmd, "#") {
			cmds = append(cmds, strings.Join(strings.Fields(cmd), " "))
		}
	}
	return cmds
}

// repoRoot returns the repository's root: the directory of its go.mod,
// two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// modulePath is the module's path, from go.mod.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("go.mod names no module")
	}
	return string(m[1])
}

// docAddrs are the addresses the pages' serve example uses; the test runs
// it on free ports of its own instead, so that nothing else listening on
// the machine gets in the way: the upstream ("your API") is a test server
// that answers every request with 201 and counts them.
const (
	docUpstream = "127.0.0.1:3000"
	docListen   = "127.0.0.1:8080"
)

// TestDocCommands runs every shell command of the README and of the CLI's
// pages, from the repository's root, as a reader would, and compares what
// they print with the ```text block shown after them (output that does
// not end in a newline is shown, and compared, with one). The commands go
// through bash; "go run ./cmd/idemprint" runs a binary built once from
// this checkout, and a nonzero exit status adds the line go run prints,
// "exit status N". A command that ends in "&" is started and left running
// until the page's commands are done, then stopped with SIGTERM: it must
// exit 0. A command with no output block must exit 0. Three commands are
// not run: "go test ./..." (this test is part of it) must be present in
// the README's set-up; "go get M@latest" must name this module, and
// "go install P@latest" one of its main packages, since both need the
// network.
func TestDocCommands(t *testing.T) {
	bin := buildServe(t)
	root := repoRoot(t)
	mod := modulePath(t, root)
	for _, page := range commandDocs {
		t.Run(page, func(t *testing.T) {
			runPage(t, root, mod, bin, page)
		})
	}
}

func runPage(t *testing.T, root, mod, bin, page string) {
	blocks := readBlocks(t, filepath.Join(root, page))
	var upstream *countingUpstream
	var listen string
	var ran, sawGoTest int
	for _, b := range blocks {
		if b.info != "sh" {
			continue
		}
		var got strings.Builder
		for _, cmd := range b.commands() {
			where := fmt.Sprintf("%s:%d: %s", page, b.line, cmd)
			fields := strings.Fields(cmd)
			switch {
			case cmd == "go test ./...":
				sawGoTest++
				continue
			case len(fields) == 3 && fields[0] == "go" && (fields[1] == "get" || fields[1] == "install"):
				checkInstall(t, root, mod, where, fields[1], fields[2])
				continue
			}
			run := strings.ReplaceAll(cmd, "go run ./cmd/idemprint", bin)
			if strings.Contains(run, docUpstream) {
				if upstream == nil {
					upstream = newCountingUpstream(t)
				}
				run = strings.ReplaceAll(run, docUpstream, strings.TrimPrefix(upstream.URL, "http://"))
			}
			if strings.Contains(run, docListen) {
				if listen == "" {
					listen = freeAddr(t)
				}
				run = strings.ReplaceAll(run, docListen, listen)
			}
			if strings.HasPrefix(run, "curl ") {
				testenv.LookPath(t, "curl", "curl")
			}
			ran++
			if bg, ok := strings.CutSuffix(run, "&"); ok {
				startBackground(t, root, where, strings.TrimSpace(bg), listen)
				continue
			}
			out, code := runShell(t, root, run)
			if b.output == nil && code != 0 {
				t.Errorf("%s\nexited %d:\n%s", where, code, out)
			}
			got.WriteString(out)
			if out != "" && !strings.HasSuffix(out, "\n") {
				got.WriteString("\n") // as the page shows it: canon writes no newline
			}
			if code != 0 {
				fmt.Fprintf(&got, "exit status %d\n", code)
			}
		}
		if b.output != nil {
			want := strings.Join(b.output.lines, "\n") + "\n"
			if diff := cmp.Diff(want, got.String()); diff != "" {
				t.Errorf("%s:%d: the commands' output differs from the block at line %d (-want +got):\n%s", page, b.line, b.output.line, diff)
			}
		}
	}
	if ran == 0 {
		t.Errorf("%s: no command ran", page)
	}
	if page == "README.md" {
		if sawGoTest != 1 {
			t.Errorf("README.md: %d set-up commands \"go test ./...\", want 1", sawGoTest)
		}
		// The README's serve example: a payment, its retry and a reuse of
		// its key; only the first reaches the API.
		if upstream == nil {
			t.Errorf("README.md: no serve example in front of %s", docUpstream)
		} else if n := upstream.execs.Load(); n != 1 {
			t.Errorf("README.md: the API behind serve executed %d requests, want 1", n)
		}
	}
}

// checkInstall checks a "go get" or "go install" command, which needs the
// network, without running it: it must name this module at @latest, or one
// of its main packages.
func checkInstall(t *testing.T, root, mod, where, verb, arg string) {
	t.Helper()
	path, version, ok := strings.Cut(arg, "@")
	if !ok || version != "latest" {
		t.Errorf("%s: want PATH@latest", where)
		return
	}
	if verb == "get" {
		if path != mod {
			t.Errorf("%s: go get %s, want the module %s", where, path, mod)
		}
		return
	}
	rel, ok := strings.CutPrefix(path, mod+"/")
	if !ok {
		t.Errorf("%s: %s is not a package of %s", where, path, mod)
		return
	}
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel), "main.go"))
	if err != nil || !bytes.Contains(src, []byte("\npackage main\n")) {
		t.Errorf("%s: %s has no main.go of package main (%v)", where, path, err)
	}
}

// runShell runs cmd with bash in dir and returns its output, standard
// output then standard error, and its exit status.
func runShell(t *testing.T, dir, cmd string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	c.Dir = dir
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bash -c %q: %v", cmd, err)
	}
	return stdout.String() + stderr.String(), code
}

// startBackground starts cmd with bash in dir, as a shell runs a command
// followed by "&", waits until listen (when set) accepts connections, and
// stops it with SIGTERM when the test ends, expecting exit status 0.
func startBackground(t *testing.T, dir, where, cmd, listen string) {
	t.Helper()
	c := exec.Command("bash", "-c", "exec "+cmd)
	c.Dir = dir
	var out lockedBuffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	t.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("%s: stopped with SIGTERM: %v\n%s", where, err, out.String())
			}
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			t.Errorf("%s: still running 10 s after SIGTERM\n%s", where, out.String())
		}
	})
	if listen == "" {
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", listen, time.Second)
		if err == nil {
			conn.Close()
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("%s: exited before it listened on %s: %v\n%s", where, listen, err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not listening on %s after 20 s\n%s", where, listen, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddr returns a loopback address no one listens on, as the kernel
// picks one.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// lockedBuffer is an output buffer written by a process and read by the
// test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestDocCommandsNamed checks what the pages name without running it:
// every script and every ./package or ./file their commands name exists,
// and every test, benchmark and fuzz target they name (TestX, BenchmarkX,
// FuzzX, whole or as the prefix a -run or -bench pattern gives) is a
// function of a test file of the repository. A command runs in the
// directory of the page's module (bench/ for bench/README.md, the root for
// the others), or in the directory a leading "cd DIR &&" names.
func TestDocCommandsNamed(t *testing.T) {
	root := repoRoot(t)
	funcs := testFuncs(t, root)
	named := regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*`)
	for _, page := range append(append([]string{}, commandDocs...), namedDocs...) {
		t.Run(page, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(root, page))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range named.FindAllString(string(src), -1) {
				if !funcs.has(name) {
					t.Errorf("%s names %s, which no test file of the repository defines", page, name)
				}
			}
			base := root
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(page), "go.mod")); err == nil {
				base = filepath.Join(root, filepath.Dir(page))
			}
			for _, b := range readBlocks(t, filepath.Join(root, page)) {
				if b.info != "sh" {
					continue
				}
				for _, cmd := range b.commands() {
					dir := base
					if rest, ok := strings.CutPrefix(cmd, "cd "); ok {
						d, after, _ := strings.Cut(rest, " && ")
						dir, cmd = filepath.Join(base, d), after
					}
					for _, f := range strings.Fields(cmd) {
						f = strings.Trim(f, `'"();$`)
						if !strings.HasPrefix(f, "./") && !strings.HasSuffix(f, ".sh") && !strings.HasPrefix(f, ".ci/") && !strings.HasPrefix(f, "testdata/") {
							continue
						}
						f = strings.TrimSuffix(strings.TrimSuffix(f, "/..."), "...")
						if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
							t.Errorf("%s:%d: %s names %s, which is not there: %v", page, b.line, cmd, f, err)
						}
					}
				}
			}
		})
	}
}

// testNames are the names of the Test, Benchmark and Fuzz functions of a
// repository's test files.
type testNames []string

// has reports whether name is one of the functions, or the prefix of one.
func (n testNames) has(name string) bool {
	for _, f := range n {
		if strings.HasPrefix(f, name) {
			return true
		}
	}
	return false
}

// testFuncs returns the test functions of every _test.go file under root,
// nested modules included.
func testFuncs(t *testing.T, root string) testNames {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
	var names testNames
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			names = append(names, string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestDocLinks checks the relative links of the pages: each names a file or
// directory of the repository and, after a #, a heading of that page.
func TestDocLinks(t *testing.T) {
	root := repoRoot(t)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range append(append([]string{}, commandDocs...), namedDocs...) {
		src, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(src), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := filepath.Join(root, page)
			if file != "" {
				path = filepath.Join(root, filepath.Dir(page), filepath.FromSlash(file))
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Errorf("%s links to %s, which is not there", page, target)
				continue
			}
			if anchor == "" {
				continue
			}
			if fi.IsDir() || !headingAnchors(t, path)[anchor] {
				t.Errorf("%s links to %s, whose page has no heading #%s", page, target, anchor)
			}
		}
	}
}

// headingAnchors returns the anchors of the Markdown headings of the file
// name, as GitHub spells them: lower case, spaces as hyphens, other
// punctuation dropped.
func headingAnchors(t *testing.T, name string) map[string]bool {
	t.Helper()
	anchors := make(map[string]bool)
	for _, b := range strings.Split(mustRead(t, name), "\n") {
		heading, ok := strings.CutPrefix(strings.TrimLeft(b, "#"), " ")
		if !ok || !strings.HasPrefix(b, "#") {
			continue
		}
		var a strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				a.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f:
				a.WriteRune(r)
			}
		}
		anchors[a.String()] = true
	}
	return anchors
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// goPrelude declares what the README's Go examples take from the program
// around them; an example that needs another name adds it here.
const goPrelude = `
var (
	policyFile []byte
	body       []byte
	mux        = http.NewServeMux()
)

func accountOf(*http.Request) (string, bool) { return "", false }

func main() {}
`

// goExamplePackages are the packages a Go example may use, by the name it
// calls them.
var goExamplePackages = map[string]string{
	"canonical":   "github.com/idemprint/idemprint/canonical",
	"fingerprint": "github.com/idemprint/idemprint/fingerprint",
	"policy":      "github.com/idemprint/idemprint/policy",
	"store":       "github.com/idemprint/idemprint/store",
	"redisstore":  "github.com/idemprint/idemprint/store/redisstore",
	"pgstore":     "github.com/idemprint/idemprint/store/pgstore",
	"idemhttp":    "github.com/idemprint/idemprint/idemhttp",
	"audit":       "github.com/idemprint/idemprint/audit",
	"errors":      "errors",
}

// TestDocGoExamples compiles the ```go blocks of the README, each as the
// body of a function of one program, against this checkout: the names
// they use from around them are goPrelude's, and a variable they declare
// and leave unread is fine. The program is given to go build as an
// overlay, so nothing is written into the repository.
func TestDocGoExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build; not in -short")
	}
	root := repoRoot(t)
	var funcs strings.Builder
	used := map[string]bool{}
	n := 0
	for _, b := range readBlocks(t, filepath.Join(root, "README.md")) {
		if b.info != "go" {
			continue
		}
		n++
		code := strings.Join(b.lines, "\n")
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "README.md", "package p\nfunc _() {\n"+code+"\n}\n", 0)
		if err != nil {
			t.Errorf("README.md:%d: the Go example does not parse: %v", b.line, err)
			continue
		}
		var declared []string
		ast.Inspect(f, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
				for _, e := range as.Lhs {
					if id, ok := e.(*ast.Ident); ok && id.Name != "_" && !slices.Contains(declared, id.Name) {
						declared = append(declared, id.Name)
					}
				}
			}
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && goExamplePackages[id.Name] != "" {
					used[id.Name] = true
				}
			}
			return true
		})
		fmt.Fprintf(&funcs, "\n// README.md:%d\nfunc example%d() error {\n%s\n", b.line, n, code)
		for _, name := range declared {
			fmt.Fprintf(&funcs, "\t_ = %s\n", name)
		}
		funcs.WriteString("\treturn nil\n}\n")
	}
	if n == 0 {
		t.Fatal("README.md has no Go example")
	}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n\t\"net/http\"\n")
	for _, name := range slices.Sorted(maps.Keys(goExamplePackages)) {
		if used[name] {
			fmt.Fprintf(&src, "\t%q\n", goExamplePackages[name])
		}
	}
	src.WriteString(")\n" + goPrelude + funcs.String())

	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A package directory that does not exist in the checkout, only in the
	// overlay.
	pkg := filepath.Join(root, "cmd", "idemprint", "readme-go-examples")
	overlay := fmt.Sprintf(`{"Replace": {%q: %q}}`, filepath.Join(pkg, "main.go"), file)
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", os.DevNull, "./cmd/idemprint/readme-go-examples")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the README's Go examples do not compile: %v\n%s\nthe program:\n%s", err, out, src.String())
	}
}
