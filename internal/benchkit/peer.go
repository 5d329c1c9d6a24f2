package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// RiverPeerProgram is the program that runs River for `bench --claims
// --peers`: the module under bench/peers, built apart (scripts/peers.sh),
// so that River is never linked into schedlock.
const RiverPeerProgram = "schedlock-peer-river"

// RiverPeerName names the peer in the report.
const RiverPeerName = "River (riverpgxv5)"

// PeerDSNVariable is the environment variable that hands the peer its
// connection string, which never appears in its arguments.
const PeerDSNVariable = "SCHEDLOCK_PEER_DSN"

// RiverPeer returns the peer of ClaimPlan that runs River on the
// PostgreSQL database of backend, whose connection string is conn: one run
// of RiverPeerProgram per slice, found beside the running program or on
// PATH. The error says in one line why it cannot run: not PostgreSQL, or
// the program is not there.
func RiverPeer(backend dialects.Backend, conn string) (func(ctx context.Context, workers, batch int, slice Budget) (PeerRate, error), error) {
	if info := backend.Detected(); info.Product != dialects.ProductPostgreSQL {
		return nil, fmt.Errorf("River runs on PostgreSQL, not %s", info.Product)
	}
	path, err := findPeer(RiverPeerProgram)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, workers, batch int, slice Budget) (PeerRate, error) {
		args := []string{"--workers", strconv.Itoa(workers), "--batch", strconv.Itoa(batch)}
		if slice.Cycles > 0 {
			args = append(args, "--jobs", strconv.FormatInt(slice.Cycles*int64(batch), 10))
		} else {
			args = append(args, "--duration", slice.Duration.String())
		}
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Env = append(os.Environ(), PeerDSNVariable+"="+conn)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(stderr.String())
			if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
				msg = msg[i+1:]
			}
			return PeerRate{}, fmt.Errorf("%s: %w: %s", RiverPeerProgram, err, msg)
		}
		var out struct {
			Jobs    int64   `json:"jobs"`
			Seconds float64 `json:"seconds"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			return PeerRate{}, fmt.Errorf("%s printed no report: %w", RiverPeerProgram, err)
		}
		return PeerRate{Jobs: out.Jobs, Seconds: out.Seconds}, nil
	}, nil
}

// findPeer looks for program beside the running executable, then on PATH.
func findPeer(program string) (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), program)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(program)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("%s is not installed beside schedlock or on PATH (build it with scripts/peers.sh)", program)
		}
		return "", err
	}
	return p, nil
}
