//go:build ignore

// Command size tells what the schedlock binary is made of: its size, the
// modules it links (as `go version -m` lists them) and how many bytes of
// code and data each module brings. It is a build-ignored file, so
// `go install ./...` installs schedlock alone; scripts/size.sh builds the
// two binaries it reads and runs it:
//
//	go run scripts/size/main.go -stripped bin/schedlock -symbols /tmp/schedlock-with-symbols
//
// -symbols names a build with the same flags as the release but without
// -s -w, so the ELF symbol table is there; every symbol in a section that
// takes file space (.text, .rodata, .data, .noptrdata, …; not .bss) is
// counted for the package its name begins with, and the package for the
// module whose path is its longest prefix. The Go standard library is one
// row ("std"), the linker's tables (go:func.*, type links, build info) one
// more. The function table .gopclntab, a section without symbols, is shown
// apart: it grows with the code. -stripped names the release binary whose
// file size heads the report (default: the -symbols file). -packages N
// also lists the N largest packages. ELF (Linux) binaries only.
package main

import (
	"cmp"
	"debug/buildinfo"
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

func main() {
	symbols := flag.String("symbols", "", "a build of the binary that keeps its symbol table (no -s -w)")
	stripped := flag.String("stripped", "", "the release binary whose file size is reported (default: -symbols)")
	packages := flag.Int("packages", 0, "also list the N largest packages")
	flag.Parse()
	if *symbols == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/size/main.go -symbols BINARY [-stripped BINARY] [-packages N]")
		os.Exit(2)
	}
	if *stripped == "" {
		*stripped = *symbols
	}
	if err := report(*symbols, *stripped, *packages); err != nil {
		fmt.Fprintln(os.Stderr, "size:", err)
		os.Exit(1)
	}
}

// row is one line of a table: a name and the bytes counted for it.
type row struct {
	name  string
	bytes int64
}

