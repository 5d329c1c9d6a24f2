// Package mongotest gives tests a MongoDB wire-protocol server whose
// commands are atomic, as MongoDB's single-document writes are.
//
// FerretDB 1.24, the server the tests run, carries out a findAndModify or
// an update as a read and then a separate write by _id (handler/common
// UpdateDocument and the SQLite backend's UpdateAll, in
// github.com/FerretDB/FerretDB v1.24.2), so two clients whose
// conditional updates match the same document at once both succeed:
// such a server cannot hold a lock, and detection reports it
// (dialects/mongodb, the risk non-atomic-updates). MongoDB applies each
// single-document write atomically. Serialize puts FerretDB behind a
// proxy that lets one command at a time through (the next request is
// sent once the reply to the last has come back), which gives its
// commands that atomicity, so the tests prove the lock protocol on the
// wire against the semantics MongoDB promises.
package mongotest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Serialize starts a proxy to the server of dsn (a mongodb:// DSN with
// one host) that forwards one command at a time, and returns dsn with the
// proxy's address. The proxy stops when tb ends.
func Serialize(tb testing.TB, dsn string) string {
	tb.Helper()
	p, err := Start(hostOf(dsn))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	return strings.Replace(dsn, hostOf(dsn), p.Addr(), 1)
}

// hostOf is the host:port of a mongodb:// DSN.
func hostOf(dsn string) string {
	rest := dsn[strings.Index(dsn, "://")+3:]
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

// Proxy is a serializing proxy.
type Proxy struct {
	ln     net.Listener
	target string
	turn   sync.Mutex // held from a request's first byte to its reply's last

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	commands []string // the name of each OP_MSG command forwarded, in order
	wg       sync.WaitGroup
}

// Commands returns the names of the commands forwarded so far (each
// OP_MSG request's first field: "find", "update", "hello", …) and
// forgets them.
func (p *Proxy) Commands() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.commands
	p.commands = nil
	return out
}

// Start listens on a free loopback port for connections to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.track(c)
		p.track(s)
		p.wg.Add(1)
		go p.serve(c, s)
	}
}

// serve forwards the requests of client c one at a time: a whole
// request, then the whole reply (and the replies that follow while the
// server sets moreToCome), under p.turn.
func (p *Proxy) serve(c, s net.Conn) {
	defer p.wg.Done()
	defer func() {
		_ = c.Close()
		_ = s.Close()
		p.mu.Lock()
		delete(p.conns, c)
		delete(p.conns, s)
		p.mu.Unlock()
	}()
	for {
		req, err := readMessage(c)
		if err != nil {
			return
		}
		if name := commandName(req); name != "" {
			p.mu.Lock()
			p.commands = append(p.commands, name)
			p.mu.Unlock()
		}
		p.turn.Lock()
		err = p.exchange(req, c, s)
		p.turn.Unlock()
		if err != nil {
			return
		}
	}
}

func (p *Proxy) exchange(req []byte, c, s net.Conn) error {
	if _, err := s.Write(req); err != nil {
		return err
	}
	if moreToCome(req) {
		return nil // the client expects no reply
	}
	for {
		rep, err := readMessage(s)
		if err != nil {
			return err
		}
		if _, err := c.Write(rep); err != nil {
			return err
		}
		if !moreToCome(rep) {
			return nil
		}
	}
}

// opMsg is the OP_MSG op code; its flag bit 1 is moreToCome.
const opMsg = 2013

func moreToCome(m []byte) bool {
	return len(m) >= 20 && binary.LittleEndian.Uint32(m[12:16]) == opMsg && binary.LittleEndian.Uint32(m[16:20])&2 != 0
}

// commandName is the command of an OP_MSG request: the first key of its
// body section (kind 0) after the 16-byte header and the 4-byte flags;
// "" for other messages.
func commandName(m []byte) string {
	if len(m) < 26 || binary.LittleEndian.Uint32(m[12:16]) != opMsg || m[20] != 0 {
		return ""
	}
	// body: int32 length, then elements: type byte, cstring key, ...
	key := m[26:]
	if i := bytes.IndexByte(key, 0); i > 0 {
		return string(key[:i])
	}
	return ""
}

// readMessage reads one wire-protocol message (its length is its first
// four bytes, little-endian).
func readMessage(r io.Reader) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(h[:]))
	if n < 16 || n > 64<<20 {
		return nil, errors.New("mongotest: bad message length")
	}
	m := make([]byte, n)
	copy(m, h[:])
	if _, err := io.ReadFull(r, m[4:]); err != nil {
		return nil, err
	}
	return m, nil
}

// FerretDB is a FerretDB server of a test's own, over SQLite in a
// directory of its own, on a fixed free port, so that a restart finds its
// data. It is the binary scripts/services.sh builds into the user's
// cache (start_mongodb).
type FerretDB struct {
	bin, dir string
	args     []string
	port     int
	cmd      *exec.Cmd
}

// FerretDBVersion is the FerretDB the tests run.
const FerretDBVersion = "v1.24.2"

// StartFerretDB starts a FerretDB with the extra flags args, stopped when
// tb ends. A missing binary fails tb.
func StartFerretDB(tb testing.TB, args ...string) *FerretDB {
	tb.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	f := &FerretDB{bin: filepath.Join(cache, "schedlock", "ferretdb-"+FerretDBVersion, "ferretdb"), dir: tb.TempDir(), args: args}
	if _, err := os.Stat(f.bin); err != nil {
		tb.Fatalf("FerretDB, which scripts/services.sh builds, is missing: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f.port = ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	if err := os.MkdirAll(filepath.Join(f.dir, "data"), 0o755); err != nil {
		tb.Fatal(err)
	}
	f.Start(tb)
	tb.Cleanup(f.Stop)
	return f
}

// Addr is the server's host:port.
func (f *FerretDB) Addr() string { return "127.0.0.1:" + strconv.Itoa(f.port) }

// Start starts the server (again) and waits until it accepts connections.
func (f *FerretDB) Start(tb testing.TB) {
	tb.Helper()
	// FerretDB reads every setting from FERRETDB_* variables as well as
	// from its flags; the callers' args add flags.
	f.cmd = exec.Command(f.bin, f.args...)
	f.cmd.Env = append(os.Environ(), "FERRETDB_LISTEN_ADDR="+f.Addr(), "FERRETDB_HANDLER=sqlite",
		"FERRETDB_SQLITE_URL=file:"+f.dir+"/data/", "FERRETDB_STATE_DIR="+f.dir, "FERRETDB_TELEMETRY=disable",
		"FERRETDB_DEBUG_ADDR=-", "FERRETDB_LOG_LEVEL=ERROR")
	if err := f.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", f.Addr(), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("FerretDB did not listen on %s within 20s", f.Addr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop kills the server.
func (f *FerretDB) Stop() {
	if f.cmd != nil && f.cmd.Process != nil {
		_ = f.cmd.Process.Kill()
		_ = f.cmd.Wait()
		f.cmd = nil
	}
}
