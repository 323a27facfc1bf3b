// Command ratio reads the output of go test -bench and prints, for each benchmark and each
// peer library, the median ns/op of breaker divided by the median ns/op of the peer:
//
//	Pass serial: breaker/gobreaker = 0.31
//
// Below 1 means breaker is faster. Sub-benchmarks must be named Benchmark<Name>/<lib>, with an
// optional -N GOMAXPROCS suffix; results for different -N are kept apart, and when the input
// holds more than one -N each line says which, as in "Pass serial (cpu 2): ...".
//
// Usage:
//
//	go run ./internal/ratio results.txt
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// base prefixes the libraries every peer is compared with: breaker called by name, and
// breaker_resource called through a Resource handle.
const base = "breaker"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ratio results.txt")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratio:", err)
		os.Exit(1)
	}
	defer f.Close()
	res, err := parse(f)
	if err == nil {
		err = res.write(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratio:", err)
		os.Exit(1)
	}
}

// group is one benchmark at one GOMAXPROCS, such as BenchmarkPass at -cpu 2.
type group struct {
	bench string // "BenchmarkPass"
	cpu   int
}

// results holds every ns/op sample, by group and library, in the order first seen.
type results struct {
	groups  []group
	libs    []string
	samples map[group]map[string][]float64
}

// procsSuffix matches the "-N" that go test appends to a name when GOMAXPROCS is not 1.
var procsSuffix = regexp.MustCompile(`-([0-9]+)$`)

// parse reads benchmark result lines and skips every other line.
func parse(r io.Reader) (*results, error) {
	res := &results{samples: make(map[group]map[string][]float64)}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name, cpu := fields[0], 1
		if m := procsSuffix.FindStringSubmatch(name); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			name, cpu = strings.TrimSuffix(name, m[0]), n
		}
		bench, lib, ok := strings.Cut(name, "/")
		if !ok {
			continue
		}
		// After the name and the iteration count come value-unit pairs.
		for i := 2; i+1 < len(fields); i += 2 {
			if fields[i+1] != "ns/op" {
				continue
			}
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", fields[0], err)
			}
			res.add(group{bench, cpu}, lib, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res.groups) == 0 {
		return nil, fmt.Errorf("no Benchmark<Name>/<lib> results with ns/op in the input")
	}
	return res, nil
}

func (r *results) add(g group, lib string, v float64) {
	byLib, ok := r.samples[g]
	if !ok {
		byLib = make(map[string][]float64)
		r.samples[g] = byLib
		r.groups = append(r.groups, g)
	}
	if !slices.Contains(r.libs, lib) {
		r.libs = append(r.libs, lib)
	}
	byLib[lib] = append(byLib[lib], v)
}

// write prints one line per group, breaker variant and peer. A group without breaker results
// is an error; a variant or peer missing from a group is skipped.
func (r *results) write(w io.Writer) error {
	cpus := make(map[int]bool)
	for _, g := range r.groups {
		cpus[g.cpu] = true
	}
	for _, g := range r.groups {
		byLib := r.samples[g]
		if _, ok := byLib[base]; !ok {
			return fmt.Errorf("%s: no %s results", g.bench, base)
		}
		label := describe(g.bench)
		if len(cpus) > 1 {
			label += fmt.Sprintf(" (cpu %d)", g.cpu)
		}
		for _, ours := range r.libs {
			b, ok := byLib[ours]
			if !strings.HasPrefix(ours, base) || !ok {
				continue
			}
			for _, lib := range r.libs {
				peer, ok := byLib[lib]
				if strings.HasPrefix(lib, base) || !ok {
					continue
				}
				if _, err := fmt.Fprintf(w, "%s: %s/%s = %s\n", label, ours, lib, format(median(b)/median(peer))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// describe turns "BenchmarkPassParallel" into "Pass parallel" and "BenchmarkPass" into
// "Pass serial".
func describe(bench string) string {
	name := strings.TrimPrefix(bench, "Benchmark")
	if s, ok := strings.CutSuffix(name, "Parallel"); ok {
		return s + " parallel"
	}
	return name + " serial"
}

// median returns the median of xs, which must not be empty.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// format prints a ratio with two decimals, or three significant digits when it is below 0.1,
// so that a ratio against a much slower peer does not print as 0.00.
func format(x float64) string {
	if x < 0.1 {
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}
