package testenv_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The library's packages never pull a store client, a metrics library or
// the CLI's progress bar into a user's build: only the backend packages
// and the binary import them.
func TestLibraryDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to list dependencies: %v", err)
	}
	pkgs := []string{"canonical", "fingerprint", "policy", "store", "store/storetest", "idemhttp", "idemclient"}
	forbidden := []string{"github.com/redis/", "github.com/jackc/", "github.com/prometheus/", "github.com/schollz/", "github.com/gofiber/"}
	for _, p := range pkgs {
		out, err := exec.Command(goTool, "list", "-deps", "github.com/idemprint/idemprint/"+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("package %s depends on %s", p, dep)
				}
			}
		}
	}
}
