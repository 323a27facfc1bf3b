package main

import (
	"strings"
	"testing"
)

func TestRatio(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{
			name: "one cpu, medians of three runs, noise lines skipped",
			give: `goos: linux
BenchmarkPass/breaker   	 1000	 100 ns/op	 0 B/op	 0 allocs/op
BenchmarkPass/breaker   	 1000	 300 ns/op	 0 B/op	 0 allocs/op
BenchmarkPass/breaker   	 1000	 200 ns/op	 0 B/op	 0 allocs/op
BenchmarkPass/gobreaker 	 1000	 400 ns/op	 0 B/op	 0 allocs/op
BenchmarkPass/gobreaker 	 1000	 900 ns/op	 0 B/op	 0 allocs/op
BenchmarkPass/gobreaker 	 1000	 500 ns/op	 0 B/op	 0 allocs/op
BenchmarkPassParallel/breaker   	 1000	 10 ns/op
BenchmarkPassParallel/hystrix   	 1000	 1000 ns/op
PASS
`,
			want: `Pass serial: breaker/gobreaker = 0.40
Pass parallel: breaker/hystrix = 0.01
`,
		},
		{
			name: "-cpu suffixes are kept apart, even medians average",
			give: `BenchmarkReject/breaker      	 1000	 50 ns/op
BenchmarkReject/breaker-2    	 1000	 30 ns/op
BenchmarkReject/breaker-2    	 1000	 50 ns/op
BenchmarkReject/resiliency   	 1000	 5 ns/op
BenchmarkReject/resiliency-2 	 1000	 20 ns/op
BenchmarkReject/resiliency-2 	 1000	 60 ns/op
BenchmarkReject/failsafe-2   	 1000	 80 ns/op
`,
			want: `Reject serial (cpu 1): breaker/resiliency = 10.00
Reject serial (cpu 2): breaker/resiliency = 1.00
Reject serial (cpu 2): breaker/failsafe = 0.50
`,
		},
		{
			name: "every breaker variant is compared with every peer",
			give: `BenchmarkPass/breaker          	 1000	 100 ns/op
BenchmarkPass/breaker_resource 	 1000	 50 ns/op
BenchmarkPass/gobreaker        	 1000	 200 ns/op
BenchmarkPass/sentinel         	 1000	 1000 ns/op
`,
			want: `Pass serial: breaker/gobreaker = 0.50
Pass serial: breaker/sentinel = 0.10
Pass serial: breaker_resource/gobreaker = 0.25
Pass serial: breaker_resource/sentinel = 0.05
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := parse(strings.NewReader(tt.give))
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			if err := res.write(&got); err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got.String(), tt.want)
			}
		})
	}
}

func TestRatioErrors(t *testing.T) {
	if _, err := parse(strings.NewReader("PASS\n")); err == nil {
		t.Error("parse of input without results: got nil error")
	}
	res, err := parse(strings.NewReader("BenchmarkPass/gobreaker 1000 5 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.write(&strings.Builder{}); err == nil {
		t.Error("write without breaker results: got nil error")
	}
}
