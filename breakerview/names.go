package breakerview

import (
	"cmp"
	"strings"
)

// CompareNames orders names naturally: runs of digits compare as numbers, so "shard-2" comes
// before "shard-10", and the rest byte by byte. Names equal that way ("a01", "a1") compare as
// strings, so that the order is total.
func CompareNames(a, b string) int {
	x, y := a, b
	for x != "" && y != "" {
		if isDigit(x[0]) && isDigit(y[0]) {
			var dx, dy string
			dx, x = digits(x)
			dy, y = digits(y)
			if c := compareNumbers(dx, dy); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(x[0], y[0]); c != 0 {
			return c
		}
		x, y = x[1:], y[1:]
	}
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits splits s, which starts with a digit, after its run of digits.
func digits(s string) (run, rest string) {
	i := 1
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// compareNumbers compares two runs of decimal digits as the numbers they write, however long.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}
