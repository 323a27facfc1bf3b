package breaker

import (
	"bytes"
	"strings"
)

// prefixes finds, among the prefixes of templates, the longest that begins a name, by walking
// the name down a radix tree of the prefixes: the cost is in the bytes of the name that the
// prefixes share, not in how many prefixes there are, so a call to a name that no rule names
// costs about the same with one template as with a thousand.
//
// Each node holds the bytes from its parent's end to its own (a piece of one of the prefixes,
// not a copy), the prefix that ends there if one does, and its children by their first byte.
// A tree of n prefixes has at most 2n+1 nodes.
//
// Up to eight prefixes are tested one by one instead, longest first: for so few, a scan costs
// less than the walk.
type prefixes struct {
	few   []string     // at most fewKeys keys, as given; nil when the tree holds them
	nodes []prefixNode // nodes[0] is the root, whose label is empty
	first *[256]int32  // the root's child by the first byte of its label; 0: none
}

// fewKeys is the most keys prefixes scans.
const fewKeys = 8

type prefixNode struct {
	label string
	val   int32  // the index of the prefix that ends here, in the order given; -1: none
	edges []byte // the first byte of each child's label
	kids  []int32
}

// newPrefixes indexes keys, which are distinct. Where they are few, they must be given longest
// first, the order they are scanned in.
func newPrefixes(keys []string) prefixes {
	if len(keys) == 0 {
		return prefixes{}
	}
	if len(keys) <= fewKeys {
		return prefixes{few: keys}
	}
	p := prefixes{nodes: []prefixNode{{val: -1}}, first: new([256]int32)}
	for i, k := range keys {
		p.insert(k, int32(i))
	}
	for j, b := range p.nodes[0].edges {
		p.first[b] = p.nodes[0].kids[j]
	}
	return p
}

// insert adds key, the v-th, splitting the node whose label key leaves partway.
func (p *prefixes) insert(key string, v int32) {
	n := int32(0)
	for key != "" {
		j := p.nodes[n].edge(key[0])
		if j < 0 {
			p.nodes = append(p.nodes, prefixNode{label: key, val: v})
			p.nodes[n].edges = append(p.nodes[n].edges, key[0])
			p.nodes[n].kids = append(p.nodes[n].kids, int32(len(p.nodes)-1))
			return
		}
		c := p.nodes[n].kids[j]
		label := p.nodes[c].label
		common := 1
		for common < len(label) && common < len(key) && label[common] == key[common] {
			common++
		}
		if common < len(label) { // key leaves label partway: a node for the part they share
			p.nodes = append(p.nodes, prefixNode{label: label[:common], val: -1, edges: []byte{label[common]},
				kids: []int32{c}})
			p.nodes[c].label = label[common:]
			c = int32(len(p.nodes) - 1)
			p.nodes[n].kids[j] = c
		}
		n, key = c, key[common:]
	}
	p.nodes[n].val = v
}

// longest returns the index of the longest of the keys that begins name, or -1 when none does.
// The root's children are found by a table, so a name that no key's first byte begins costs a
// load.
func (p *prefixes) longest(name string) int {
	if p.first != nil {
		return p.walk(name)
	}
	for i, k := range p.few {
		if strings.HasPrefix(name, k) {
			return i
		}
	}
	return -1
}

// walk is longest down the tree.
func (p *prefixes) walk(name string) int {
	best := p.nodes[0].val
	if name == "" {
		return int(best)
	}
	for n := p.first[name[0]]; n > 0; {
		node := &p.nodes[n]
		if !strings.HasPrefix(name, node.label) {
			break
		}
		if name = name[len(node.label):]; node.val >= 0 {
			best = node.val
		}
		if name == "" {
			break
		}
		j := node.edge(name[0])
		if j < 0 {
			break
		}
		n = node.kids[j]
	}
	return int(best)
}

// edge returns the index of the child whose label starts with b, or -1.
func (n *prefixNode) edge(b byte) int {
	if len(n.edges) > 16 {
		return bytes.IndexByte(n.edges, b)
	}
	for j, e := range n.edges { // a few edges: a loop costs less than a call
		if e == b {
			return j
		}
	}
	return -1
}
