package library

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/piweb/piweb/sessions"
)

// DefaultRoot returns the sessions root as pi finds it:
// $PI_CODING_AGENT_SESSION_DIR, else $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions.
func DefaultRoot() string {
	if d := os.Getenv("PI_CODING_AGENT_SESSION_DIR"); d != "" {
		return expandHome(d)
	}
	if d := os.Getenv("PI_CODING_AGENT_DIR"); d != "" {
		return filepath.Join(expandHome(d), "sessions")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".pi", "agent", "sessions")
	}
	return filepath.Join(home, ".pi", "agent", "sessions")
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// SessionFiles lists the *.jsonl files in root and in its immediate
// subfolders (pi's layout), sorted. Files that are symlinks are left out, as
// are folders that lead outside root (see sessions.Within).
func SessionFiles(root string) ([]string, error) {
	var files []string
	top, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	for _, d := range top {
		p := filepath.Join(root, d.Name())
		if IsSessionFileName(d.Name()) && d.Type().IsRegular() {
			files = append(files, p)
			continue
		}
		if !d.IsDir() && d.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if !sessions.Within(root, p) {
			continue
		}
		sub, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, f := range sub {
			if IsSessionFileName(f.Name()) && f.Type().IsRegular() {
				files = append(files, filepath.Join(p, f.Name()))
			}
		}
	}
	slices.Sort(files)
	return files, nil
}

// IsSessionFileName reports whether a file name is one pi lists (*.jsonl).
func IsSessionFileName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, ".")
}