func report(symbolsPath, strippedPath string, topPackages int) error {
	st, err := os.Stat(strippedPath)
	if err != nil {
		return err
	}
	info, err := buildinfo.ReadFile(symbolsPath)
	if err != nil {
		return fmt.Errorf("%s: %w", symbolsPath, err)
	}
	modules := []string{info.Main.Path}
	for _, d := range info.Deps {
		modules = append(modules, d.Path)
	}
	// Longest module path first, so the first prefix that matches is the
	// module a package belongs to (go.etcd.io/etcd/client/pkg/v3 before
	// go.etcd.io/etcd/client/v3 would not matter, but nested modules do).
	slices.SortFunc(modules, func(a, b string) int { return cmp.Compare(len(b), len(a)) })

	f, err := elf.Open(symbolsPath)
	if err != nil {
		return fmt.Errorf("%s: %w (ELF binaries only)", symbolsPath, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("%s has no symbol table (built with -s?): %w", symbolsPath, err)
	}
	byModule := map[string]*[2]int64{} // code, data
	byPackage := map[string]int64{}
	var code, data int64
	for _, s := range syms {
		if s.Size == 0 || int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_ALLOC == 0 {
			continue // .bss and .noptrbss take no room in the file
		}
		pkg := packageOf(s.Name)
		m := byModule[moduleOf(pkg, modules)]
		if m == nil {
			m = new([2]int64)
			byModule[moduleOf(pkg, modules)] = m
		}
		byPackage[pkg] += int64(s.Size)
		if sec.Flags&elf.SHF_EXECINSTR != 0 {
			m[0] += int64(s.Size)
			code += int64(s.Size)
		} else {
			m[1] += int64(s.Size)
			data += int64(s.Size)
		}
	}

	fmt.Printf("%s: %s (%d bytes), %s, %d modules besides the main one\n\n",
		strippedPath, mb(st.Size()), st.Size(), info.GoVersion, len(info.Deps))
	fmt.Println("Sections (what takes room in the file):")
	fmt.Println()
	fmt.Println("| section | MB | holds |")
	fmt.Println("| --- | ---: | --- |")
	var listed int64
	for _, sec := range f.Sections {
		if sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_ALLOC == 0 || sec.Size < 100_000 {
			continue
		}
		listed += int64(sec.Size)
		fmt.Printf("| %s | %.1f | %s |\n", sec.Name, float64(sec.Size)/1e6, sectionHolds[sec.Name])
	}
	fmt.Printf("| (rest) | %.1f | ELF headers, alignment, small sections |\n\n", float64(st.Size()-listed)/1e6)

	fmt.Printf("Code and named data by module (symbol sizes of %s; .rodata's\n", symbolsPath)
	fmt.Println("strings, type descriptors and constant tables carry no symbol of their")
	fmt.Println("own, so only a build without a module tells its whole share):")
	fmt.Println()
	fmt.Println("| module | code MB | data MB |")
	fmt.Println("| --- | ---: | ---: |")
	totals := map[string]int64{}
	for k, v := range byModule {
		totals[k] = v[0] + v[1]
	}
	for _, r := range sorted(totals) {
		m := byModule[r.name]
		if m[0]+m[1] < 10_000 {
			continue
		}
		fmt.Printf("| %s | %.2f | %.2f |\n", r.name, float64(m[0])/1e6, float64(m[1])/1e6)
	}
	fmt.Printf("| **all** | **%.2f** | **%.2f** |\n", float64(code)/1e6, float64(data)/1e6)
	fmt.Println()
	fmt.Println("Modules under 0.01 MB are left out of the table.")
	if topPackages > 0 {
		fmt.Printf("\nLargest packages (code and named data):\n\n| package | MB |\n| --- | ---: |\n")
		for i, r := range sorted(byPackage) {
			if i == topPackages {
				break
			}
			fmt.Printf("| %s | %.2f |\n", r.name, float64(r.bytes)/1e6)
		}
	}
	return nil
}

// sectionHolds says what the sections of a Go binary hold.
var sectionHolds = map[string]string{
	".text":      "machine code",
	".rodata":    "constants: strings, type descriptors, literal tables",
	".gopclntab": "function table (names, line numbers, stack maps); grows with the code",
	".typelink":  "type index",
	".itablink":  "interface table index",
	".noptrdata": "initialised variables without pointers",
	".data":      "initialised variables with pointers",
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func sorted(m map[string]int64) []row {
	rows := make([]row, 0, len(m))
	for k, v := range m {
		rows = append(rows, row{k, v})
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := cmp.Compare(b.bytes, a.bytes); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return rows
}

// linkerTables is the row for what the linker makes of the whole program
// (function metadata, type links, build info) rather than of one package.
const linkerTables = "(linker tables)"

// packageOf is the import path a symbol name begins with:
//
//	github.com/jackc/pgx/v5/pgconn.(*PgConn).Exec  → github.com/jackc/pgx/v5/pgconn
//	type:*github.com/redis/go-redis/v9.Client      → github.com/redis/go-redis/v9
//	go:itab.*net.TCPConn,io.Reader                 → net
//	runtime.mallocgc                               → runtime
func packageOf(name string) string {
	for _, p := range []string{"type:.eq.", "type:.namedata.", "type:.importpath.", "type:", "go:itab.", "go:string."} {
		if strings.HasPrefix(name, p) {
			name = name[len(p):]
			break
		}
	}
	if strings.HasPrefix(name, "go:") || name == "runtime.typelink" || name == "runtime.itablink" || name == "runtime.findfunctab" {
		return linkerTables
	}
	name = strings.TrimLeft(name, "*[]0123456789")
	if i := strings.IndexAny(name, "[(,"); i >= 0 {
		name = name[:i] // generic arguments, receivers, an itab's interface
	}
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

// moduleOf is the module (longest first in modules) that holds pkg, "std"
// for the standard library, or "(other)".
func moduleOf(pkg string, modules []string) string {
	if pkg == linkerTables {
		return pkg
	}
	for _, m := range modules {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return m
		}
	}
	first, _, _ := strings.Cut(pkg, "/")
	if first == "vendor" || !strings.Contains(first, ".") {
		return "std"
	}
	return "(other)"
}
